// bench_split: for each kernel, the makespan of every split model on two
// unlike devices against the oracle of a sweep (5 % steps, then 1 % near the
// best), and each device alone. The sweep gives the oracle's split and the
// curve; the comparison itself is measured afterwards, interleaved: in each
// of --rounds rounds every distinct split (oracle, each device alone, each
// model) runs once (warm-up + --round-repeat timed rounds, median), in an
// order rotated from round to round, and each method's makespan is the median
// of its round medians. Identical splits are measured once and compare equal;
// drift between phases (sweep, calibration, later runs) hits all methods alike.
// Writes CSV + Markdown + SVG:
//   <out>/split_<tag>.csv, <out>/split_<tag>.md,
//   <out>/split_<tag>_<kernel>_sweep.csv, <out>/split_<tag>_<kernel>.svg
// Targets (checked and reported, never asserted): measured within 5 % of the
// oracle makespan and never worse than the better device alone.
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "bench_util.hpp"
#include "wstune/error.hpp"
#include "wstune/multi_device.hpp"
#include "wstune/split_refine.hpp"

namespace po = boost::program_options;
using namespace wstune;

namespace {

using bench::split_list;
using bench::write;

// One distinct split and its interleaved measurements.
struct Candidate {
  std::vector<Block> blocks;
  std::vector<double> round_ms;  // median makespan of each round that ran correctly
  std::string status = "correct";
  std::string error;
  [[nodiscard]] double median() const { return Samples{round_ms}.median(); }
  // Interquartile range of the round medians ÷ their median (the noise).
  [[nodiscard]] double spread() const { return Samples{round_ms}.relative_iqr(); }
};

// What the measured model cost.
struct Cost {
  std::size_t cal_slices = 0, cal_runs = 0, refine_points = 0, refine_confirms = 0, refine_rounds = 0;
  double cal_ms = 0, refine_ms = 0;
};

struct Method {
  std::string name;
  std::size_t candidate = 0;  // index into the candidates
  std::optional<double> sweep_ms;
  std::optional<Cost> cost;
};

struct Row {
  std::string kernel, size, method, status, note;
  double pct_first = 0, makespan = 0, spread = 0, oracle = 0, best_alone = 0;
  std::size_t units_first = 0, rounds = 0;
  std::optional<double> sweep_ms;
  std::optional<Cost> cost;
};

std::string opt_ms(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : "–"; }
std::string ratio(double a, double b) { return a > 0 && b > 0 ? fmt::format("{:.3f}", a / b) : "–"; }

int bench_main(int argc, char** argv) {
  std::string devices_text, out_dir, tag, sizes_text, kernels_text;
  unsigned repeat = 5, warmup = 1, rounds = 7, round_repeat = 3, refine_points = 8, refine_repeat = 5;
  double step = 5, fine = 1, cal_cap_ms = 250, refine_min_ms = 20, round_min_ms = 10;
  po::options_description desc("bench_split options");
  desc.add_options()("help,h", "help")
      ("devices", po::value(&devices_text)->default_value("0:0,0:1"), "two device selectors D1,D2")
      ("out-dir", po::value(&out_dir)->default_value("docs/results"), "output directory")
      ("tag", po::value(&tag)->default_value("pocl"), "name part of the output files")
      ("kernels", po::value(&kernels_text)->default_value("matmul,bilinear,sort,trapezoid"), "kernels")
      ("sizes", po::value(&sizes_text)->default_value(""), "sizes KERNEL=SIZE,... (default: the paper's)")
      ("repeat", po::value(&repeat)->default_value(5), "timed rounds per sweep point and calibration slice")
      ("warmup", po::value(&warmup)->default_value(1), "untimed rounds per sweep point, slice, probe and round")
      ("step", po::value(&step)->default_value(5), "coarse sweep step (%)")
      ("fine", po::value(&fine)->default_value(1), "fine sweep step near the best (%)")
      ("rounds", po::value(&rounds)->default_value(7), "interleaved rounds of the comparison")
      ("round-repeat", po::value(&round_repeat)->default_value(3), "timed runs per split and round")
      ("refine-points", po::value(&refine_points)->default_value(8), "measured model: splits the refinement may measure")
      ("refine-repeat", po::value(&refine_repeat)->default_value(5), "measured model: timed runs per refinement probe")
      ("refine-min-ms", po::value(&refine_min_ms)->default_value(20),
       "measured model: more runs per probe until they sum to MS (at most 50; 0: off)")
      ("round-min-ms", po::value(&round_min_ms)->default_value(10),
       "comparison: more runs per split and round until they sum to MS (at most 30; 0: off)")
      ("calibration-cap-ms", po::value(&cal_cap_ms)->default_value(250),
       "measured model: cap on one calibration slice's time (CalibrationBudget; 0: no cap)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (!(refine_min_ms >= 0) || !(round_min_ms >= 0)) throw UsageError("--refine-min-ms and --round-min-ms: give 0 (off) or a positive number of ms");
  if (rounds == 0 || round_repeat == 0 || repeat == 0 || refine_repeat == 0) {
    throw UsageError("--rounds, --round-repeat, --repeat and --refine-repeat must be at least 1");
  }
  std::map<std::string, std::string> sizes;
  for (const auto& kv : split_list(sizes_text, ',')) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw UsageError(fmt::format("--sizes entry '{}': write KERNEL=SIZE", kv));
    sizes[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const auto all = enumerate_devices();
  std::vector<Device> devices;
  for (const auto& s : split_list(devices_text, ',')) devices.push_back(select_device(all, s));
  if (devices.size() != 2) throw UsageError("--devices: give exactly two devices");
  const TimingOptions timing{warmup, repeat};
  const TimingOptions round_timing{warmup, round_repeat, round_min_ms, 30};
  const TimingOptions refine_timing{warmup, refine_repeat, refine_min_ms, 50};
  RefineOptions refine_options;
  refine_options.max_points = refine_points;
  const std::vector<LocalSize> locals{std::nullopt, std::nullopt};

  std::vector<Row> rows;
  std::string md = fmt::format(
      "# Split across two devices ({})\n\n"
      "Devices: first = {} ({}, {} PEs), second = {} ({}, {} PEs). Local size: null (driver). Split direction: "
      "auto.\n\n"
      "Method. (1) Sweep: the first device's share from 0 to 100 % in {} % steps, then {} % steps near the best, "
      "each point the median makespan (wall clock: upload + kernel + read-back on both devices at once) of {} "
      "rounds; its best point is the oracle's split (curve: `split_{}_<kernel>.svg`). (2) Each model chooses its "
      "split; `measured` calibrates each device alone (slices of the range, {} timed runs each, capped at {} ms a "
      "slice), predicts "
      "(water-filling), then refines online: at most {} splits measured concurrently ({} timed runs each, more "
      "until they sum to {} ms, at most 50) by "
      "bracketing and golden-section search around the prediction, the single-device endpoints that can win "
      "included, a winner that uses both devices re-measured twice against the better device alone, best median "
      "kept; `measured (model only)` is its prediction before refinement. (3) "
      "Comparison, interleaved: {} rounds, each running every distinct split once ({} warm-up + {} timed runs, "
      "more until they sum to {} ms, at most 30; median) in an order rotated per round; a method's makespan is the median of its round medians, spread = "
      "interquartile range ÷ median of the round medians. Identical splits are measured once, so they compare "
      "equal. ÷ oracle and ÷ better alone use these interleaved medians; `sweep ms` is the sweep's own median at "
      "that split, for the drift between phases.\n\n",
      tag, devices[0].info.name, devices[0].info.id(), devices[0].info.total_pe(), devices[1].info.name,
      devices[1].info.id(), devices[1].info.total_pe(), step, fine, repeat, tag, repeat, cal_cap_ms, refine_points,
      refine_repeat, refine_min_ms, rounds, warmup, round_repeat, round_min_ms);
  md += "| kernel | size | method | share of first % | makespan ms | spread % | ÷ oracle | ÷ better alone | "
        "sweep ms | note |\n|---|---|---|---|---|---|---|---|---|---|\n";
  std::string notes;
  for (const auto& kname : split_list(kernels_text, ',')) {
    const KernelSpec& k = kernel_spec(kname);
    const Problem p = sizes.count(kname) ? k.parse_size(sizes[kname]) : k.paper_size();
    const unsigned dim = split_dimension(k.dims(), k.priority(), SplitDirection::auto_);
    const std::size_t total = k.split_units(p, dim);
    std::cerr << fmt::format("{} {}: sweep along {}...\n", kname, p.text, dim == 0 ? "x" : "y");
    MultiDeviceRunner runner(devices, k, p);
    const auto sweep = sweep_two(runner, dim, locals, timing, step, fine);
    const SweepPoint* best = best_point(sweep);
    if (!best) throw Error(fmt::format("{}: no sweep point ran correctly", kname));
    write(fmt::format("{}/split_{}_{}_sweep.csv", out_dir, tag, kname), sweep_csv(sweep));
    write(fmt::format("{}/split_{}_{}.svg", out_dir, tag, kname),
          svg::render(sweep_plot(sweep, fmt::format("{} {} ({}): makespan over the split", kname, p.text, tag),
                                 devices[0].info.name, devices[1].info.name)));
    auto sweep_at = [&](const std::vector<Block>& blocks) -> std::optional<double> {
      for (const auto& pt : sweep) {
        if (pt.blocks == blocks && pt.result.ok()) return pt.result.makespan.median();
      }
      return std::nullopt;
    };

    // Every method's split; identical splits share one candidate.
    std::vector<Candidate> cands;
    std::vector<Method> methods;
    auto add = [&](std::string name, const std::vector<Block>& blocks, std::optional<Cost> cost = std::nullopt) {
      auto it = std::find_if(cands.begin(), cands.end(), [&](const Candidate& c) { return c.blocks == blocks; });
      if (it == cands.end()) {
        cands.push_back(Candidate{blocks, {}, "correct", ""});
        it = cands.end() - 1;
      }
      methods.push_back(Method{std::move(name), static_cast<std::size_t>(it - cands.begin()), sweep_at(blocks), cost});
    };
    add("oracle (sweep)", best->blocks);
    const std::size_t oracle_i = methods.back().candidate;
    std::vector<std::size_t> alone_i;
    for (std::size_t first : {total, std::size_t{0}}) {
      add(first ? "first alone" : "second alone", two_blocks(dim, first, total));
      alone_i.push_back(methods.back().candidate);
    }
    for (auto m : {SplitModel::pe_ratio, SplitModel::proportional}) {
      add(std::string(to_string(m)), model_blocks(m, runner, dim, locals));
    }
    std::cerr << fmt::format("{}: calibrating and refining the measured model...\n", kname);
    Cost cost;
    const auto tc = std::chrono::steady_clock::now();
    Calibration cal = runner.calibrate_all(dim, locals, timing, CalibrationBudget{cal_cap_ms});
    cost.cal_ms = ms_since(tc);
    for (const auto& d : cal.devices) cost.cal_slices += d.points.size();
    cost.cal_runs = cost.cal_slices * (timing.warmup + timing.repetitions);
    const SplitRefinement ref = refine_split(runner, cal, locals, refine_timing, refine_options);
    for (const auto& pr : ref.search.probes) (pr.role == "confirm" ? cost.refine_confirms : cost.refine_points) += 1;
    cost.refine_rounds = ref.concurrent_rounds;
    cost.refine_ms = ref.elapsed_ms;
    add("measured (model only)", ref.model_blocks);
    add("measured", ref.blocks, cost);

    std::cerr << fmt::format("{}: {} distinct splits, {} interleaved rounds...\n", kname, cands.size(), rounds);
    for (unsigned r = 0; r < rounds; ++r) {
      for (std::size_t j = 0; j < cands.size(); ++j) {
        Candidate& c = cands[(j + r) % cands.size()];
        const SplitRunResult res = runner.run(c.blocks, locals, round_timing);
        if (res.ok()) {
          c.round_ms.push_back(res.makespan.median());
        } else {
          c.status = std::string(to_string(res.status));
          c.error = res.error;
        }
      }
    }
    const double oracle = cands[oracle_i].median();
    double alone = 0;
    for (auto i : alone_i) {
      if (!cands[i].round_ms.empty()) alone = alone == 0 ? cands[i].median() : std::min(alone, cands[i].median());
    }
    for (const auto& m : methods) {
      const Candidate& c = cands[m.candidate];
      Row row{kname, p.text, m.name, c.status, "", 100.0 * static_cast<double>(c.blocks[0].size()) /
                                                        static_cast<double>(total),
              c.median(), c.spread(), oracle, alone, c.blocks[0].size(), c.round_ms.size(), m.sweep_ms, m.cost};
      for (const auto& other : methods) {
        if (&other == &m) break;
        if (other.candidate == m.candidate) {
          row.note = "same split as " + other.name;
          break;
        }
      }
      if (!c.error.empty()) row.note += (row.note.empty() ? "" : "; ") + c.error;
      md += fmt::format("| {} | {} | {} | {:.1f} | {:.3f} | {:.1f} | {} | {} | {} | {} |\n", kname, p.text, m.name,
                        row.pct_first, row.makespan, 100 * row.spread, ratio(row.makespan, oracle),
                        ratio(row.makespan, alone), opt_ms(row.sweep_ms), row.note);
      rows.push_back(std::move(row));
    }
    const Row& meas = rows.back();
    const double to_oracle = meas.makespan / oracle, to_alone = alone > 0 ? meas.makespan / alone : 0;
    notes += fmt::format(
        "- **{}**: measured {:.1f} % of the range on the first device ({}), model alone {:.1f} %. Cost: "
        "calibration {} solo slice runs (≤ {} kernel runs, {:.0f} ms) + refinement {} splits and {} confirming "
        "re-runs ({} concurrent rounds, {:.0f} ms). "
        "Targets: ÷ oracle {:.3f} ({}), ÷ better alone {:.3f} ({}). Probes (share %: ms): {}.\n",
        kname, meas.pct_first, meas.note.empty() ? "its own split" : meas.note,
        100.0 * static_cast<double>(ref.model_blocks[0].size()) / static_cast<double>(total), cost.cal_slices,
        cost.cal_runs, cost.cal_ms, cost.refine_points, cost.refine_confirms, cost.refine_rounds, cost.refine_ms,
        to_oracle,
        to_oracle <= 1.05 ? std::string("within 5 %") : fmt::format("missed by {:.1f} %", 100 * (to_oracle - 1.05)),
        to_alone, to_alone <= 1.0 ? std::string("not worse") : fmt::format("worse by {:.1f} %", 100 * (to_alone - 1)),
        [&] {
          std::string s;
          for (const auto& pr : ref.search.probes) {
            s += fmt::format("{}{:.1f}: {} ({})", s.empty() ? "" : ", ",
                             100.0 * static_cast<double>(pr.units_first) / static_cast<double>(total),
                             std::isfinite(pr.makespan_ms) ? fmt::format("{:.3f}", pr.makespan_ms) : "failed",
                             pr.role);
          }
          return s;
        }());
  }
  md += "\n`first alone` / `second alone` give the whole range to one device; \"same split as\" marks methods "
        "that chose the same blocks (measured once).\n\n## The measured model per kernel\n\n" + notes;
  std::string csv = "kernel,size,method,percent_first,units_first,makespan_ms,spread,rounds,oracle_ms,best_alone_ms,"
                    "ratio_to_oracle,ratio_to_best_alone,sweep_ms,status,cal_slices,cal_kernel_runs_max,cal_ms,refine_points,"
                    "refine_confirms,refine_rounds,refine_ms,note\n";
  for (const auto& r : rows) {
    const Cost c = r.cost.value_or(Cost{});
    csv += fmt::format("{},{},{},{:.2f},{},{:.4f},{:.4f},{},{:.4f},{:.4f},{:.4f},{:.4f},{},{},{},{},{:.1f},{},{},{},{:.1f},"
                       "\"{}\"\n",
                       r.kernel, r.size, r.method, r.pct_first, r.units_first, r.makespan, r.spread, r.rounds,
                       r.oracle, r.best_alone, r.oracle > 0 ? r.makespan / r.oracle : 0,
                       r.best_alone > 0 ? r.makespan / r.best_alone : 0,
                       r.sweep_ms ? fmt::format("{:.4f}", *r.sweep_ms) : "", r.status, c.cal_slices, c.cal_runs,
                       c.cal_ms, c.refine_points, c.refine_confirms, c.refine_rounds, c.refine_ms, r.note);
  }
  write(fmt::format("{}/split_{}.csv", out_dir, tag), csv);
  write(fmt::format("{}/split_{}.md", out_dir, tag), md);
  std::cout << md;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return wstune::bench::guarded_main("bench_split", [&] { return bench_main(argc, argv); });
}
