// wstune split: split one kernel's NDRange across several devices by a model
// (pe-ratio, proportional, even, measured), optionally run it concurrently, or
// sweep the shares for the oracle (two devices: the first device's share;
// three or more: a grid over the simplex). The plan, the measured model's
// calibration and refinement, the run and what is stored are the library's
// split session (session/split_session.hpp); this file parses and prints.

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.hpp"
#include "format/json.hpp"
#include "format/json_input.hpp"
#include "session/autotune.hpp"
#include "session/split_session.hpp"
#include "session/tune_session.hpp"
#include "split/multi_device.hpp"
#include "split/split_grid.hpp"
#include "split/split_refine.hpp"
#include "table.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

nlohmann::json slice_json(const SliceResult& s) {
  return {{"device_id", s.device_id}, {"device_name", s.device_name}, {"begin", s.block.begin},
          {"end", s.block.end},       {"local", to_json(s.local)},    {"status", std::string(to_string(s.status))},
          {"error", s.error},         {"kernel", to_json(s.kernel)},  {"h2d", to_json(s.h2d)},
          {"d2h", to_json(s.d2h)},    {"wall", to_json(s.wall)},      {"chunks", s.chunks},
          {"h2d_bytes", s.h2d_bytes}, {"d2h_bytes", s.d2h_bytes},     {"h2d_gbps", s.h2d_gbps()},
          {"d2h_gbps", s.d2h_gbps()}};
}

nlohmann::json run_json(const SplitRunResult& r) {
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : r.slices) slices.push_back(slice_json(s));
  return {{"status", std::string(to_string(r.status))},
          {"error", r.error},
          {"makespan", to_json(r.makespan)},
          {"host_finish_ms", r.host_finish_ms},
          {"slices", slices},
          {"verify", {{"ok", r.verdict.ok}, {"max_error", r.verdict.max_error}, {"detail", r.verdict.detail}}},
          {"joules_per_job", r.joules() ? nlohmann::json(*r.joules()) : nlohmann::json()}};
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!(f << text))
    throw UsageError(fmt::format("cannot write '{}': check the directory exists and is writable", path));
}

// The refinement as one line for people.
std::string refinement_line(const MeasuredPlan& plan, std::size_t total) {
  if (!plan.refinement) return "off (--refine 0)";
  const RefineOutcome& o = *plan.refinement;
  const std::string alone = o.best_alone_ms ? fmt::format("{:.4f} ms", *o.best_alone_ms) : "not measured";
  if (plan.refine_source == "stored") {
    return fmt::format("stored: {} % ({:.4f} ms when measured; best device alone {})", percent_text(o.units, total),
                       o.makespan_ms, alone);
  }
  std::size_t confirms = 0;
  for (const auto& p : o.probes) confirms += p.role == "confirm";
  return fmt::format(
      "{} splits measured{} ({} concurrent rounds, {:.0f} ms): model {} % -> best {} %, {:.4f} ms "
      "(best device alone {})",
      o.probes.size() - confirms, confirms ? fmt::format(" + {} confirming runs", confirms) : std::string{},
      plan.concurrent_rounds, plan.refine_ms, percent_text(block_units(plan.model_blocks), total),
      percent_text(o.units, total), o.makespan_ms, alone);
}

// The measured model's provenance: where the calibration and the refinement
// came from and what they cost, as lines and as JSON fields.
void report_measured(const MeasuredPlan& plan, const Store* store, const std::string& cal_path, std::size_t total,
                     bool json, nlohmann::json& out) {
  auto pct = [&](const Shares& u) {
    std::vector<double> v;
    for (auto x : u) v.push_back(100.0 * static_cast<double>(x) / static_cast<double>(total));
    return v;
  };
  std::size_t slices = 0;
  for (const auto& d : plan.cal.devices) slices += d.points.size();
  std::string where = plan.cal_source == "stored" ? fmt::format("stored ({}, {})", store->path(), plan.stored_at)
                      : plan.cal_source == "file" ? fmt::format("from {}", cal_path)
                                                  : fmt::format("measured ({} slices)", slices);
  if (plan.stored)
    where += fmt::format(", stored in {}", store->path());
  else if (!store)
    where += ", not stored (--no-store)";
  out["calibration_source"] = plan.cal_source;
  out["db"] = store ? nlohmann::json(store->path()) : nlohmann::json(nullptr);
  const Shares model = block_units(plan.model_blocks);
  nlohmann::json r{{"source", plan.refine_source},
                   {"model_percent", pct(model)},
                   {"model_percent_first", pct(model).at(0)},
                   {"concurrent_rounds", plan.concurrent_rounds},
                   {"elapsed_ms", plan.refine_ms}};
  if (plan.refinement) {
    r["search"] = to_json(*plan.refinement);
    r["percent"] = pct(plan.refinement->units);
    r["percent_first"] = pct(plan.refinement->units).at(0);
  }
  out["refinement"] = r;
  if (!json) std::cout << "calibration: " << where << "\nrefinement: " << refinement_line(plan, total) << "\n";
}

