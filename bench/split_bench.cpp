// bench_split: for each kernel, the makespan of every split model on two or
// more unlike devices against the oracle, each device alone and (three or
// more devices) the best split without each device. The oracle: two devices,
// a sweep of the first device's share (5 % steps, then 1 % near the best);
// three or more, a grid over the simplex of shares (10 % steps, then 5 %
// within 10 % of the best). The comparison itself is measured afterwards,
// interleaved: in each of --rounds rounds every distinct split (oracle, each
// device alone, each model) runs once (warm-up + --round-repeat timed rounds,
// median), in an order rotated from round to round, and each method's
// makespan is the median of its round medians. Identical splits are measured
// once and compare equal; drift between phases (oracle, calibration, later
// runs) hits all methods alike. Writes CSV + Markdown (+ the oracle's curve
// or grid):
//   <out>/split_<tag>.csv, <out>/split_<tag>.md,
//   two devices: <out>/split_<tag>_<kernel>_sweep.csv, <out>/split_<tag>_<kernel>.svg
//   three or more: <out>/split_<tag>_<kernel>_grid.csv
// Targets (checked and reported, never asserted): measured within 5 % of the
// oracle makespan, never more than 3 % slower than the best device alone and
// (three or more devices) never slower than the best split without a device.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "bench_util.hpp"
#include "split/multi_device.hpp"
#include "split/split_grid.hpp"
#include "split/split_refine.hpp"
#include "wstune/error.hpp"

namespace po = boost::program_options;
using namespace wstune;

namespace {

using bench::split_list;
using bench::write;

struct Options {
  std::string devices_text, out_dir, tag, sizes_text, kernels_text;
  unsigned repeat = 5, warmup = 1, rounds = 7, round_repeat = 3, refine_points = 0, refine_repeat = 5;
  unsigned grid_step = 10, grid_subdivisions = 2;
  double grid_prune = 1.5;
  double step = 5, fine = 1, cal_cap_ms = 250, refine_min_ms = 20, round_min_ms = 10;
};

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
  std::size_t candidate = 0;        // index into the candidates
  std::optional<double> oracle_ms;  // the oracle's own median at this split, if it measured it
  std::optional<Cost> cost;
};

struct Row {
  std::string kernel, size, method, status, note, shares, devices;
  double pct_first = 0, makespan = 0, spread = 0, oracle = 0, best_alone = 0;
  std::size_t units_first = 0, rounds = 0;
  std::optional<double> oracle_ms;
  std::optional<Cost> cost;
};

std::string opt_ms(const std::optional<double>& v) {
  return v ? fmt::format("{:.3f}", *v) : "–";
}
std::string ratio(double a, double b) {
  return a > 0 && b > 0 ? fmt::format("{:.3f}", a / b) : "–";
}
std::string id_list(const std::vector<Device>& devices, const Shares& u) {
  std::vector<std::string> ids;
  for (auto i : device_set(u)) ids.push_back(devices[i].info.id());
  return fmt::format("{}", fmt::join(ids, "+"));
}

