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

#include <fmt/format.h>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "bench_util.hpp"
#include "evaluate/trial.hpp"
#include "paper_db.hpp"
#include "search/search.hpp"
#include "split/multi_device.hpp"
#include "wstune/error.hpp"

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
  if (k.name() == "matmul")
    text = fmt::format("{}x{}x{}", n[0] * side, n[1] * side, n[2]);
  else if (k.name() == "bilinear")
    text = fmt::format("{}x{}:{}x{}", n[0] * side, n[1] * side, n[2] * side, n[3] * side);
  else if (k.name() == "sort")
    text = fmt::format("{}", n[0] * factor);
  else if (k.name() == "trapezoid")
    text = fmt::format("{}:{}", n[0] * factor, n[1]);
  else
    throw UsageError(fmt::format("no work scaling for kernel {}", k.name()));
  return k.parse_size(text);
}

struct Method {
  std::string name;  // baseline, paper, wstune
  SplitModel model{};
  unsigned dim = 0;
  std::vector<Block> blocks;
  std::vector<LocalSize> locals;
  Samples makespan;
  SplitRunResult last;  // the last round (per-device times, verdict)
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

double reduction_pct(double base, double t) {
  return base > 0 && t > 0 ? 100.0 * (base - t) / base : NAN;
}

std::string pct(double v) {
  return std::isnan(v) ? std::string("–") : fmt::format("{:+.1f}", v);
}
// The command line: bench_paper's options, --quick applied.
struct Options {
  std::string devices_text, out_dir, tag, kernels_text, db_path;
  std::map<std::string, std::string> sizes;  // base size per kernel (--quick's, then --sizes)
  std::vector<unsigned> scales;
  unsigned repeat = 5, warmup = 1, rounds = 3, budget = 16, tune_repeat = 3, refine = 2;
  double sweep_step = 0;
  bool quick = false;
};

// bench_paper's options into `desc`, bound to `o` and to the raw --sizes and --scales texts.
void describe(po::options_description& desc, Options& o, std::string& sizes_text, std::string& scales_text) {
  desc.add_options()("help,h", "help")("devices", po::value(&o.devices_text)->default_value("0:0,0:1"),
                                       "two device selectors D1,D2 (P:D, cpu, gpu, name)")(
      "out-dir", po::value(&o.out_dir)->default_value("docs/results"), "output directory")(
      "tag", po::value(&o.tag)->default_value("pocl"), "name part of the output files: paper_<tag>.{csv,json,md}")(
      "db", po::value(&o.db_path)->default_value(""), "SQLite store for runs, trials and calibrations (none if empty)")(
      "kernels", po::value(&o.kernels_text)->default_value("matmul,bilinear,sort,trapezoid"), "kernels")(
      "sizes", po::value(&sizes_text)->default_value(""), "base sizes KERNEL=SIZE,... (default: the paper's Table 3)")(
      "scales", po::value(&scales_text)->default_value("1,4,16"), "work factors over the base size (squares)")(
      "quick", "small base sizes (matmul 128, bilinear 512, sort 65536, trapezoid 65536) and fewer rounds")(
      "repeat", po::value(&o.repeat)->default_value(5), "timed split runs per method and round")(
      "rounds", po::value(&o.rounds)->default_value(3), "interleaved rounds over the three methods")(
      "warmup", po::value(&o.warmup)->default_value(1), "untimed split runs before each timed batch")(
      "budget", po::value(&o.budget)->default_value(16),
      "evaluations of each guided tune (NULL and the rule included)")(
      "tune-repeat", po::value(&o.tune_repeat)->default_value(3), "timed launches per tuning trial")(
      "refine", po::value(&o.refine)->default_value(2), "concurrent refinement rounds of the measured split")(
      "sweep", po::value(&o.sweep_step)->default_value(0),
      "also sweep the first device's share in this % step at the base size with wstune's local sizes (0: off)");
}

// --quick: the small base sizes, and fewer rounds, repetitions and evaluations where not given.
void apply_quick(Options& o, const po::variables_map& vm) {
  o.sizes = {{"matmul", "128"}, {"bilinear", "512"}, {"sort", "65536"}, {"trapezoid", "65536"}};
  if (vm["rounds"].defaulted()) o.rounds = 2;
  if (vm["repeat"].defaulted()) o.repeat = 3;
  if (vm["budget"].defaulted()) o.budget = 10;
}

// --sizes KERNEL=SIZE,... over the base sizes already set.
void parse_sizes(Options& o, const std::string& text) {
  for (const auto& kv : split_list(text, ',')) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw UsageError(fmt::format("--sizes entry '{}': write KERNEL=SIZE", kv));
    o.sizes[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
}

// The checked options; nullopt when --help printed them instead.
std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  std::string sizes_text, scales_text;
  po::options_description desc("bench_paper options");
  describe(desc, o, sizes_text, scales_text);
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return std::nullopt;
  }
  o.quick = vm.count("quick") > 0;
  if (o.quick) apply_quick(o, vm);
  parse_sizes(o, sizes_text);
  for (const auto& s : split_list(scales_text, ',')) o.scales.push_back(static_cast<unsigned>(std::stoul(s)));
  if (o.scales.empty()) throw UsageError("--scales: give at least one factor, e.g. 1,4,16");
  if (o.repeat == 0 || o.rounds == 0) throw UsageError("--repeat and --rounds must be at least 1");
  return o;
}