// What every step of `wstune split` needs.
struct SplitContext {
  const KernelSpec& spec;
  Problem problem;
  unsigned dim = 0;
  std::vector<Device> devices;
  std::vector<LocalSize> locals;
  MultiDeviceRunner& runner;
  TimingOptions timing;
  bool json = false;
  nlohmann::json& out;
  nlohmann::json bandwidth = nullptr;  // --bandwidth FILE: `wstune devices --bandwidth --json` output
  [[nodiscard]] std::size_t total() const { return spec.split_units(problem, dim); }
};

// --sweep STEP: two devices over the first device's share (STEP %, then 1 %
// near the best), three or more over a grid of the simplex (STEP %, then
// STEP/2 % within STEP of the best).
int sweep_shares(SplitContext& c, double step, const std::string& csv_path, const std::string& svg_path) {
  std::vector<SweepPoint> points;
  std::string csv;
  if (c.devices.size() == 2) {
    points = sweep_two(c.runner, c.dim, c.locals, c.timing, step, std::min(1.0, step));
    csv = sweep_csv(points);
  } else {
    if (!svg_path.empty()) throw UsageError("--svg plots two devices' sweep; with three or more use --csv");
    points =
        sweep_grid(c.runner, c.dim, c.locals, c.timing, GridOptions{static_cast<unsigned>(std::lround(100 / step)), 2});
    csv = grid_csv(points);
  }
  const SweepPoint* best = best_point(points);
  if (!csv_path.empty()) write_file(csv_path, csv);
  if (!svg_path.empty()) {
    write_file(svg_path, svg::render(sweep_plot(
                             points, fmt::format("{} {}: makespan over the split", c.spec.name(), c.problem.text),
                             c.devices[0].info.name, c.devices[1].info.name)));
  }
  if (c.json) {
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& pt : points) {
      pts.push_back(
          {{"percent_first", pt.percent_first}, {"units", block_units(pt.blocks)}, {"run", run_json(pt.result)}});
    }
    c.out["sweep"] = pts;
    if (best) {
      c.out["best_percent_first"] = best->percent_first;
      c.out["best_units"] = block_units(best->blocks);
      c.out["device_set"] = used_device_ids(c.devices, best->blocks);
    }
    std::cout << c.out.dump(2) << "\n";
  } else {
    std::cout << csv;
    if (best) {
      std::cout << fmt::format("best: {} % ({} units), makespan {:.4f} ms\n",
                               percent_text(block_units(best->blocks), c.total()),
                               fmt::join(block_units(best->blocks), "/"), best->result.makespan.median());
    }
  }
  return best ? 0 : 1;
}

// Options of the measured model.
struct MeasuredOptions {
  std::string cal_path, db;
  bool store = true, recalibrate = false;
  unsigned refine = 0;  // splits the refinement may measure (0: none)
  TimingOptions refine_timing;
  double cal_cap_ms = 250;
  std::string objective = "time";  // SplitObjective
};