std::optional<Options> parse(int argc, char** argv) {
  Options o;
  po::options_description desc("bench_split options");
  desc.add_options()("help,h", "help")("devices", po::value(&o.devices_text)->default_value("0:0,0:1"),
                                       "two or more device selectors D1,D2[,...]")(
      "out-dir", po::value(&o.out_dir)->default_value("docs/results"), "output directory")(
      "tag", po::value(&o.tag)->default_value("pocl"), "name part of the output files")(
      "kernels", po::value(&o.kernels_text)->default_value("matmul,bilinear,sort,trapezoid"), "kernels")(
      "sizes", po::value(&o.sizes_text)->default_value(""), "sizes KERNEL=SIZE,... (default: the paper's)")(
      "repeat", po::value(&o.repeat)->default_value(5), "timed rounds per oracle point and calibration slice")(
      "warmup", po::value(&o.warmup)->default_value(1), "untimed rounds per oracle point, slice, probe and round")(
      "step", po::value(&o.step)->default_value(5), "two devices: coarse sweep step (%)")(
      "fine", po::value(&o.fine)->default_value(1), "two devices: fine sweep step near the best (%)")(
      "grid-step", po::value(&o.grid_step)->default_value(10), "three or more devices: grid step (% dividing 100)")(
      "grid-subdivisions", po::value(&o.grid_subdivisions)->default_value(2),
      "three or more devices: finer grid near the best, steps of grid-step / N within grid-step (1: none)")(
      "grid-prune", po::value(&o.grid_prune)->default_value(1.5),
      "three or more devices: skip grid splits giving a device at least a slice at which it alone took more than "
      "this many times the best makespan so far (0: run all)")("rounds", po::value(&o.rounds)->default_value(7),
                                                               "interleaved rounds of the comparison")(
      "round-repeat", po::value(&o.round_repeat)->default_value(3), "timed runs per split and round")(
      "refine-points", po::value(&o.refine_points)->default_value(0),
      "measured model: splits the refinement may measure (0: refine_points(devices), 8 for two, 18 for three)")(
      "refine-repeat", po::value(&o.refine_repeat)->default_value(5),
      "measured model: timed runs per refinement probe")(
      "refine-min-ms", po::value(&o.refine_min_ms)->default_value(20),
      "measured model: more runs per probe until they sum to MS (at most 50; 0: off)")(
      "round-min-ms", po::value(&o.round_min_ms)->default_value(10),
      "comparison: more runs per split and round until they sum to MS (at most 30; 0: off)")(
      "calibration-cap-ms", po::value(&o.cal_cap_ms)->default_value(250),
      "measured model: cap on one calibration slice's time (CalibrationBudget; 0: no cap)");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, desc), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return std::nullopt;
  }
  if (!(o.refine_min_ms >= 0) || !(o.round_min_ms >= 0)) {
    throw UsageError("--refine-min-ms and --round-min-ms: give 0 (off) or a positive number of ms");
  }
  if (o.rounds == 0 || o.round_repeat == 0 || o.repeat == 0 || o.refine_repeat == 0) {
    throw UsageError("--rounds, --round-repeat, --repeat and --refine-repeat must be at least 1");
  }
  if (o.grid_step == 0 || o.grid_step > 50 || 100 % o.grid_step != 0 || o.grid_subdivisions == 0) {
    throw UsageError("--grid-step: give a step dividing 100 up to 50 (e.g. 10); --grid-subdivisions at least 1");
  }
  return o;
}

// The oracle's points: two devices' sweep, or the grid over the simplex;
// writes its curve or grid.
std::vector<SweepPoint> oracle_points(MultiDeviceRunner& runner, unsigned dim, const std::vector<LocalSize>& locals,
                                      const Options& o, const std::vector<Device>& devices) {
  const TimingOptions timing{o.warmup, o.repeat};
  const std::string kname(runner.spec().name());
  if (devices.size() == 2) {
    auto sweep = sweep_two(runner, dim, locals, timing, o.step, o.fine);
    write(fmt::format("{}/split_{}_{}_sweep.csv", o.out_dir, o.tag, kname), sweep_csv(sweep));
    write(fmt::format("{}/split_{}_{}.svg", o.out_dir, o.tag, kname),
          svg::render(
              sweep_plot(sweep, fmt::format("{} {} ({}): makespan over the split", kname, runner.problem().text, o.tag),
                         devices[0].info.name, devices[1].info.name)));
    return sweep;
  }
  auto grid =
      sweep_grid(runner, dim, locals, timing,
                 GridOptions{100 / o.grid_step, o.grid_subdivisions, o.grid_prune, std::max(10.0, o.grid_prune)});
  write(fmt::format("{}/split_{}_{}_grid.csv", o.out_dir, o.tag, kname), grid_csv(grid));
  return grid;
}