// The two devices --devices names; throws UsageError for any other count.
std::vector<Device> select_two(const std::string& devices_text) {
  const auto all = enumerate_devices();
  std::vector<Device> devices;
  for (const auto& s : split_list(devices_text, ',')) devices.push_back(select_device(all, s));
  if (devices.size() != 2) throw UsageError("--devices: give exactly two devices, e.g. gpu,cpu or 0:0,0:1");
  return devices;
}

// What every case shares: the options, the two devices, the store and the timings.
struct Bench {
  explicit Bench(const Options& opts)
      : o(opts),
        devices(select_two(opts.devices_text)),
        db(opts.db_path),
        timing{opts.warmup, opts.repeat},
        nulls(devices.size(), std::nullopt),
        by_rule(devices.size(), std::nullopt) {}
  const Options& o;
  const std::vector<Device> devices;
  bench::PaperDb db;
  const TimingOptions timing;            // the split runs: --warmup, --repeat
  const TimingOptions cal_timing{1, 3};  // calibration and refinement
  const std::vector<LocalSize> nulls;
  const std::vector<std::optional<LocalSize>> by_rule;
};

// One kernel at one work factor: its problem and the runner over both devices.
struct Case {
  Case(const Bench& b, const KernelSpec& spec, const Problem& problem, unsigned factor)
      : k(spec), p(problem), f(factor), runner(b.devices, spec, problem) {}
  const KernelSpec& k;
  const Problem p;
  const unsigned f;
  MultiDeviceRunner runner;
};

// The paper's two methods along `dim`: the baseline (PE-proportional, NULL
// local sizes) and its own (PE-ratio correction, the §3.2.3 rule's local sizes).
std::pair<Method, Method> paper_methods(const Bench& b, MultiDeviceRunner& runner, unsigned dim) {
  Method base_m{"baseline", SplitModel::proportional, dim, {}, b.nulls, {}, {}, {}, {}};
  base_m.blocks = model_blocks(SplitModel::proportional, runner, dim, b.nulls);
  Method paper_m{"paper", SplitModel::pe_ratio, dim, {}, {}, {}, {}, {}, {}};
  paper_m.blocks = model_blocks(SplitModel::pe_ratio, runner, dim, b.nulls);
  paper_m.locals = resolve_locals(runner, paper_m.blocks, b.by_rule, paper_local_rule);
  return {std::move(base_m), std::move(paper_m)};
}

// Tunes device `d`'s local size on the whole problem (guided, --budget
// evaluations), stores the session, adds its summary to `tuned`; the answer.
LocalSize tune_device(Bench& b, const Case& c, const std::string& kname, const Device& d, json& tuned) {
  EvaluatorConfig cfg;
  cfg.device = d.info.id();
  InProcessEvaluator ev(c.k, c.p, cfg);
  auto searcher = make_guided_searcher(1);
  TuneOptions topt;
  topt.timing = TimingOptions{1, b.o.tune_repeat};
  const TuneResult r = tune(ev, *searcher, *max_evaluations(b.o.budget), topt);
  b.db.record_tune(d.info, c.k, c.p, r);
  tuned.push_back({{"device", d.info.id()},
                   {"best", to_string(r.best.local)},
                   {"best_ms", r.best.median_ms()},
                   {"null_ms", r.baseline.median_ms()},
                   {"evaluations", r.evaluations}});
  std::cerr << fmt::format("   tuned {} on {}: {} ({:.3f} ms; NULL {:.3f} ms, {} evaluations)\n", kname, d.info.id(),
                           to_string(r.best.local), r.best.median_ms(), r.baseline.median_ms(), r.evaluations);
  return r.best.ok() ? r.best.local : LocalSize{};
}