// Each device's share, as a table and as JSON; the devices used.
void print_shares(SplitContext& c, SplitModel model, const std::vector<Block>& blocks) {
  nlohmann::json shares = nlohmann::json::array();
  Table t({"device", "id", "PEs", "share %", "units", "range", "local"});
  for (std::size_t i = 0; i < c.devices.size(); ++i) {
    const auto& info = c.devices[i].info;
    const double pct = 100.0 * static_cast<double>(blocks[i].size()) / static_cast<double>(c.total());
    t.add({info.name, info.id(), fmt::format("{}", info.total_pe()), fmt::format("{:.2f}", pct),
           fmt::format("{}", blocks[i].size()), fmt::format("[{}, {})", blocks[i].begin, blocks[i].end),
           to_string(c.locals[i])});
    shares.push_back({{"device", to_json(info)},
                      {"percent", pct},
                      {"begin", blocks[i].begin},
                      {"end", blocks[i].end},
                      {"local", to_json(c.locals[i])}});
  }
  const nlohmann::json used = used_device_ids(c.devices, blocks);
  c.out["model"] = std::string(to_string(model));
  c.out["shares"] = shares;
  c.out["device_set"] = used;
  if (!c.json) {
    const double amount = c.spec.compute_amount(c.problem);
    std::cout << fmt::format("{} {} split along {} by {} (C = {:.3g}, {} class), {} units\n", c.spec.name(),
                             c.problem.text, c.dim == 0 ? "x" : "y", to_string(model), amount,
                             to_string(compute_class(amount)), c.total());
    t.print(std::cout);
    std::cout << fmt::format("devices used: {} of {} ({})\n", used.size(), c.devices.size(),
                             fmt::join(used.get<std::vector<std::string>>(), ", "));
  }
}

// The measured pinned bandwidth (GB/s) of device `id` for `kind`
// ("pinned_h2d" or "pinned_d2h") in a `wstune devices --bandwidth --json`
// array; 0 when it holds none.
double pinned_gbps(const nlohmann::json& bandwidth, const std::string& id, const char* kind) {
  if (!bandwidth.is_array()) return 0;
  for (const auto& d : bandwidth) {
    if (d.value("device_id", "") == id && d.value("error", "").empty() && d.contains(kind))
      return d[kind].value("gbps", 0.0);
  }
  return 0;
}

// "" or the achieved fraction of the measured pinned bandwidth, in %.
std::string percent_of(double achieved, double measured) {
  return measured > 0 && achieved > 0 ? fmt::format("{:.0f}", 100 * achieved / measured) : std::string{};
}

// Each used device's achieved transfer bandwidth, against the measured
// pinned bandwidth where --bandwidth gave it (also into c.out["run"]).
void print_transfers(SplitContext& c, const SplitRunResult& r) {
  Table bt({"device", "h2d MB", "h2d GB/s", "h2d % pinned", "d2h MB", "d2h GB/s", "d2h % pinned"});
  for (std::size_t i = 0; i < r.slices.size(); ++i) {
    const auto& s = r.slices[i];
    if (s.block.size() == 0) continue;
    const double ph = pinned_gbps(c.bandwidth, s.device_id, "pinned_h2d");
    const double pd = pinned_gbps(c.bandwidth, s.device_id, "pinned_d2h");
    auto& js = c.out["run"]["slices"][i];
    js["pinned_h2d_gbps"] = ph;
    js["pinned_d2h_gbps"] = pd;
    bt.add({s.device_name, fmt::format("{:.1f}", s.h2d_bytes / 1e6), fmt::format("{:.2f}", s.h2d_gbps()),
            percent_of(s.h2d_gbps(), ph), fmt::format("{:.1f}", s.d2h_bytes / 1e6), fmt::format("{:.2f}", s.d2h_gbps()),
            percent_of(s.d2h_gbps(), pd)});
  }
  if (c.json) return;
  std::cout << "\ntransfers (profiling events; GB/s = 10^9 B/s; % of `wstune devices --bandwidth` pinned, with "
               "--bandwidth FILE):\n";
  bt.print(std::cout);
}

// "12.3 J" or "-" (a device without measured power).
std::string joules_text(const std::optional<double>& j) {
  return j ? fmt::format("{:.4g} J", *j) : std::string("-");
}

nlohmann::json cost_json(const SplitCost& cost) {
  return {{"makespan_ms", cost.makespan_ms},
          {"joules", cost.joules ? nlohmann::json(*cost.joules) : nlohmann::json()},
          {"edp_js", cost.edp() ? nlohmann::json(*cost.edp()) : nlohmann::json()}};
}

