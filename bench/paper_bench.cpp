// bench_paper: the paper's §4 comparison reproduced on two unlike devices.
// For each kernel (matmul, bilinear, sort, trapezoid) at the paper's Table 3
// size and at 4x and 16x the work, three methods, each the median makespan
// of verified split runs:
//   baseline — PE-proportional split along y (the paper's row blocks), NULL
//              local size (the paper's baseline, §4);
//   paper    — the PE-ratio correction split along y (§3.1) and the §3.2.3
//              rule local sizes on each device's slice;
//   wstune   — guided tune() of the local size per device on the whole
//              problem, then the measured split (calibration + concurrent
//              refinement) with the split direction chosen from the priority.
// The three methods' final runs are interleaved round by round so that drift
// (thermal, other processes) hits them alike. Writes
//   <out>/paper_<tag>.csv, .json, .md
// and, with --db, stores split runs, tuning sessions/trials and calibrations
// for `wstune report`. Targets (reported, never asserted): wstune at least as
// fast as the paper's method on every kernel; the mean time reduction against
// the baseline over matmul, sort and trapezoid at least the paper's 47 %.
//
// Work scaling (factor f = 4 or 16 of the work-items; docs/report.md):
//   matmul    M x N x K -> (M·√f) x (N·√f) x K   (f× output elements and f× ops)
//   bilinear  input and output sides × √f         (f× output pixels)
//   sort      n -> f·n                             (ops grow f·(1+log f/log n)²)
//   trapezoid n work-items -> f·n, steps per work-item unchanged
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "paper_db.hpp"
#include "bench_util.hpp"
#include "wstune/error.hpp"
#include "wstune/multi_device.hpp"
#include "wstune/search.hpp"
#include "wstune/trial.hpp"

namespace po = boost::program_options;
using namespace wstune;
using nlohmann::json;

namespace {

using bench::split_list;
using bench::write;

// The problem with `factor` times the work-items of `base` (see the file comment).
Problem scale_problem(const KernelSpec& k, const Problem& base, unsigned factor) {
  if (factor == 1) return base;
  const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(factor))));
  if (side * side != factor) throw UsageError(fmt::format("--scales {}: use squares (1, 4, 16, 64)", factor));
  const auto& n = base.n;
  std::string text;
  if (k.name() == "matmul") text = fmt::format("{}x{}x{}", n[0] * side, n[1] * side, n[2]);
  else if (k.name() == "bilinear") text = fmt::format("{}x{}:{}x{}", n[0] * side, n[1] * side, n[2] * side, n[3] * side);
  else if (k.name() == "sort") text = fmt::format("{}", n[0] * factor);
  else if (k.name() == "trapezoid") text = fmt::format("{}:{}", n[0] * factor, n[1]);
  else throw UsageError(fmt::format("no work scaling for kernel {}", k.name()));
  return k.parse_size(text);
}

struct Method {
  std::string name;          // baseline, paper, wstune
  SplitModel model{};
  unsigned dim = 0;
  std::vector<Block> blocks;
  std::vector<LocalSize> locals;
  Samples makespan;
  SplitRunResult last;       // the last round (per-device times, verdict)
  TrialStatus status = TrialStatus::correct;
  std::string error;
};

struct Row {
  std::string kernel, size;
  unsigned scale = 1;
  std::size_t work_items = 0;
  std::string choice;  // wstune's selected candidate
  std::vector<Method> methods;
};

double share_of(const Method& m, std::size_t i, std::size_t total) {
  return total ? static_cast<double>(m.blocks[i].size()) / static_cast<double>(total) : 0.0;
}

double reduction_pct(double base, double t) { return base > 0 && t > 0 ? 100.0 * (base - t) / base : NAN; }

std::string pct(double v) { return std::isnan(v) ? std::string("–") : fmt::format("{:+.1f}", v); }