// The measured split of `locals` from `cal`: refined over --refine concurrent
// rounds, or straight from the calibration with --refine 0.
std::vector<Block> measured_blocks(const Bench& b, MultiDeviceRunner& runner, unsigned dim,
                                   const std::vector<LocalSize>& locals, wstune::Calibration& cal) {
  return b.o.refine > 0 ? refine_measured(runner, cal, locals, b.cal_timing, b.o.refine)
                        : model_blocks(SplitModel::measured, runner, dim, locals, &cal);
}

// wstune before the selection: each device's local size tuned on the whole
// problem, then the measured split with those (its calibration stored).
Method wstune_method(Bench& b, Case& c, const std::string& kname, json& tuned) {
  Method ws{"wstune",
            SplitModel::measured,
            split_dimension(c.k.dims(), c.k.priority(), SplitDirection::auto_),
            {},
            {},
            {},
            {},
            {},
            {}};
  for (const Device& d : b.devices) ws.locals.push_back(tune_device(b, c, kname, d, tuned));
  wstune::Calibration cal = c.runner.calibrate_all(ws.dim, ws.locals, b.cal_timing);
  ws.blocks = measured_blocks(b, c.runner, ws.dim, ws.locals, cal);
  for (std::size_t i = 0; i < b.devices.size(); ++i)
    b.db.record_calibration(b.devices[i].info, c.k, to_json(cal.devices[i]));
  return ws;
}

// A split wstune's selection tries.
struct Candidate {
  std::string name;
  SplitModel model;
  unsigned dim;
  std::vector<Block> blocks;
  std::vector<LocalSize> locals;
};

// The selection's candidates, in the order they run (see choose_split).
std::vector<Candidate> split_candidates(const Bench& b, MultiDeviceRunner& runner, const Method& ws,
                                        const Method& base_m, const Method& paper_m) {
  std::vector<Candidate> cands{{"measured+tuned", SplitModel::measured, ws.dim, ws.blocks, ws.locals}};
  for (SplitModel m : {SplitModel::pe_ratio, SplitModel::proportional})
    cands.push_back(
        {std::string(to_string(m)) + "+tuned", m, ws.dim, model_blocks(m, runner, ws.dim, ws.locals), ws.locals});
  wstune::Calibration cal0 = runner.calibrate_all(ws.dim, b.nulls, b.cal_timing);
  cands.push_back(
      {"measured+null", SplitModel::measured, ws.dim, measured_blocks(b, runner, ws.dim, b.nulls, cal0), b.nulls});
  for (SplitModel m : {SplitModel::pe_ratio, SplitModel::proportional})
    cands.push_back(
        {std::string(to_string(m)) + "+null", m, ws.dim, model_blocks(m, runner, ws.dim, b.nulls), b.nulls});
  cands.push_back({"baseline", SplitModel::proportional, base_m.dim, base_m.blocks, base_m.locals});
  cands.push_back({"paper", SplitModel::pe_ratio, paper_m.dim, paper_m.blocks, paper_m.locals});
  return cands;
}