// The measured plan's predicted makespan and joules beside the time-optimal
// split and each device alone; each device's calibrated power.
void report_energy_plan(SplitContext& c, const MeasuredPlan& m, const std::string& objective) {
  nlohmann::json& e = c.out["energy_plan"];
  e["objective"] = objective;
  e["chosen"] = cost_json(m.predicted);
  e["time_optimal"] = cost_json(m.time_optimal);
  e["alone"] = nlohmann::json::array();
  for (const auto& a : m.alone) e["alone"].push_back(cost_json(a));
  e["power"] = nlohmann::json::array();
  for (const auto& d : m.cal.devices)
    e["power"].push_back({{"device_id", d.device_id},
                          {"active_w", d.active_w ? nlohmann::json(*d.active_w) : nlohmann::json()},
                          {"idle_w", d.idle_w ? nlohmann::json(*d.idle_w) : nlohmann::json()}});
  if (c.json) return;
  Table t({"split", "predicted makespan ms", "predicted joules"});
  t.add({fmt::format("chosen ({})", objective), fmt::format("{:.4f}", m.predicted.makespan_ms),
         joules_text(m.predicted.joules)});
  t.add({"time-optimal", fmt::format("{:.4f}", m.time_optimal.makespan_ms), joules_text(m.time_optimal.joules)});
  for (std::size_t i = 0; i < m.alone.size(); ++i)
    t.add({fmt::format("{} alone", c.devices[i].info.id()), fmt::format("{:.4f}", m.alone[i].makespan_ms),
           joules_text(m.alone[i].joules)});
  std::cout << "\nenergy (calibrated power: ";
  for (std::size_t i = 0; i < m.cal.devices.size(); ++i) {
    const auto& d = m.cal.devices[i];
    std::cout << (i ? "; " : "") << d.device_id << " "
              << (d.active_w && d.idle_w ? fmt::format("{:.1f} W active, {:.1f} W idle", *d.active_w, *d.idle_w)
                                         : std::string("not measured"));
  }
  std::cout << "):\n";
  t.print(std::cout);
}

// --run: the split on all devices at once, verified, with its times.
int run_split(SplitContext& c, SplitSession& session, const SplitSessionPlan& plan, std::size_t overlap) {
  const SplitRunResult r = session.run(plan, overlap);
  c.out["run"] = run_json(r);
  print_transfers(c, r);
  if (!c.json) {
    Table rt({"device", "chunks", "kernel ms", "h2d ms", "d2h ms", "wall ms"});
    for (const auto& s : r.slices) {
      if (s.block.size() == 0) continue;
      rt.add({s.device_name, fmt::format("{}", s.chunks), fmt::format("{:.4f}", s.kernel.median()),
              fmt::format("{:.4f}", s.h2d.median()), fmt::format("{:.4f}", s.d2h.median()),
              fmt::format("{:.4f}", s.wall.median())});
    }
    std::cout << "\n";
    rt.print(std::cout);
    std::cout << fmt::format("makespan: {:.4f} ms median (min {:.4f}, {} rounds); host gather+finish {:.4f} ms\n",
                             r.makespan.median(), r.makespan.min(), r.makespan.size(), r.host_finish_ms);
    std::cout << fmt::format("energy per job: {}{}\n", joules_text(r.joules()),
                             r.joules() ? " over every device (their sensors, warm-up rounds included)"
                                        : " (not measured: a device has no readable sensor)");
    std::cout << fmt::format("status: {}{}\n", to_string(r.status), r.error.empty() ? "" : " - " + r.error);
  }
  return r.ok() ? 0 : 1;
}

// --local: one entry for all devices or one per device ('/'); "rule" is
// std::nullopt (the paper's rule for the device's block), "stored" the
// device's stored best local size (null without one).
std::vector<std::optional<LocalSize>> local_option(const std::string& text,
                                                   const std::vector<std::optional<StoredConfiguration>>& stored) {
  const std::size_t devices = stored.size();
  const auto parts = split_list(text, '/');
  if (parts.size() != 1 && parts.size() != devices) {
    throw UsageError(
        fmt::format("--local '{}' has {} entries for {} devices: give one for all or one per device "
                    "separated by '/'",
                    text, parts.size(), devices));
  }
  std::vector<std::optional<LocalSize>> fixed;
  for (std::size_t i = 0; i < devices; ++i) {
    const auto& t = parts[parts.size() == 1 ? 0 : i];
    if (t == "rule")
      fixed.emplace_back(std::nullopt);
    else if (t == "stored")
      fixed.emplace_back(stored[i] ? stored[i]->config.local : LocalSize{});
    else
      fixed.emplace_back(parse_local_size(t));
  }
  return fixed;
}