int bench_main(int argc, char** argv) {
  std::string devices_text, out_dir, tag, sizes_text, kernels_text, scales_text, db_path;
  unsigned repeat = 5, warmup = 1, rounds = 3, budget = 16, tune_repeat = 3, refine = 2;
  double sweep_step = 0;
  po::options_description desc("bench_paper options");
  desc.add_options()("help,h", "help")
      ("devices", po::value(&devices_text)->default_value("0:0,0:1"), "two device selectors D1,D2 (P:D, cpu, gpu, name)")
      ("out-dir", po::value(&out_dir)->default_value("docs/results"), "output directory")
      ("tag", po::value(&tag)->default_value("pocl"), "name part of the output files: paper_<tag>.{csv,json,md}")
      ("db", po::value(&db_path)->default_value(""), "SQLite store for runs, trials and calibrations (none if empty)")
      ("kernels", po::value(&kernels_text)->default_value("matmul,bilinear,sort,trapezoid"), "kernels")
      ("sizes", po::value(&sizes_text)->default_value(""), "base sizes KERNEL=SIZE,... (default: the paper's Table 3)")
      ("scales", po::value(&scales_text)->default_value("1,4,16"), "work factors over the base size (squares)")
      ("quick", "small base sizes (matmul 128, bilinear 512, sort 65536, trapezoid 65536) and fewer rounds")
      ("repeat", po::value(&repeat)->default_value(5), "timed split runs per method and round")
      ("rounds", po::value(&rounds)->default_value(3), "interleaved rounds over the three methods")
      ("warmup", po::value(&warmup)->default_value(1), "untimed split runs before each timed batch")
      ("budget", po::value(&budget)->default_value(16), "evaluations of each guided tune (NULL and the rule included)")
      ("tune-repeat", po::value(&tune_repeat)->default_value(3), "timed launches per tuning trial")
      ("refine", po::value(&refine)->default_value(2), "concurrent refinement rounds of the measured split")
      ("sweep", po::value(&sweep_step)->default_value(0),
       "also sweep the first device's share in this % step at the base size with wstune's local sizes (0: off)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  const bool quick = vm.count("quick") > 0;
  std::map<std::string, std::string> sizes;
  if (quick) {
    sizes = {{"matmul", "128"}, {"bilinear", "512"}, {"sort", "65536"}, {"trapezoid", "65536"}};
    if (vm["rounds"].defaulted()) rounds = 2;
    if (vm["repeat"].defaulted()) repeat = 3;
    if (vm["budget"].defaulted()) budget = 10;
  }
  for (const auto& kv : split_list(sizes_text, ',')) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw UsageError(fmt::format("--sizes entry '{}': write KERNEL=SIZE", kv));
    sizes[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<unsigned> scales;
  for (const auto& s : split_list(scales_text, ',')) scales.push_back(static_cast<unsigned>(std::stoul(s)));
  if (scales.empty()) throw UsageError("--scales: give at least one factor, e.g. 1,4,16");
  if (repeat == 0 || rounds == 0) throw UsageError("--repeat and --rounds must be at least 1");

  const auto all = enumerate_devices();
  std::vector<Device> devices;
  for (const auto& s : split_list(devices_text, ',')) devices.push_back(select_device(all, s));
  if (devices.size() != 2) throw UsageError("--devices: give exactly two devices, e.g. gpu,cpu or 0:0,0:1");
  bench::PaperDb db(db_path);
  const TimingOptions timing{warmup, repeat};
  const TimingOptions cal_timing{1, 3};
  const std::vector<LocalSize> nulls(devices.size(), std::nullopt);
  const std::vector<std::optional<LocalSize>> by_rule(devices.size(), std::nullopt);

  std::vector<Row> rows;
  for (const auto& kname : split_list(kernels_text, ',')) {
    const KernelSpec& k = kernel_spec(kname);
    const Problem base = sizes.count(kname) ? k.parse_size(sizes[kname]) : k.paper_size();
    for (unsigned f : scales) {
      const Problem p = scale_problem(k, base, f);
      Row row{kname, p.text, f, k.global_size(p).count(), {}, {}};
      std::cerr << fmt::format("== {} {} ({}x the base work)\n", kname, p.text, f);
      MultiDeviceRunner runner(devices, k, p);
      // The paper's split direction: row blocks (y) for 2-D kernels.
      const unsigned paper_dim = split_dimension(k.dims(), k.priority(), k.dims() == 2 ? SplitDirection::y : SplitDirection::x);
      Method base_m{"baseline", SplitModel::proportional, paper_dim, {}, nulls, {}, {}, {}, {}};
      base_m.blocks = model_blocks(SplitModel::proportional, runner, paper_dim, nulls);
      Method paper_m{"paper", SplitModel::pe_ratio, paper_dim, {}, {}, {}, {}, {}, {}};
      paper_m.blocks = model_blocks(SplitModel::pe_ratio, runner, paper_dim, nulls);
      paper_m.locals = resolve_locals(runner, paper_m.blocks, by_rule, paper_local_rule);

      // wstune: tune each device's local size on the whole problem.
      Method ws{"wstune", SplitModel::measured, split_dimension(k.dims(), k.priority(), SplitDirection::auto_),
                {}, {}, {}, {}, {}, {}};
      json tuned = json::array();
      for (std::size_t i = 0; i < devices.size(); ++i) {
        EvaluatorConfig cfg;
        cfg.device = devices[i].info.id();
        InProcessEvaluator ev(k, p, cfg);
        auto searcher = make_guided_searcher(1);
        TuneOptions topt;
        topt.timing = TimingOptions{1, tune_repeat};
        const TuneResult r = tune(ev, *searcher, *max_evaluations(budget), topt);
        db.record_tune(devices[i].info, k, p, r);
        ws.locals.push_back(r.best.ok() ? r.best.local : LocalSize{});
        tuned.push_back({{"device", devices[i].info.id()}, {"best", to_string(r.best.local)},
                         {"best_ms", r.best.median_ms()}, {"null_ms", r.baseline.median_ms()},
                         {"evaluations", r.evaluations}});
        std::cerr << fmt::format("   tuned {} on {}: {} ({:.3f} ms; NULL {:.3f} ms, {} evaluations)\n", kname,
                                 devices[i].info.id(), to_string(r.best.local), r.best.median_ms(),
                                 r.baseline.median_ms(), r.evaluations);
      }
      wstune::Calibration cal = runner.calibrate_all(ws.dim, ws.locals, cal_timing);
      ws.blocks = refine > 0 ? refine_measured(runner, cal, ws.locals, cal_timing, refine)
                             : model_blocks(SplitModel::measured, runner, ws.dim, ws.locals, &cal);
      for (std::size_t i = 0; i < devices.size(); ++i) db.record_calibration(devices[i].info, k, to_json(cal.devices[i]));
      // Split-level selection, as tune() does for local sizes (it always
      // measures NULL and the rule): candidates are the measured split and
      // the two PE models with the tuned local sizes (direction from the
      // priority), the same with NULL local sizes, and the baseline's and
      // the paper's configurations themselves. Each runs concurrently once
      // (a selection run, not the reported one); the fastest is wstune's answer.
      std::string chosen = "measured";
      {
        struct Cand {
          std::string name;
          SplitModel model;
          unsigned dim;
          std::vector<Block> blocks;
          std::vector<LocalSize> locals;
        };
        std::vector<Cand> cands{{"measured+tuned", SplitModel::measured, ws.dim, ws.blocks, ws.locals}};
        for (SplitModel m : {SplitModel::pe_ratio, SplitModel::proportional})
          cands.push_back({std::string(to_string(m)) + "+tuned", m, ws.dim, model_blocks(m, runner, ws.dim, ws.locals), ws.locals});
        wstune::Calibration cal0 = runner.calibrate_all(ws.dim, nulls, cal_timing);
        cands.push_back({"measured+null", SplitModel::measured, ws.dim,
                         refine > 0 ? refine_measured(runner, cal0, nulls, cal_timing, refine)
                                    : model_blocks(SplitModel::measured, runner, ws.dim, nulls, &cal0),
                         nulls});
        for (SplitModel m : {SplitModel::pe_ratio, SplitModel::proportional})
          cands.push_back({std::string(to_string(m)) + "+null", m, ws.dim, model_blocks(m, runner, ws.dim, nulls), nulls});
        cands.push_back({"baseline", SplitModel::proportional, base_m.dim, base_m.blocks, base_m.locals});
        cands.push_back({"paper", SplitModel::pe_ratio, paper_m.dim, paper_m.blocks, paper_m.locals});
        double best_ms = 0;
        for (const Cand& c : cands) {
          const SplitRunResult sel = runner.run(c.blocks, c.locals, timing);
          std::cerr << fmt::format("   wstune candidate {:18} {:.3f} ms {}\n", c.name, sel.makespan.median(),
                                   to_string(sel.status));
          if (sel.ok() && (best_ms == 0 || sel.makespan.median() < best_ms)) {
            best_ms = sel.makespan.median();
            chosen = c.name;
            ws.model = c.model;
            ws.dim = c.dim;
            ws.blocks = c.blocks;
            ws.locals = c.locals;
          }
        }
      }
      row.methods = {base_m, paper_m, ws};
      row.choice = chosen;
      for (unsigned r = 0; r < rounds; ++r) {
        for (Method& m : row.methods) {
          SplitRunResult res = runner.run(m.blocks, m.locals, timing);
          if (!res.ok() && m.status == TrialStatus::correct) {
            m.status = res.status;
            m.error = res.error.empty() ? res.verdict.detail : res.error;
          }
          m.makespan.ms.insert(m.makespan.ms.end(), res.makespan.ms.begin(), res.makespan.ms.end());
          m.last = std::move(res);
        }
      }
      for (const Method& m : row.methods) {
        const std::size_t total = k.split_units(p, m.dim);
        std::vector<bench::PaperShare> shares;
        json locals = json::array();
        for (std::size_t i = 0; i < devices.size(); ++i) {
          const double t = i < m.last.slices.size() ? m.last.slices[i].wall.median() : 0.0;
          shares.push_back({&devices[i].info, share_of(m, i, total), t});
          locals.push_back(to_string(m.locals[i]));
        }
        json detail = {{"bench", "paper"}, {"tag", tag}, {"method", m.name}, {"scale", f},
                       {"direction", m.dim == 0 ? "x" : "y"}, {"locals", locals},
                       {"status", std::string(to_string(m.status))}, {"error", m.error},
                       {"samples_ms", m.makespan.ms}, {"makespan_min_ms", m.makespan.min()}};
        if (m.name == "wstune") detail["tuned"] = tuned, detail["chosen_split"] = chosen;
        if (m.status == TrialStatus::correct) db.record_run(k, p, std::string(to_string(m.model)), m.makespan.median(), shares, detail);
        std::cerr << fmt::format("   {:8} share {:5.1f} % locals {}/{}  {:.3f} ms {}\n", m.name,
                                 100 * share_of(m, 0, total), to_string(m.locals[0]), to_string(m.locals[1]),
                                 m.makespan.median(), to_string(m.status));
      }
      if (sweep_step > 0 && f == scales.front()) {
        const auto sweep = sweep_two(runner, ws.dim, ws.locals, TimingOptions{warmup, repeat}, sweep_step);
        const std::size_t total = k.split_units(p, ws.dim);
        for (const SweepPoint& pt : sweep) {
          if (!pt.result.ok()) continue;
          std::vector<bench::PaperShare> shares;
          for (std::size_t i = 0; i < devices.size(); ++i) {
            shares.push_back({&devices[i].info,
                              static_cast<double>(pt.blocks[i].size()) / static_cast<double>(total),
                              pt.result.slices[i].wall.median()});
          }
          db.record_run(k, p, "sweep", pt.result.makespan.median(), shares,
                        json{{"bench", "paper"}, {"tag", tag}, {"method", "sweep"}, {"scale", f},
                             {"direction", ws.dim == 0 ? "x" : "y"}, {"percent_first", pt.percent_first}});
        }
      }
      rows.push_back(std::move(row));
    }
  }

  // ---- outputs -------------------------------------------------------------
  auto time_of = [](const Row& r, const std::string& name) -> double {
    for (const Method& m : r.methods)
      if (m.name == name) return m.status == TrialStatus::correct ? m.makespan.median() : NAN;
    return NAN;
  };
  std::string csv =
      "kernel,size,scale,work_items,method,split_model,direction,share_first,local_first,local_second,"
      "makespan_median_ms,makespan_min_ms,samples,status,reduction_pct\n";
  json jrows = json::array();
  for (const Row& r : rows) {
    const double b = time_of(r, "baseline");
    for (const Method& m : r.methods) {
      const double t = time_of(r, m.name);
      csv += fmt::format("{},{},{},{},{},{},{},{:.4f},{},{},{:.4f},{:.4f},{},{},{:.2f}\n", r.kernel, r.size, r.scale,
                         r.work_items, m.name, to_string(m.model), m.dim == 0 ? "x" : "y",
                         share_of(m, 0, kernel_spec(r.kernel).split_units(kernel_spec(r.kernel).parse_size(r.size), m.dim)),
                         to_string(m.locals[0]), to_string(m.locals[1]), m.makespan.median(), m.makespan.min(),
                         m.makespan.size(), to_string(m.status), reduction_pct(b, t));
      jrows.push_back({{"kernel", r.kernel}, {"size", r.size}, {"scale", r.scale}, {"work_items", r.work_items},
                       {"method", m.name}, {"split_model", to_string(m.model)},
                       {"choice", m.name == "wstune" ? json(r.choice) : json(nullptr)}, {"direction", m.dim == 0 ? "x" : "y"},
                       {"locals", {to_string(m.locals[0]), to_string(m.locals[1])}},
                       {"blocks", {m.blocks[0].size(), m.blocks[1].size()}},
                       {"makespan_median_ms", m.makespan.median()}, {"samples_ms", m.makespan.ms},
                       {"status", to_string(m.status)}, {"error", m.error},
                       {"reduction_pct", std::isnan(reduction_pct(b, t)) ? json(nullptr) : json(reduction_pct(b, t))}});
    }
  }
  // Means of the per-case reductions over a set of kernels.
  auto mean_red = [&](const std::vector<std::string>& ks, const std::string& method, std::optional<unsigned> scale) {
    double sum = 0;
    int n = 0;
    for (const Row& r : rows) {
      if (std::find(ks.begin(), ks.end(), r.kernel) == ks.end() || (scale && r.scale != *scale)) continue;
      const double v = reduction_pct(time_of(r, "baseline"), time_of(r, method));
      if (!std::isnan(v)) sum += v, ++n;
    }
    return n ? sum / n : NAN;
  };
  const std::vector<std::string> three{"matmul", "sort", "trapezoid"};
  const std::vector<std::string> four{"matmul", "bilinear", "sort", "trapezoid"};

  std::string md = fmt::format(
      "# The paper's comparison reproduced ({})\n\n"
      "Devices: first = {} ({}, {} CU × {} PE = {} PEs), second = {} ({}, {} CU × {} PE = {} PEs).\n"
      "Methods: **baseline** = PE-proportional split along y + NULL local size (the paper's baseline); "
      "**paper** = PE-ratio correction split along y (§3.1) + §3.2.3 rule local sizes; **wstune** = guided "
      "tune of each device's local size on the whole problem ({} evaluations, NULL and the rule included) + "
      "measured split (calibration, {} concurrent refinement rounds), direction from the priority; then, as tune() "
      "always measures NULL and the rule, a selection among the measured, PE-ratio and PE-proportional splits "
      "with the tuned and with NULL local sizes and the baseline's and the paper's configurations (one concurrent "
      "selection run each, not the reported one); the fastest is kept (column \"wstune choice\").\n"
      "Times: median makespan (wall clock from starting both devices to the last read-back: upload + kernel + "
      "read-back, verified against the CPU reference) of {} rounds × {} runs, the three methods interleaved "
      "round by round. Reduction = (baseline − method) ÷ baseline; positive is faster.\n"
      "Work scaling: matmul M×N×K → (2M)×(2N)×K (4×) and (4M)×(4N)×K (16×); bilinear sides × 2 / × 4; sort "
      "and trapezoid n × 4 / × 16.\n\n",
      tag, devices[0].info.name, devices[0].info.id(), devices[0].info.compute_units, devices[0].info.pe_per_cu,
      devices[0].info.total_pe(), devices[1].info.name, devices[1].info.id(), devices[1].info.compute_units,
      devices[1].info.pe_per_cu, devices[1].info.total_pe(), budget, refine, rounds, repeat);
  md += "| kernel | size | × work | baseline ms | paper ms | wstune ms | paper reduction % | wstune reduction % | "
        "wstune ÷ paper | wstune choice | shares of first % (b/p/w) | local sizes paper | local sizes wstune |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  int slower = 0, cases = 0;
  std::string slower_list;
  for (const Row& r : rows) {
    const double b = time_of(r, "baseline"), pp = time_of(r, "paper"), w = time_of(r, "wstune");
    const KernelSpec& k = kernel_spec(r.kernel);
    const Problem p = k.parse_size(r.size);
    auto sh = [&](const Method& m) { return 100 * share_of(m, 0, k.split_units(p, m.dim)); };
    md += fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {} | {} | {:.2f} | {}, {} | {:.0f}/{:.0f}/{:.0f} | {}, {} | {}, {} |\n",
                      r.kernel, r.size, r.scale, b, pp, w, pct(reduction_pct(b, pp)), pct(reduction_pct(b, w)), w / pp,
                      r.choice, r.methods[2].dim == 0 ? "x" : "y",
                      sh(r.methods[0]), sh(r.methods[1]), sh(r.methods[2]), to_string(r.methods[1].locals[0]),
                      to_string(r.methods[1].locals[1]), to_string(r.methods[2].locals[0]),
                      to_string(r.methods[2].locals[1]));
    ++cases;
    if (!(w <= pp)) {
      ++slower;
      slower_list += fmt::format("{}{} {} ({:.2f}× the paper's time)", slower_list.empty() ? "" : "; ", r.kernel,
                                 r.size, w / pp);
    }
  }
  md += "\n## Mean time reduction against the baseline\n\n"
        "| cases | paper % | wstune % | the paper reports |\n|---|---|---|---|\n";
  json summary = json::object();
  for (std::optional<unsigned> s : [&] {
         std::vector<std::optional<unsigned>> v{std::nullopt};
         for (unsigned f : scales) v.push_back(f);
         return v;
       }()) {
    const std::string where = s ? fmt::format("{}× work", *s) : std::string("all sizes");
    const double p3 = mean_red(three, "paper", s), w3 = mean_red(three, "wstune", s);
    const double p4 = mean_red(four, "paper", s), w4 = mean_red(four, "wstune", s);
    const double pb = mean_red({"bilinear"}, "paper", s), wb = mean_red({"bilinear"}, "wstune", s);
    md += fmt::format("| matmul, sort, trapezoid — {} | {} | {} | 47 |\n", where, pct(p3), pct(w3));
    md += fmt::format("| all four — {} | {} | {} | 11 |\n", where, pct(p4), pct(w4));
    md += fmt::format("| bilinear — {} | {} | {} | −85 (time +85 %) |\n", where, pct(pb), pct(wb));
    auto num = [](double v) { return std::isnan(v) ? json(nullptr) : json(v); };
    summary[s ? fmt::format("scale_{}", *s) : std::string("all")] = {
        {"paper_three", num(p3)}, {"wstune_three", num(w3)}, {"paper_all", num(p4)},
        {"wstune_all", num(w4)},  {"paper_bilinear", num(pb)}, {"wstune_bilinear", num(wb)}};
  }
  const double w3 = mean_red(three, "wstune", std::nullopt);
  md += "\n## Targets\n\n";
  md += fmt::format("- wstune at least as fast as the paper's method on every case: **{}** (at least as fast in {} of {} cases{}).\n",
                    slower == 0 ? "met" : "missed", cases - slower, cases,
                    slower ? fmt::format("; slower: {}", slower_list) : std::string());
  md += fmt::format("- mean time reduction against the baseline over matmul, sort and trapezoid ≥ 47 %: **{}** "
                    "(wstune {} %{}).\n",
                    !std::isnan(w3) && w3 >= 47 ? "met" : "missed", pct(w3),
                    !std::isnan(w3) && w3 < 47 ? fmt::format(", {:.1f} points short", 47 - w3) : std::string());
  md += "\nThe analysis of these numbers (why targets are met or missed, noise, what the devices are) is in "
        "docs/report.md, section \"Results\". Raw samples: paper_" + tag + ".json.\n";
  json doc = {{"tag", tag},
              {"devices", {{{"id", devices[0].info.id()}, {"name", devices[0].info.name}, {"total_pe", devices[0].info.total_pe()}},
                           {{"id", devices[1].info.id()}, {"name", devices[1].info.name}, {"total_pe", devices[1].info.total_pe()}}}},
              {"options", {{"quick", quick}, {"repeat", repeat}, {"rounds", rounds}, {"warmup", warmup},
                           {"budget", budget}, {"tune_repeat", tune_repeat}, {"refine", refine}, {"scales", scales}}},
              {"rows", jrows},
              {"summary", summary},
              {"targets", {{"wstune_not_slower_than_paper", slower == 0}, {"slower_cases", slower},
                           {"wstune_three_mean_reduction_pct", std::isnan(w3) ? json(nullptr) : json(w3)},
                           {"three_mean_target_pct", 47}}}};
  write(fmt::format("{}/paper_{}.csv", out_dir, tag), csv);
  write(fmt::format("{}/paper_{}.json", out_dir, tag), doc.dump(2) + "\n");
  write(fmt::format("{}/paper_{}.md", out_dir, tag), md);
  std::cout << md;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return wstune::bench::guarded_main("bench_paper", [&] { return bench_main(argc, argv); });
}