// The best correct oracle point that gives device `j` nothing.
const SweepPoint* best_without(const std::vector<SweepPoint>& points, std::size_t j) {
  const SweepPoint* best = nullptr;
  for (const auto& p : points) {
    if (!p.result.ok() || p.blocks[j].size() > 0) continue;
    if (!best || p.result.makespan.median() < best->result.makespan.median()) best = &p;
  }
  return best;
}

// Why a device alone is left out of the interleaved comparison, if it is:
// the oracle skipped it (its own time already exceeded the grid's pruning
// bound) or measured it at more than 10 × the oracle's best. A CPU alone on
// matmul 4096 next to two GPUs takes tens of seconds a run.
std::optional<std::string> hopeless_alone(const std::vector<SweepPoint>& points, const std::vector<Block>& blocks,
                                          double best_ms) {
  for (const auto& p : points) {
    if (p.blocks != blocks) continue;
    if (p.result.status == TrialStatus::timeout) return "not compared (the oracle " + p.result.error + ")";
    if (p.result.ok() && p.result.makespan.median() > 10 * best_ms) {
      return fmt::format("not compared (the oracle measured {:.3f} ms, > 10 x its best)", p.result.makespan.median());
    }
  }
  return std::nullopt;
}

// The methods of one kernel; identical splits share one candidate.
struct Methods {
  std::vector<Candidate> cands;
  std::vector<Method> list;
  const std::vector<SweepPoint>* oracle = nullptr;

  std::size_t add(std::string name, const std::vector<Block>& blocks, std::optional<Cost> cost = std::nullopt) {
    auto it = std::find_if(cands.begin(), cands.end(), [&](const Candidate& c) { return c.blocks == blocks; });
    if (it == cands.end()) {
      cands.push_back(Candidate{blocks, {}, "correct", ""});
      it = cands.end() - 1;
    }
    std::optional<double> at;
    for (const auto& pt : *oracle) {
      if (pt.blocks == blocks && pt.result.ok()) at = pt.result.makespan.median();
    }
    list.push_back(Method{std::move(name), static_cast<std::size_t>(it - cands.begin()), at, cost});
    return list.back().candidate;
  }
};

// The measured model: calibration, prediction, refinement, with its cost.
SplitRefinement measured_method(MultiDeviceRunner& runner, unsigned dim, const std::vector<LocalSize>& locals,
                                const Options& o, Cost& cost) {
  const TimingOptions timing{o.warmup, o.repeat};
  const auto tc = std::chrono::steady_clock::now();
  Calibration cal = runner.calibrate_all(dim, locals, timing, CalibrationBudget{o.cal_cap_ms});
  cost.cal_ms = ms_since(tc);
  for (const auto& d : cal.devices) cost.cal_slices += d.points.size();
  cost.cal_runs = cost.cal_slices * (timing.warmup + timing.repetitions);
  RefineOptions ro;
  ro.max_points = o.refine_points ? o.refine_points : refine_points(runner.size());
  SplitRefinement ref =
      refine_split(runner, cal, locals, TimingOptions{o.warmup, o.refine_repeat, o.refine_min_ms, 50}, ro);
  for (const auto& pr : ref.search.probes) (pr.role == "confirm" ? cost.refine_confirms : cost.refine_points) += 1;
  cost.refine_rounds = ref.concurrent_rounds;
  cost.refine_ms = ref.elapsed_ms;
  return ref;
}