// The values of `wstune split`'s options.
struct SplitArgs {
  std::string kernel, kernel_file, config_text, size, devices_text, model_text, direction_text, local_text, csv_path,
      svg_path;
  MeasuredOptions mo;
  unsigned repeat = 5, warmup = 1, refine_repeat = 5;
  std::size_t overlap = 2;
  double refine_min_ms = 20, sweep = 0;
  std::uint64_t seed = 42;
};

// `wstune split`'s options, bound to `a`.
void add_split_options(po::options_description& desc, SplitArgs& a) {
  add_kernel_options(desc, a.kernel, a.kernel_file);
  desc.add_options()("size,s", po::value(&a.size),
                     "problem size (default: the paper's Table 3 size or the file's ProblemSize)")(
      "config,c", po::value(&a.config_text),
      "--kernel-file: tuning parameter values NAME=V,... for every device "
      "(default: each device's stored best, else the reference configuration)")(
      "devices,d", po::value(&a.devices_text)->required(),
      "devices D1,D2[,...]: each P:D, cpu, gpu or a name substring")(
      "model,m", po::value(&a.model_text)->default_value("pe-ratio"),
      "pe-ratio (paper §3.1), proportional (to total PEs), even (1/n each) or measured")(
      "direction", po::value(&a.direction_text)->default_value("auto"),
      "split along x, y or auto (from the kernel's priority)")(
      "local,l", po::value(&a.local_text)->default_value("null"),
      "local size for all devices (null, rule, stored or X,Y) or one per device separated by '/', e.g. 16,8/null; "
      "stored: each device's stored best (with its parameters), else null")(
      "run", "run the split on all devices at once, verify and report times and transfer bandwidth")(
      "overlap", po::value(&a.overlap)->default_value(2),
      "with --run: each device's block as up to N chunks "
      "over two queues, so one chunk's transfers overlap another's kernel (1: whole blocks; 2 was never slower "
      "than 1 on the H100 machine, docs/results/transfers_h100)")(
      "bandwidth", po::value<std::string>(),
      "with --run: a `wstune devices --bandwidth --json` file; the "
      "transfers are reported as a % of each device's pinned bandwidth")(
      "sweep", po::value(&a.sweep),
      "the oracle: two devices over the first's share in STEP % steps (1 % near the "
      "best); three or more over a grid of the shares in STEP % steps (STEP/2 near the best); STEP in (0, 50] "
      "divides 100")("csv", po::value(&a.csv_path), "with --sweep: write the curve or grid as CSV to this file")(
      "svg", po::value(&a.svg_path), "with --sweep on two devices: write the curve as an SVG plot to this file")(
      "calibration", po::value(&a.mo.cal_path),
      "measured model: read the calibration from this JSON file if it "
      "exists and matches, else calibrate and write it there")(
      "refine", po::value(&a.mo.refine),
      "measured model: measure at most N splits on the devices at once (balancing the devices' times, then "
      "lines through the best split), choose the devices and keep the best; default 8 for two devices, 18 for "
      "three, 10 more per further device; 0: the model's prediction as it is")(
      "refine-repeat", po::value(&a.refine_repeat)->default_value(5),
      "measured model: timed runs per refinement probe")(
      "refine-min-ms", po::value(&a.refine_min_ms)->default_value(20),
      "measured model: more runs per refinement probe until they sum to MS (at most 50; 0: off)")(
      "calibration-cap-ms", po::value(&a.mo.cal_cap_ms)->default_value(250),
      "measured model: cap (ms) on one calibration slice; larger slices are predicted from the fit (0: no cap)")(
      "db", po::value(&a.mo.db), db_option_help)(
      "no-store", "measured model: neither reuse nor store a calibration in the database")(
      "objective", po::value(&a.mo.objective)->default_value("time"),
      "measured model: minimise time (the makespan), energy (the job's joules over every device) or edp "
      "(joules x makespan), from each device's calibrated time and measured power (docs/energy.md)")(
      "recalibrate", "measured model: calibrate and refine anew even if the database holds a calibration")(
      "repeat,r", po::value(&a.repeat)->default_value(5), "timed repetitions")(
      "warmup", po::value(&a.warmup)->default_value(1), "untimed warm-up rounds")(
      "seed", po::value(&a.seed)->default_value(42), "input seed")("json", "print JSON");
}