// Split-level selection, as tune() does for local sizes (it always
// measures NULL and the rule): candidates are the measured split and
// the two PE models with the tuned local sizes (direction from the
// priority), the same with NULL local sizes, and the baseline's and
// the paper's configurations themselves. Each runs concurrently once
// (a selection run, not the reported one); the fastest becomes `ws`, its name returned.
std::string choose_split(const Bench& b, MultiDeviceRunner& runner, Method& ws, const Method& base_m,
                         const Method& paper_m) {
  std::string chosen = "measured";
  double best_ms = 0;
  for (const Candidate& c : split_candidates(b, runner, ws, base_m, paper_m)) {
    const SplitRunResult sel = runner.run(c.blocks, c.locals, b.timing);
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
  return chosen;
}

// The reported runs: --rounds rounds, each running every method in turn, so
// drift hits them alike; a method keeps its first failure.
void measure_rounds(const Bench& b, MultiDeviceRunner& runner, std::vector<Method>& methods) {
  for (unsigned r = 0; r < b.o.rounds; ++r) {
    for (Method& m : methods) {
      SplitRunResult res = runner.run(m.blocks, m.locals, b.timing);
      if (!res.ok() && m.status == TrialStatus::correct) {
        m.status = res.status;
        m.error = res.error.empty() ? res.verdict.detail : res.error;
      }
      m.makespan.ms.insert(m.makespan.ms.end(), res.makespan.ms.begin(), res.makespan.ms.end());
      m.last = std::move(res);
    }
  }
}

// Stores a method's reported runs (when correct) and prints its line.
void record_method(Bench& b, const Case& c, const Method& m, const json& tuned, const std::string& chosen) {
  const std::size_t total = c.k.split_units(c.p, m.dim);
  std::vector<bench::PaperShare> shares;
  json locals = json::array();
  for (std::size_t i = 0; i < b.devices.size(); ++i) {
    const double t = i < m.last.slices.size() ? m.last.slices[i].wall.median() : 0.0;
    shares.push_back({&b.devices[i].info, share_of(m, i, total), t});
    locals.push_back(to_string(m.locals[i]));
  }
  json detail = {{"bench", "paper"},
                 {"tag", b.o.tag},
                 {"method", m.name},
                 {"scale", c.f},
                 {"direction", m.dim == 0 ? "x" : "y"},
                 {"locals", locals},
                 {"status", std::string(to_string(m.status))},
                 {"error", m.error},
                 {"samples_ms", m.makespan.ms},
                 {"makespan_min_ms", m.makespan.min()}};
  if (m.name == "wstune") detail["tuned"] = tuned, detail["chosen_split"] = chosen;
  if (m.status == TrialStatus::correct)
    b.db.record_run(c.k, c.p, std::string(to_string(m.model)), m.makespan.median(), shares, detail);
  std::cerr << fmt::format("   {:8} share {:5.1f} % locals {}/{}  {:.3f} ms {}\n", m.name, 100 * share_of(m, 0, total),
                           to_string(m.locals[0]), to_string(m.locals[1]), m.makespan.median(), to_string(m.status));
}

// --sweep: the first device's share swept with wstune's direction and local
// sizes; every correct point stored as a "sweep" run.
void record_sweep(Bench& b, Case& c, const Method& ws) {
  const auto sweep = sweep_two(c.runner, ws.dim, ws.locals, b.timing, b.o.sweep_step);
  const std::size_t total = c.k.split_units(c.p, ws.dim);
  for (const SweepPoint& pt : sweep) {
    if (!pt.result.ok()) continue;
    std::vector<bench::PaperShare> shares;
    for (std::size_t i = 0; i < b.devices.size(); ++i) {
      shares.push_back({&b.devices[i].info, static_cast<double>(pt.blocks[i].size()) / static_cast<double>(total),
                        pt.result.slices[i].wall.median()});
    }
    b.db.record_run(c.k, c.p, "sweep", pt.result.makespan.median(), shares,
                    json{{"bench", "paper"},
                         {"tag", b.o.tag},
                         {"method", "sweep"},
                         {"scale", c.f},
                         {"direction", ws.dim == 0 ? "x" : "y"},
                         {"percent_first", pt.percent_first}});
  }
}

// One kernel at `f` times the base work: the three methods prepared, wstune's
// split chosen, the interleaved rounds run and stored (and the sweep, at the first factor).
Row run_case(Bench& b, const std::string& kname, const KernelSpec& k, const Problem& base, unsigned f) {
  const Problem p = scale_problem(k, base, f);
  Row row{kname, p.text, f, k.global_size(p).count(), {}, {}};
  std::cerr << fmt::format("== {} {} ({}x the base work)\n", kname, p.text, f);
  Case c(b, k, p, f);
  // The paper's split direction: row blocks (y) for 2-D kernels.
  const unsigned paper_dim =
      split_dimension(k.dims(), k.priority(), k.dims() == 2 ? SplitDirection::y : SplitDirection::x);
  const auto [base_m, paper_m] = paper_methods(b, c.runner, paper_dim);
  json tuned = json::array();
  Method ws = wstune_method(b, c, kname, tuned);
  row.choice = choose_split(b, c.runner, ws, base_m, paper_m);
  row.methods = {base_m, paper_m, ws};
  measure_rounds(b, c.runner, row.methods);
  for (const Method& m : row.methods) record_method(b, c, m, tuned, row.choice);
  if (b.o.sweep_step > 0 && f == b.o.scales.front()) record_sweep(b, c, ws);
  return row;
}

// Every kernel of --kernels at every factor of --scales, in that order.
std::vector<Row> run_cases(Bench& b) {
  std::vector<Row> rows;
  for (const auto& kname : split_list(b.o.kernels_text, ',')) {
    const KernelSpec& k = kernel_spec(kname);
    const Problem base = b.o.sizes.count(kname) ? k.parse_size(b.o.sizes.at(kname)) : k.paper_size();
    for (unsigned f : b.o.scales) rows.push_back(run_case(b, kname, k, base, f));
  }
  return rows;
}

// ---- outputs ---------------------------------------------------------------

const std::vector<std::string> kThree{"matmul", "sort", "trapezoid"};
const std::vector<std::string> kFour{"matmul", "bilinear", "sort", "trapezoid"};

// A method's median makespan in a case; NaN when it failed or is not there.
double time_of(const Row& r, const std::string& name) {
  for (const Method& m : r.methods)
    if (m.name == name) return m.status == TrialStatus::correct ? m.makespan.median() : NAN;
  return NAN;
}

// Means of the per-case reductions over a set of kernels.
double mean_reduction(const std::vector<Row>& rows, const std::vector<std::string>& ks, const std::string& method,
                      std::optional<unsigned> scale) {
  double sum = 0;
  int n = 0;
  for (const Row& r : rows) {
    if (std::find(ks.begin(), ks.end(), r.kernel) == ks.end() || (scale && r.scale != *scale)) continue;
    const double v = reduction_pct(time_of(r, "baseline"), time_of(r, method));
    if (!std::isnan(v)) sum += v, ++n;
  }
  return n ? sum / n : NAN;
}

// A method's line of paper_<tag>.csv (`red`: its reduction against the baseline).
std::string csv_line(const Row& r, const Method& m, double red) {
  return fmt::format("{},{},{},{},{},{},{},{:.4f},{},{},{:.4f},{:.4f},{},{},{:.2f}\n", r.kernel, r.size, r.scale,
                     r.work_items, m.name, to_string(m.model), m.dim == 0 ? "x" : "y",
                     share_of(m, 0, kernel_spec(r.kernel).split_units(kernel_spec(r.kernel).parse_size(r.size), m.dim)),
                     to_string(m.locals[0]), to_string(m.locals[1]), m.makespan.median(), m.makespan.min(),
                     m.makespan.size(), to_string(m.status), red);
}

// A method's row of paper_<tag>.json (`red`: its reduction against the baseline).
json json_row(const Row& r, const Method& m, double red) {
  return {{"kernel", r.kernel},
          {"size", r.size},
          {"scale", r.scale},
          {"work_items", r.work_items},
          {"method", m.name},
          {"split_model", to_string(m.model)},
          {"choice", m.name == "wstune" ? json(r.choice) : json(nullptr)},
          {"direction", m.dim == 0 ? "x" : "y"},
          {"locals", {to_string(m.locals[0]), to_string(m.locals[1])}},
          {"blocks", {m.blocks[0].size(), m.blocks[1].size()}},
          {"makespan_median_ms", m.makespan.median()},
          {"samples_ms", m.makespan.ms},
          {"status", to_string(m.status)},
          {"error", m.error},
          {"reduction_pct", std::isnan(red) ? json(nullptr) : json(red)}};
}

// Every case's methods as CSV lines after `csv`'s header and as JSON rows.
void method_lines(const std::vector<Row>& rows, std::string& csv, json& jrows) {
  for (const Row& r : rows) {
    const double b = time_of(r, "baseline");
    for (const Method& m : r.methods) {
      const double red = reduction_pct(b, time_of(r, m.name));
      csv += csv_line(r, m, red);
      jrows.push_back(json_row(r, m, red));
    }
  }
}

// paper_<tag>.md's opening: the devices, the methods and how they were timed.
std::string md_intro(const Bench& b) {
  const DeviceInfo &d0 = b.devices[0].info, &d1 = b.devices[1].info;
  return fmt::format(
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
      b.o.tag, d0.name, d0.id(), d0.compute_units, d0.pe_per_cu, d0.total_pe(), d1.name, d1.id(), d1.compute_units,
      d1.pe_per_cu, d1.total_pe(), b.o.budget, b.o.refine, b.o.rounds, b.o.repeat);
}

// Where wstune was slower than the paper's method.
struct Verdict {
  int slower = 0, cases = 0;
  std::string slower_list;  // "kernel size (ratio× the paper's time)"; ...
};

// A case's line of the Markdown table.
std::string md_case_line(const Row& r) {
  const double b = time_of(r, "baseline"), pp = time_of(r, "paper"), w = time_of(r, "wstune");
  const KernelSpec& k = kernel_spec(r.kernel);
  const Problem p = k.parse_size(r.size);
  auto sh = [&](const Method& m) { return 100 * share_of(m, 0, k.split_units(p, m.dim)); };
  return fmt::format(
      "| {} | {} | {} | {:.3f} | {:.3f} | {:.3f} | {} | {} | {:.2f} | {}, {} | {:.0f}/{:.0f}/{:.0f} | {}, {} | {}, {} "
      "|\n",
      r.kernel, r.size, r.scale, b, pp, w, pct(reduction_pct(b, pp)), pct(reduction_pct(b, w)), w / pp, r.choice,
      r.methods[2].dim == 0 ? "x" : "y", sh(r.methods[0]), sh(r.methods[1]), sh(r.methods[2]),
      to_string(r.methods[1].locals[0]), to_string(r.methods[1].locals[1]), to_string(r.methods[2].locals[0]),
      to_string(r.methods[2].locals[1]));
}

// The Markdown table of cases; counts into `v` where wstune was slower than the paper's method.
std::string md_cases(const std::vector<Row>& rows, Verdict& v) {
  std::string md =
      "| kernel | size | × work | baseline ms | paper ms | wstune ms | paper reduction % | wstune reduction % | "
      "wstune ÷ paper | wstune choice | shares of first % (b/p/w) | local sizes paper | local sizes wstune |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const double pp = time_of(r, "paper"), w = time_of(r, "wstune");
    md += md_case_line(r);
    ++v.cases;
    if (!(w <= pp)) {
      ++v.slower;
      v.slower_list += fmt::format("{}{} {} ({:.2f}× the paper's time)", v.slower_list.empty() ? "" : "; ", r.kernel,
                                   r.size, w / pp);
    }
  }
  return md;
}