// Every candidate once per round, in an order rotated per round.
void interleave(MultiDeviceRunner& runner, std::vector<Candidate>& cands, const std::vector<LocalSize>& locals,
                const Options& o) {
  const TimingOptions round_timing{o.warmup, o.round_repeat, o.round_min_ms, 30};
  for (unsigned r = 0; r < o.rounds; ++r) {
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
}

// The targets for one kernel, one line.
std::string target_note(const std::string& what, double r, double limit) {
  return fmt::format("{} {:.3f} ({})", what, r,
                     r <= limit ? fmt::format("within {:.0f} %", 100 * (limit - 1))
                                : fmt::format("missed by {:.1f} %", 100 * (r - limit)));
}

std::string probes_text(const RefineOutcome& o, std::size_t total) {
  std::string s;
  for (const auto& pr : o.probes) {
    s += fmt::format("{}{}: {} ({})", s.empty() ? "" : ", ", percent_text(pr.units, total),
                     std::isfinite(pr.makespan_ms) ? fmt::format("{:.3f}", pr.makespan_ms) : "failed", pr.role);
  }
  return s;
}

// One kernel: oracle, methods, interleaved comparison; appends rows, the
// Markdown table's lines and a note.
void bench_kernel(const std::string& kname, const Problem& p, const std::vector<Device>& devices, const Options& o,
                  std::vector<Row>& rows, std::string& md, std::string& notes) {
  const KernelSpec& k = kernel_spec(kname);
  const unsigned dim = split_dimension(k.dims(), k.priority(), SplitDirection::auto_);
  const std::size_t total = k.split_units(p, dim);
  const std::vector<LocalSize> locals(devices.size(), std::nullopt);
  std::cerr << fmt::format("{} {}: oracle along {}...\n", kname, p.text, dim == 0 ? "x" : "y");
  MultiDeviceRunner runner(devices, k, p);
  const auto points = oracle_points(runner, dim, locals, o, devices);
  const SweepPoint* best = best_point(points);
  if (!best) throw Error(fmt::format("{}: no oracle point ran correctly", kname));

  Methods m;
  m.oracle = &points;
  const std::size_t oracle_i = m.add(devices.size() == 2 ? "oracle (sweep)" : "oracle (grid)", best->blocks);
  std::vector<std::size_t> alone_i, subset_i;
  std::string skipped;  // devices alone left out of the comparison
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Shares u(devices.size(), 0);
    u[i] = total;
    const std::string name = "alone " + devices[i].info.id();
    if (const auto why = hopeless_alone(points, shares_blocks(dim, u), best->result.makespan.median())) {
      skipped += fmt::format("{}{}: {}", skipped.empty() ? "" : "; ", name, *why);
      continue;
    }
    alone_i.push_back(m.add(name, shares_blocks(dim, u)));
  }
  for (std::size_t j = 0; devices.size() > 2 && j < devices.size(); ++j) {
    if (const SweepPoint* w = best_without(points, j)) {
      subset_i.push_back(m.add("oracle without " + devices[j].info.id(), w->blocks));
    }
  }
  for (auto model : {SplitModel::pe_ratio, SplitModel::proportional}) {
    m.add(std::string(to_string(model)), model_blocks(model, runner, dim, locals));
  }
  std::cerr << fmt::format("{}: calibrating and refining the measured model...\n", kname);
  Cost cost;
  const SplitRefinement ref = measured_method(runner, dim, locals, o, cost);
  m.add("measured (model only)", ref.model_blocks);
  const std::size_t measured_i = m.add("measured", ref.blocks, cost);

  std::cerr << fmt::format("{}: {} distinct splits, {} interleaved rounds...\n", kname, m.cands.size(), o.rounds);
  interleave(runner, m.cands, locals, o);
  auto least = [&](const std::vector<std::size_t>& idx) {
    double v = 0;
    for (auto i : idx) {
      if (!m.cands[i].round_ms.empty()) v = v == 0 ? m.cands[i].median() : std::min(v, m.cands[i].median());
    }
    return v;
  };
  const double oracle = m.cands[oracle_i].median(), alone = least(alone_i), subset = least(subset_i);
  for (std::size_t mi = 0; mi < m.list.size(); ++mi) {
    const Method& me = m.list[mi];
    const Candidate& c = m.cands[me.candidate];
    const Shares u = block_units(c.blocks);
    Row row{kname,
            p.text,
            me.name,
            c.status,
            "",
            percent_text(u, total),
            id_list(devices, u),
            100.0 * static_cast<double>(u[0]) / static_cast<double>(total),
            c.median(),
            c.spread(),
            oracle,
            alone,
            u[0],
            c.round_ms.size(),
            me.oracle_ms,
            me.cost};
    for (std::size_t oi = 0; oi < mi; ++oi) {
      if (m.list[oi].candidate == me.candidate) {
        row.note = "same split as " + m.list[oi].name;
        break;
      }
    }
    if (!c.error.empty()) row.note += (row.note.empty() ? "" : "; ") + c.error;
    md += fmt::format("| {} | {} | {} | {} | {} | {:.3f} | {:.1f} | {} | {} | {} | {} |\n", kname, p.text, me.name,
                      row.shares, row.devices, row.makespan, 100 * row.spread, ratio(row.makespan, oracle),
                      ratio(row.makespan, alone), opt_ms(row.oracle_ms), row.note);
    rows.push_back(std::move(row));
  }
  const double meas = m.cands[measured_i].median();
  std::string targets = target_note("÷ oracle", meas / oracle, 1.05);
  if (alone > 0) targets += ", " + target_note("÷ best alone", meas / alone, 1.03);
  if (subset > 0) targets += ", " + target_note("÷ best split without a device", meas / subset, 1.0);
  if (!skipped.empty()) targets += ". " + skipped;
  notes += fmt::format(
      "- **{}**: measured {} % ({}; devices {}), model alone {} %. Cost: calibration {} solo slice runs (≤ {} kernel "
      "runs, {:.0f} ms) + refinement {} splits and {} confirming re-runs ({} concurrent rounds, {:.0f} ms). Targets: "
      "{}. Probes (shares %: ms): {}.\n",
      kname, percent_text(ref.search.units, total), rows.back().note.empty() ? "its own split" : rows.back().note,
      id_list(devices, ref.search.units), percent_text(block_units(ref.model_blocks), total), cost.cal_slices,
      cost.cal_runs, cost.cal_ms, cost.refine_points, cost.refine_confirms, cost.refine_rounds, cost.refine_ms, targets,
      probes_text(ref.search, total));
}