constexpr const char* kSplitUsage =
    "usage: wstune split (--kernel K | --kernel-file FILE [--config NAME=V,...]) [--size S]\n"
    "                    --devices D1,D2[,...] [--model pe-ratio|proportional|"
    "even|measured] [--direction x|y|auto] [--local null|rule|X,Y[/...]] [--run [--overlap N]] [--sweep STEP] "
    "[--json]\n"
    "       [--refine N] [--db FILE | --no-store] [--recalibrate]\n\n"
    "Splits one NDRange across several devices and prints each device's share and the devices "
    "used; --run executes it on all devices at once and reports per-device times and the makespan. "
    "The measured model calibrates each device alone, predicts, refines online on the devices at "
    "once (choosing which devices to use), and stores the calibration in the database for the next "
    "run with the same devices, kernel and size.";

// --sweep STEP: the shares are 0, STEP, 2·STEP, … 100 %, so STEP is in
// (0, 50] and divides 100 (7 would end on a 2 % step; the grid of three or
// more devices needs whole divisions); refused before any device is opened.
void check_sweep_step(double step) {
  const double divisions = 100 / step;
  if (!(step > 0 && step <= 50) || std::abs(divisions - std::round(divisions)) > 1e-9) {
    throw UsageError(fmt::format("--sweep {}: give a step in (0, 50] percent that divides 100, e.g. 5 or 10", step));
  }
}