// The means' groups: all sizes, then each work factor of --scales.
std::vector<std::optional<unsigned>> mean_groups(const std::vector<unsigned>& scales) {
  std::vector<std::optional<unsigned>> v{std::nullopt};
  for (unsigned f : scales) v.push_back(f);
  return v;
}

// The Markdown table of mean reductions against the baseline; the same into `summary`.
std::string md_means(const std::vector<Row>& rows, const std::vector<unsigned>& scales, json& summary) {
  std::string md =
      "\n## Mean time reduction against the baseline\n\n"
      "| cases | paper % | wstune % | the paper reports |\n|---|---|---|---|\n";
  for (std::optional<unsigned> s : mean_groups(scales)) {
    const std::string where = s ? fmt::format("{}× work", *s) : std::string("all sizes");
    const double p3 = mean_reduction(rows, kThree, "paper", s), w3 = mean_reduction(rows, kThree, "wstune", s);
    const double p4 = mean_reduction(rows, kFour, "paper", s), w4 = mean_reduction(rows, kFour, "wstune", s);
    const double pb = mean_reduction(rows, {"bilinear"}, "paper", s),
                 wb = mean_reduction(rows, {"bilinear"}, "wstune", s);
    md += fmt::format("| matmul, sort, trapezoid — {} | {} | {} | 47 |\n", where, pct(p3), pct(w3));
    md += fmt::format("| all four — {} | {} | {} | 11 |\n", where, pct(p4), pct(w4));
    md += fmt::format("| bilinear — {} | {} | {} | −85 (time +85 %) |\n", where, pct(pb), pct(wb));
    auto num = [](double v) { return std::isnan(v) ? json(nullptr) : json(v); };
    summary[s ? fmt::format("scale_{}", *s) : std::string("all")] = {
        {"paper_three", num(p3)}, {"wstune_three", num(w3)},   {"paper_all", num(p4)},
        {"wstune_all", num(w4)},  {"paper_bilinear", num(pb)}, {"wstune_bilinear", num(wb)}};
  }
  return md;
}