std::string rows_csv(const std::vector<Row>& rows) {
  std::string csv =
      "kernel,size,method,shares_percent,device_set,percent_first,units_first,makespan_ms,spread,rounds,"
      "oracle_ms,best_alone_ms,ratio_to_oracle,ratio_to_best_alone,oracle_point_ms,status,cal_slices,"
      "cal_kernel_runs_max,cal_ms,refine_points,refine_confirms,refine_rounds,refine_ms,note\n";
  for (const auto& r : rows) {
    const Cost c = r.cost.value_or(Cost{});
    csv += fmt::format(
        "{},{},{},{},{},{:.2f},{},{:.4f},{:.4f},{},{:.4f},{:.4f},{:.4f},{:.4f},{},{},{},{},{:.1f},{},{},"
        "{},{:.1f},\"{}\"\n",
        r.kernel, r.size, r.method, r.shares, r.devices, r.pct_first, r.units_first, r.makespan, r.spread, r.rounds,
        r.oracle, r.best_alone, r.oracle > 0 ? r.makespan / r.oracle : 0,
        r.best_alone > 0 ? r.makespan / r.best_alone : 0, r.oracle_ms ? fmt::format("{:.4f}", *r.oracle_ms) : "",
        r.status, c.cal_slices, c.cal_runs, c.cal_ms, c.refine_points, c.refine_confirms, c.refine_rounds, c.refine_ms,
        r.note);
  }
  return csv;
}