// Usage errors in the counts.
void check_split_args(const SplitArgs& a) {
  if (a.repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 5");
  if (a.overlap == 0) throw UsageError("--overlap 0: give the chunks per block, 1 or more (1: whole blocks)");
  if (a.refine_repeat == 0) throw UsageError("--refine-repeat 0: give at least one repetition, e.g. --refine-repeat 3");
  if (!(a.refine_min_ms >= 0)) throw UsageError("--refine-min-ms: give 0 (off) or a positive number of ms, e.g. 20");
}

// The measured model's options completed from the rest (--refine's default
// by the number of devices).
void finish_measured_options(SplitArgs& a, const po::variables_map& vm, std::size_t devices) {
  if (!vm.count("refine")) a.mo.refine = refine_points(devices);
  a.mo.refine_timing = TimingOptions{a.warmup, a.refine_repeat, a.refine_min_ms, 50};
  a.mo.recalibrate = vm.count("recalibrate") > 0;
  a.mo.store = vm.count("no-store") == 0;
}

// Each device's stored best (parameters and local size), read where --local
// names "stored" or a kernel with tuning parameters has no --config; none
// with --no-store.
std::vector<std::optional<StoredConfiguration>> stored_bests(const SplitArgs& a, const KernelSpec& spec,
                                                             const Problem& p, const std::vector<Device>& devices) {
  std::vector<std::optional<StoredConfiguration>> stored(devices.size());
  const bool want =
      a.local_text.find("stored") != std::string::npos || (!spec.tuning_parameters().empty() && a.config_text.empty());
  if (!want || !a.mo.store) return stored;
  Store s(database_path(a.mo.db));
  for (std::size_t i = 0; i < devices.size(); ++i) stored[i] = stored_configuration(s, spec, p, devices[i].info);
  return stored;
}

// --bandwidth FILE, parsed.
nlohmann::json bandwidth_option(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  if (!(text << f.rdbuf())) throw UsageError(fmt::format("--bandwidth '{}': cannot read the file", path));
  return parse_json_input(text.str(), "--bandwidth " + path);
}

// The split's blocks by the model (measured: calibrated and refined, and
// reported), the shares printed, rule devices given the rule's local size for
// their block; then, with --run, the run. Returns the exit status.
int plan_and_run(SplitContext& c, SplitSession& session, SplitModel model, const SplitArgs& a,
                 const po::variables_map& vm) {
  SplitProgress progress;
  if (!c.json) progress = [](std::string_view line) { std::cerr << line << "\n"; };
  const SplitSessionPlan plan = session.plan(progress);
  c.locals = plan.locals;
  print_shares(c, model, plan.blocks);
  if (plan.measured) {
    c.out["calibration"] = to_json(plan.measured->cal);
    report_measured(*plan.measured, session.store(), a.mo.cal_path, c.total(), c.json, c.out);
    report_energy_plan(c, *plan.measured, a.mo.objective);
  }
  const int status = vm.count("run") ? run_split(c, session, plan, a.overlap) : 0;
  if (c.json) std::cout << c.out.dump(2) << "\n";
  return status;
}

// The session's options from `wstune split`'s: the model, dimension, local
// sizes, each device's stored parameters (a kernel with tuning parameters
// and no --config) and the measured model's.
SplitSessionOptions session_options(const SplitArgs& a, SplitModel model, unsigned dim, const KernelSpec& spec,
                                    const std::vector<std::optional<StoredConfiguration>>& stored,
                                    std::vector<std::optional<LocalSize>> fixed) {
  SplitSessionOptions o;
  o.model = model;
  o.dim = dim;
  o.locals = std::move(fixed);
  if (!spec.tuning_parameters().empty() && a.config_text.empty()) {
    for (const auto& s : stored) o.params.push_back(s ? s->config.params : nlohmann::json(nullptr));
  }
  o.seed = a.seed;
  o.timing = TimingOptions{a.warmup, a.repeat};
  if (model == SplitModel::measured && a.mo.store) o.db = database_path(a.mo.db);
  o.calibration_path = a.mo.cal_path;
  o.recalibrate = a.mo.recalibrate;
  o.refine = a.mo.refine;
  o.refine_timing = a.mo.refine_timing;
  o.calibration_cap_ms = a.mo.cal_cap_ms;
  o.objective = parse_split_objective(a.mo.objective);
  if (o.objective != SplitObjective::time && model != SplitModel::measured)
    throw UsageError(
        fmt::format("--objective {}: only the measured model (--model measured) weighs energy", a.mo.objective));
  return o;
}

int split_main(int argc, char** argv) {
  po::options_description desc("wstune split options");
  SplitArgs a;
  add_split_options(desc, a);
  po::variables_map vm;
  if (!parse_options(argc, argv, kSplitUsage, desc, vm, nullptr, {"devices"})) return 0;
  check_split_args(a);
  if (vm.count("sweep")) check_sweep_step(a.sweep);
  const auto spec_ptr = kernel_option(a.kernel, a.kernel_file);
  const KernelSpec& spec = *spec_ptr;
  if (a.kernel.empty()) a.kernel = std::string(spec.name());
  const Problem base = problem_option(spec, vm, a.size);
  const Problem p = with_params(base, config_option(spec, base, a.config_text));
  const SplitModel model = parse_split_model(a.model_text);
  const unsigned dim = split_dimension(spec, parse_split_direction(a.direction_text));
  const auto all = enumerate_devices();
  std::vector<Device> devices;
  for (const auto& sel : split_list(a.devices_text, ',')) devices.push_back(select_device(all, sel));
  finish_measured_options(a, vm, devices.size());

  const auto stored = stored_bests(a, spec, p, devices);
  // Blocks are chosen with the given local sizes (rule devices: the null local size's steps, split_granularity()),
  // then rule devices get the rule's local size for their block.
  const auto fixed = local_option(a.local_text, stored);
  const bool any_rule = std::any_of(fixed.begin(), fixed.end(), [](const auto& f) { return !f.has_value(); });
  SplitSession session(spec, p, devices, session_options(a, model, dim, spec, stored, fixed));
  nlohmann::json out{{"kernel_name", a.kernel},
                     {"size", p.text},
                     {"dim", dim == 0 ? "x" : "y"},
                     {"compute_amount", spec.compute_amount(p)},
                     {"compute_class", std::string(to_string(compute_class(spec.compute_amount(p))))}};
  SplitContext c{spec,
                 p,
                 dim,
                 devices,
                 session.planning_locals(),
                 session.runner(),
                 TimingOptions{a.warmup, a.repeat},
                 vm.count("json") > 0,
                 out};
  if (vm.count("bandwidth")) c.bandwidth = bandwidth_option(vm["bandwidth"].as<std::string>());
  if (vm.count("sweep")) {
    if (any_rule) throw UsageError("--sweep with --local rule is not supported: give X,Y or null per device");
    return sweep_shares(c, a.sweep, a.csv_path, a.svg_path);
  }
  return plan_and_run(c, session, model, a, vm);
}

WSTUNE_COMMAND("split",
               "split one kernel across several devices (pe-ratio, proportional, even, measured), run or sweep it",
               split_main);

}  // namespace
}  // namespace wstune::cli