// The Markdown targets (`w3`: wstune's mean reduction over matmul, sort and trapezoid) and the closing note.
std::string md_targets(const Verdict& v, double w3, const std::string& tag) {
  std::string md = "\n## Targets\n\n";
  md += fmt::format(
      "- wstune at least as fast as the paper's method on every case: **{}** (at least as fast in {} of {} cases{}).\n",
      v.slower == 0 ? "met" : "missed", v.cases - v.slower, v.cases,
      v.slower ? fmt::format("; slower: {}", v.slower_list) : std::string());
  md += fmt::format(
      "- mean time reduction against the baseline over matmul, sort and trapezoid ≥ 47 %: **{}** "
      "(wstune {} %{}).\n",
      !std::isnan(w3) && w3 >= 47 ? "met" : "missed", pct(w3),
      !std::isnan(w3) && w3 < 47 ? fmt::format(", {:.1f} points short", 47 - w3) : std::string());
  md +=
      "\nThe analysis of these numbers (why targets are met or missed, noise, what the devices are) is in "
      "docs/report.md, section \"Results\". Raw samples: paper_" +
      tag + ".json.\n";
  return md;
}

// paper_<tag>.json: the devices, the options, every row, the means and the targets.
json json_document(const Bench& b, const json& jrows, const json& summary, const Verdict& v, double w3) {
  const Options& o = b.o;
  const auto& devices = b.devices;
  return {{"tag", o.tag},
          {"devices",
           {{{"id", devices[0].info.id()}, {"name", devices[0].info.name}, {"total_pe", devices[0].info.total_pe()}},
            {{"id", devices[1].info.id()}, {"name", devices[1].info.name}, {"total_pe", devices[1].info.total_pe()}}}},
          {"options",
           {{"quick", o.quick},
            {"repeat", o.repeat},
            {"rounds", o.rounds},
            {"warmup", o.warmup},
            {"budget", o.budget},
            {"tune_repeat", o.tune_repeat},
            {"refine", o.refine},
            {"scales", o.scales}}},
          {"rows", jrows},
          {"summary", summary},
          {"targets",
           {{"wstune_not_slower_than_paper", v.slower == 0},
            {"slower_cases", v.slower},
            {"wstune_three_mean_reduction_pct", std::isnan(w3) ? json(nullptr) : json(w3)},
            {"three_mean_target_pct", 47}}}};
}