std::string method_text(const Options& o, const std::vector<Device>& devices) {
  std::string devs;
  for (const auto& d : devices)
    devs += fmt::format("{}{} ({}, {} PEs)", devs.empty() ? "" : ", ", d.info.name, d.info.id(), d.info.total_pe());
  const std::string oracle =
      devices.size() == 2
          ? fmt::format(
                "a sweep of the first device's share from 0 to 100 % in {} % steps, then {} % steps near the "
                "best (curve: `split_{}_<kernel>.svg`)",
                o.step, o.fine, o.tag)
          : fmt::format(
                "a grid over the shares of all devices in {} % steps, then {:g} % steps within {} % of the "
                "best (`split_{}_<kernel>_grid.csv`)",
                o.grid_step, double(o.grid_step) / o.grid_subdivisions, o.grid_step, o.tag);
  return fmt::format(
      "# Split across {} devices ({})\n\nDevices: {}. Local size: null (driver). Split direction: auto.\n\n"
      "Method. (1) Oracle: {}, each point the median makespan (wall clock: upload + kernel + read-back on all "
      "devices at once) of {} rounds. (2) Each model chooses its split; `measured` calibrates each device alone "
      "(slices of the range, {} timed runs each, capped at {} ms a slice), predicts (water-filling), then refines "
      "online (at most {} splits measured concurrently, {} timed runs each, more until they sum to {} ms, at most "
      "50): the model's split, each device alone that can win, balancing by the devices' times, the best split "
      "without each device (three or more), lines through the best split, then its rivals and the best split of "
      "each smaller device set re-measured 3 times each, a split with more devices kept only when it beats fewer "
      "by 4 % (one device) or 2 % (several); `measured (model only)` is its prediction before refinement. (3) "
      "Comparison, interleaved: {} rounds, each running every distinct split once ({} warm-up + {} timed runs, "
      "more until they sum to {} ms, at most 30; median) in an order rotated per round; a method's makespan is the "
      "median of its round medians, spread = interquartile range ÷ median of the round medians. Identical splits "
      "are measured once, so they compare equal. ÷ oracle and ÷ best alone use these interleaved medians; "
      "`oracle ms` is the oracle's own median at that split, for the drift between phases.\n\n",
      devices.size(), o.tag, devs, oracle, o.repeat, o.repeat, o.cal_cap_ms,
      o.refine_points ? o.refine_points : refine_points(devices.size()), o.refine_repeat, o.refine_min_ms, o.rounds,
      o.warmup, o.round_repeat, o.round_min_ms);
}

int bench_main(int argc, char** argv) {
  const auto opt = parse(argc, argv);
  if (!opt) return 0;
  const Options& o = *opt;
  std::map<std::string, std::string> sizes;
  for (const auto& kv : split_list(o.sizes_text, ',')) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw UsageError(fmt::format("--sizes entry '{}': write KERNEL=SIZE", kv));
    sizes[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  const auto all = enumerate_devices();
  std::vector<Device> devices;
  for (const auto& s : split_list(o.devices_text, ',')) devices.push_back(select_device(all, s));
  if (devices.size() < 2) throw UsageError("--devices: give two or more devices, e.g. 0:0,0:1,0:2");

  std::vector<Row> rows;
  std::string md = method_text(o, devices);
  std::string env;  // the PoCL knobs that shape the devices, for the record
  for (const char* name : {"POCL_DEVICES", "POCL_MAX_PTHREAD_COUNT"}) {
    if (const char* v = std::getenv(name)) env += fmt::format("{}=\"{}\" ", name, v);
  }
  md += fmt::format("Command: `{}bench_split {}`\n\n", env,
                    fmt::join(std::vector<std::string>(argv + 1, argv + argc), " "));
  md +=
      "| kernel | size | method | shares % | devices | makespan ms | spread % | ÷ oracle | ÷ best alone | "
      "oracle ms | note |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::string notes;
  for (const auto& kname : split_list(o.kernels_text, ',')) {
    const KernelSpec& k = kernel_spec(kname);
    const Problem p = sizes.count(kname) ? k.parse_size(sizes[kname]) : k.paper_size();
    bench_kernel(kname, p, devices, o, rows, md, notes);
  }
  md +=
      "\n`alone D` gives the whole range to device D; `oracle without D` is the oracle's best split that gives D "
      "nothing; \"same split as\" marks methods that chose the same blocks (measured once).\n\n## The measured "
      "model per kernel\n\n" +
      notes;
  write(fmt::format("{}/split_{}.csv", o.out_dir, o.tag), rows_csv(rows));
  write(fmt::format("{}/split_{}.md", o.out_dir, o.tag), md);
  std::cout << md;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return wstune::bench::guarded_main("bench_split", [&] { return bench_main(argc, argv); });
}