// Writes paper_<tag>.csv, .json and .md into --out-dir and prints the Markdown.
void write_outputs(const Bench& b, const std::vector<Row>& rows) {
  std::string csv =
      "kernel,size,scale,work_items,method,split_model,direction,share_first,local_first,local_second,"
      "makespan_median_ms,makespan_min_ms,samples,status,reduction_pct\n";
  json jrows = json::array();
  method_lines(rows, csv, jrows);
  Verdict v;
  std::string md = md_intro(b) + md_cases(rows, v);
  json summary = json::object();
  md += md_means(rows, b.o.scales, summary);
  const double w3 = mean_reduction(rows, kThree, "wstune", std::nullopt);
  md += md_targets(v, w3, b.o.tag);
  const json doc = json_document(b, jrows, summary, v, w3);
  write(fmt::format("{}/paper_{}.csv", b.o.out_dir, b.o.tag), csv);
  write(fmt::format("{}/paper_{}.json", b.o.out_dir, b.o.tag), doc.dump(2) + "\n");
  write(fmt::format("{}/paper_{}.md", b.o.out_dir, b.o.tag), md);
  std::cout << md;
}

int bench_main(int argc, char** argv) {
  const std::optional<Options> options = parse_options(argc, argv);
  if (!options) return 0;
  Bench b(*options);
  write_outputs(b, run_cases(b));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return wstune::bench::guarded_main("bench_paper", [&] { return bench_main(argc, argv); });
}
