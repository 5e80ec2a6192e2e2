// wstune split: split one kernel's NDRange across several devices by a model
// (pe-ratio, proportional, measured), optionally run it concurrently, or
// sweep the split ratio of two devices for the oracle.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "command.hpp"
#include "wstune/autotune.hpp"
#include "wstune/tuning_file.hpp"
#include "table.hpp"
#include "wstune/error.hpp"
#include "wstune/json.hpp"
#include "wstune/json_input.hpp"
#include "wstune/multi_device.hpp"
#include "wstune/split_refine.hpp"
#include "wstune/store.hpp"
#include "wstune/tune_session.hpp"

namespace po = boost::program_options;

namespace wstune::cli {
namespace {

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const auto end = text.find(sep, pos);
    out.push_back(text.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

nlohmann::json slice_json(const SliceResult& s) {
  return {{"device_id", s.device_id}, {"device_name", s.device_name}, {"begin", s.block.begin},
          {"end", s.block.end}, {"local", to_json(s.local)}, {"status", std::string(to_string(s.status))},
          {"error", s.error}, {"kernel", to_json(s.kernel)}, {"h2d", to_json(s.h2d)}, {"d2h", to_json(s.d2h)},
          {"wall", to_json(s.wall)}};
}

nlohmann::json run_json(const SplitRunResult& r) {
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& s : r.slices) slices.push_back(slice_json(s));
  return {{"status", std::string(to_string(r.status))}, {"error", r.error}, {"makespan", to_json(r.makespan)},
          {"host_finish_ms", r.host_finish_ms}, {"slices", slices},
          {"verify", {{"ok", r.verdict.ok}, {"max_error", r.verdict.max_error}, {"detail", r.verdict.detail}}}};
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!(f << text)) throw UsageError(fmt::format("cannot write '{}': check the directory exists and is writable", path));
}

// ---- the measured model's calibration and refinement, stored and reused ----------------

// Where the measured model's numbers came from, for the output.
struct MeasuredPlan {
  Calibration cal;
  std::vector<Block> blocks;
  std::string cal_source = "measured";   // "measured", "stored" or "file"
  std::string refine_source = "off";     // "off", "measured", "stored" or "rounds"
  std::optional<RefineOutcome> refinement;
  std::vector<Block> model_blocks;       // the model's prediction before refinement
  unsigned concurrent_rounds = 0;
  double refine_ms = 0;
  std::string stored_at;                 // created_at of the reused calibration
  bool stored = false;                   // written to the database now
};

// A calibration stored by an earlier `wstune split --model measured`: every
// device's newest "measured" calibration row for this kernel must come from
// the same split (one key) over the same devices, size, direction and local
// sizes; then its whole Calibration and refinement are reused.
std::optional<std::pair<nlohmann::json, std::string>> stored_split(const Store& store, const KernelSpec& spec,
                                                                    const Calibration& want) {
  const KernelKey key = kernel_key(spec);
  std::optional<nlohmann::json> split;
  std::string created;
  std::set<std::string> seen;
  for (const auto& d : want.devices) {
    if (!seen.insert(d.fingerprint).second) continue;
    const auto row = store.calibration(d.fingerprint, key.name, "measured");
    if (!row || !(row->kernel == key) || !row->params.contains("split")) return std::nullopt;
    const nlohmann::json& s = row->params["split"];
    if (split && s.value("key", "") != split->value("key", "")) return std::nullopt;
    split = s;
    created = row->created_at;
  }
  if (!split) return std::nullopt;
  try {
    const Calibration got = calibration_from_json(split->at("calibration"));
    if (got.kernel != want.kernel || got.size != want.size || got.dim != want.dim ||
        got.devices.size() != want.devices.size()) return std::nullopt;
    for (std::size_t i = 0; i < got.devices.size(); ++i) {
      if (got.devices[i].fingerprint != want.devices[i].fingerprint || got.devices[i].local != want.devices[i].local) {
        return std::nullopt;
      }
    }
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // another writer's format: calibrate anew
  }
  return std::make_pair(*split, created);
}

// One row per device (the daemon's format: the device's DeviceCalibration
// JSON, plus "size"), each also carrying the whole split under "split".
void store_split(Store& store, const KernelSpec& spec, const std::vector<Device>& devices, const MeasuredPlan& plan,
                 std::size_t total_units) {
  nlohmann::json split{
      {"key", fmt::format("{:x}-{}", std::chrono::system_clock::now().time_since_epoch().count(), ::getpid())},
      {"calibration", to_json(plan.cal)}, {"total_units", total_units},
      {"refinement", plan.refinement ? to_json(*plan.refinement) : nlohmann::json(nullptr)}};
  for (std::size_t i = 0; i < devices.size(); ++i) {
    store.put_device(devices[i].info);
    nlohmann::json params = to_json(plan.cal.devices[i]);
    params["size"] = plan.cal.size;
    params["dim"] = plan.cal.dim;
    params["split"] = split;
    params["split"]["position"] = i;
    store.put_calibration(StoredCalibration{devices[i].info.fingerprint(), kernel_key(spec), "measured", params, ""});
  }
}

// A stored refinement, if its best split still fits the range and the local sizes.
std::optional<RefineOutcome> stored_refinement(const nlohmann::json& split, std::size_t total,
                                               const RefineDomain& domain) {
  if (!split.contains("refinement") || split["refinement"].is_null()) return std::nullopt;
  if (split.value("total_units", std::size_t{0}) != total || domain.count() == 0) return std::nullopt;
  try {
    RefineOutcome o = refine_outcome_from_json(split["refinement"]);
    if (!o.found() || o.units_first > total || domain.units(domain.nearest(o.units_first)) != o.units_first) {
      return std::nullopt;
    }
    return o;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

// The measured model's provenance: where the calibration and the refinement
// came from and what they cost, as lines and as JSON fields.
void report_measured(const MeasuredPlan& plan, const Store* store, const std::string& cal_path, std::size_t total,
                     bool json, nlohmann::json& out) {
  auto pct = [&](std::size_t units) { return 100.0 * static_cast<double>(units) / static_cast<double>(total); };
  std::size_t slices = 0;
  for (const auto& d : plan.cal.devices) slices += d.points.size();
  std::string where = plan.cal_source == "stored" ? fmt::format("stored ({}, {})", store->path(), plan.stored_at)
                      : plan.cal_source == "file" ? fmt::format("from {}", cal_path)
                                                   : fmt::format("measured ({} slices)", slices);
  if (plan.stored) where += fmt::format(", stored in {}", store->path());
  else if (!store) where += ", not stored (--no-store)";
  out["calibration_source"] = plan.cal_source;
  out["db"] = store ? nlohmann::json(store->path()) : nlohmann::json(nullptr);
  nlohmann::json r{{"source", plan.refine_source}, {"model_percent_first", pct(plan.model_blocks.at(0).size())},
                   {"concurrent_rounds", plan.concurrent_rounds}, {"elapsed_ms", plan.refine_ms}};
  std::string line = "off (--refine 0)";
  if (plan.refine_source == "rounds") line = "concurrency-correction rounds (three or more devices)";
  if (plan.refinement) {
    const RefineOutcome& o = *plan.refinement;
    r["search"] = to_json(o);
    r["percent_first"] = pct(o.units_first);
    const std::string alone = o.best_alone_ms ? fmt::format("{:.4f} ms", *o.best_alone_ms) : "not measured";
    std::size_t confirms = 0;
    for (const auto& p : o.probes) confirms += p.role == "confirm";
    line = plan.refine_source == "stored"
               ? fmt::format("stored: {:.2f} % on the first device ({:.4f} ms when measured; best device alone {})",
                             pct(o.units_first), o.makespan_ms, alone)
               : fmt::format("{} splits measured{} ({} concurrent rounds, {:.0f} ms): model {:.2f} % -> best "
                             "{:.2f} % on the first device, {:.4f} ms (best device alone {})",
                             o.probes.size() - confirms,
                             confirms ? fmt::format(" + {} confirming runs", confirms) : std::string{},
                             plan.concurrent_rounds, plan.refine_ms,
                             pct(plan.model_blocks.at(0).size()), pct(o.units_first), o.makespan_ms, alone);
  }
  out["refinement"] = r;
  if (!json) std::cout << "calibration: " << where << "\nrefinement: " << line << "\n";
}

int split_main(int argc, char** argv) {
  po::options_description desc("wstune split options");
  std::string kernel, kernel_file, config_text, size, devices_text, model_text, direction_text, local_text, csv_path,
      svg_path, cal_path, db;
  unsigned repeat = 5, warmup = 1, refine = 8, refine_repeat = 5;
  double refine_min_ms = 20;
  double sweep = 0, cal_cap_ms = 250;
  std::uint64_t seed = 42;
  add_kernel_options(desc, kernel, kernel_file);
  desc.add_options()
      ("size,s", po::value(&size), "problem size (default: the paper's Table 3 size or the file's ProblemSize)")
      ("config,c", po::value(&config_text), "--kernel-file: tuning parameter values NAME=V,... for every device "
                                            "(default: each device's stored best, else the reference configuration)")
      ("devices,d", po::value(&devices_text)->required(), "devices D1,D2[,...]: each P:D, cpu, gpu or a name substring")
      ("model,m", po::value(&model_text)->default_value("pe-ratio"), "pe-ratio, proportional or measured")
      ("direction", po::value(&direction_text)->default_value("auto"), "split along x, y or auto (from the kernel's priority)")
      ("local,l", po::value(&local_text)->default_value("null"),
       "local size for all devices (null, rule, stored or X,Y) or one per device separated by '/', e.g. 16,8/null; "
       "stored: each device's stored best (with its parameters), else null")
      ("run", "run the split on all devices at once, verify and report times")
      ("sweep", po::value(&sweep), "sweep two devices' split ratio in STEP % steps (1 % near the best)")
      ("csv", po::value(&csv_path), "with --sweep: write the curve as CSV to this file")
      ("svg", po::value(&svg_path), "with --sweep: write the curve as an SVG plot to this file")
      ("calibration", po::value(&cal_path), "measured model: read the calibration from this JSON file if it "
                                             "exists and matches, else calibrate and write it there")
      ("refine", po::value(&refine)->default_value(8),
       "measured model, two devices: measure at most N splits on both devices at once around the model's "
       "prediction (bracketing + golden-section search) and keep the best; three or more devices: at most N "
       "concurrency-correction rounds; 0: the model's prediction as it is")
      ("refine-repeat", po::value(&refine_repeat)->default_value(5), "measured model: timed runs per refinement probe")
      ("refine-min-ms", po::value(&refine_min_ms)->default_value(20),
       "measured model: more runs per refinement probe until they sum to MS (at most 50; 0: off)")
      ("calibration-cap-ms", po::value(&cal_cap_ms)->default_value(250),
       "measured model: cap (ms) on one calibration slice; larger slices are predicted from the fit (0: no cap)")
      ("db", po::value(&db), db_option_help)
      ("no-store", "measured model: neither reuse nor store a calibration in the database")
      ("recalibrate", "measured model: calibrate and refine anew even if the database holds a calibration")
      ("repeat,r", po::value(&repeat)->default_value(5), "timed repetitions")
      ("warmup", po::value(&warmup)->default_value(1), "untimed warm-up rounds")
      ("seed", po::value(&seed)->default_value(42), "input seed")
      ("json", "print JSON");
  po::variables_map vm;
  if (!parse_options(argc, argv,
                     "usage: wstune split (--kernel K | --kernel-file FILE [--config NAME=V,...]) [--size S]\n"
                     "                    --devices D1,D2[,...] [--model pe-ratio|proportional|"
                     "measured] [--direction x|y|auto] [--local null|rule|X,Y[/...]] [--run] [--sweep STEP] [--json]\n"
                     "       [--refine N] [--db FILE | --no-store] [--recalibrate]\n\n"
                     "Splits one NDRange across several devices and prints each device's share; --run executes "
                     "it on all devices at once and reports per-device times and the makespan. The measured model "
                     "calibrates each device alone, predicts, refines online on both devices at once, and stores "
                     "the calibration in the database for the next run with the same devices, kernel and size.",
                     desc, vm, nullptr, {"devices"})) return 0;
  if (repeat == 0) throw UsageError("--repeat 0: give at least one repetition, e.g. --repeat 5");
  if (refine_repeat == 0) throw UsageError("--refine-repeat 0: give at least one repetition, e.g. --refine-repeat 3");
  if (!(refine_min_ms >= 0)) throw UsageError("--refine-min-ms: give 0 (off) or a positive number of ms, e.g. 20");
  const auto spec_ptr = kernel_option(kernel, kernel_file);
  const KernelSpec& spec = *spec_ptr;
  if (kernel.empty()) kernel = std::string(spec.name());
  const Problem p = with_params(problem_option(spec, vm, size), config_option(spec, problem_option(spec, vm, size), config_text));
  const SplitModel model = parse_split_model(model_text);
  unsigned dim = split_dimension(spec.dims(), spec.priority(), parse_split_direction(direction_text));
  if (const TuningFile* file = tuning_file_of(spec); file && file->split.is_object()) {  // the file says how it splits
    const std::string d = file->split.value("Dimension", "X");
    dim = d == "Y" ? 1 : d == "Z" ? 2 : 0;
  }
  const auto all = enumerate_devices();
  std::vector<Device> devices;
  for (const auto& sel : split_list(devices_text, ',')) devices.push_back(select_device(all, sel));
  const TimingOptions timing{warmup, repeat};

  // Local sizes: std::nullopt (outer) means "by the rule".
  std::vector<std::optional<LocalSize>> fixed;
  const auto local_parts = split_list(local_text, '/');
  if (local_parts.size() != 1 && local_parts.size() != devices.size()) {
    throw UsageError(fmt::format("--local '{}' has {} entries for {} devices: give one for all or one per device "
                                 "separated by '/'", local_text, local_parts.size(), devices.size()));
  }
  // Each device's stored best (parameters and local size) for "stored" and,
  // without --config, for a kernel with tuning parameters.
  std::vector<std::optional<StoredConfiguration>> stored(devices.size());
  const bool want_stored = local_text.find("stored") != std::string::npos ||
                           (!spec.tuning_parameters().empty() && config_text.empty());
  if (want_stored && !vm.count("no-store")) {
    Store s(database_path(db));
    for (std::size_t i = 0; i < devices.size(); ++i) stored[i] = stored_configuration(s, spec, p, devices[i].info);
  }
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& t = local_parts[local_parts.size() == 1 ? 0 : i];
    if (t == "rule") fixed.emplace_back(std::nullopt);
    else if (t == "stored") fixed.emplace_back(stored[i] ? stored[i]->config.local : LocalSize{});
    else fixed.emplace_back(parse_local_size(t));
  }
  bool any_rule = false;
  for (const auto& f : fixed) any_rule = any_rule || !f.has_value();
  // Blocks are chosen with the given local sizes (rule devices: granularity 1),
  // then rule devices get the rule's local size for their block.
  std::vector<LocalSize> locals;
  for (const auto& f : fixed) locals.push_back(f ? *f : LocalSize{});

  MultiDeviceRunner runner(devices, spec, p, seed);
  if (!spec.tuning_parameters().empty() && config_text.empty())
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (stored[i]) runner.set_params(i, stored[i]->config.params);
  const bool json = vm.count("json") > 0;
  nlohmann::json out{{"kernel_name", kernel}, {"size", p.text}, {"dim", dim == 0 ? "x" : "y"},
                     {"compute_amount", spec.compute_amount(p)},
                     {"compute_class", std::string(to_string(compute_class(spec.compute_amount(p))))}};

  if (vm.count("sweep")) {
    if (any_rule) throw UsageError("--sweep with --local rule is not supported: give X,Y or null per device");
    const auto points = sweep_two(runner, dim, locals, timing, sweep, std::min(1.0, sweep));
    const SweepPoint* best = best_point(points);
    const std::string csv = sweep_csv(points);
    if (!csv_path.empty()) write_file(csv_path, csv);
    if (!svg_path.empty()) {
      write_file(svg_path, svg::render(sweep_plot(points, fmt::format("{} {}: makespan over the split", kernel, p.text),
                                                  devices[0].info.name, devices[1].info.name)));
    }
    if (json) {
      nlohmann::json pts = nlohmann::json::array();
      for (const auto& pt : points) pts.push_back({{"percent_first", pt.percent_first}, {"run", run_json(pt.result)}});
      out["sweep"] = pts;
      if (best) out["best_percent_first"] = best->percent_first;
      std::cout << out.dump(2) << "\n";
    } else {
      std::cout << csv;
      if (best) {
        std::cout << fmt::format("best: {:g} % on {} ({} units), makespan {:.4f} ms\n", best->percent_first,
                                 devices[0].info.name, best->blocks[0].size(), best->result.makespan.median());
      }
    }
    return best ? 0 : 1;
  }

  const std::size_t total = spec.split_units(p, dim);
  MeasuredPlan plan;
  std::optional<Store> store;
  if (model == SplitModel::measured) {
    if (!vm.count("no-store")) store.emplace(database_path(db));
    const bool recalibrate = vm.count("recalibrate") > 0;
    Calibration want{kernel, p.text, dim, {}};
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const auto& info = devices[i].info;
      want.devices.push_back(DeviceCalibration{info.id(), info.name, info.fingerprint(), to_string(locals[i]), {}, {}, 1.0});
    }
    auto matches = [&](const Calibration& c) {
      bool ok = c.kernel == want.kernel && c.size == want.size && c.dim == want.dim &&
                c.devices.size() == want.devices.size();
      for (std::size_t i = 0; ok && i < c.devices.size(); ++i) {
        ok = c.devices[i].fingerprint == want.devices[i].fingerprint && c.devices[i].local == want.devices[i].local;
      }
      return ok;
    };
    bool loaded = false;
    std::optional<nlohmann::json> split;  // the stored split, when reused
    if (!recalibrate && !cal_path.empty()) {
      if (std::ifstream f(cal_path); f) {
        std::stringstream text;
        text << f.rdbuf();
        try {
          plan.cal = calibration_from_json(parse_json_input(text.str(), "--calibration " + cal_path));
        } catch (const nlohmann::json::exception& e) {
          throw UsageError(fmt::format("--calibration '{}' is not a calibration ({}); delete it to recalibrate",
                                       cal_path, bounded(e.what())));
        }
        loaded = matches(plan.cal);
        if (loaded) plan.cal_source = "file";
      }
    }
    if (!loaded && !recalibrate && store) {
      if (auto got = stored_split(*store, spec, want)) {
        plan.cal = calibration_from_json(got->first.at("calibration"));
        split = std::move(got->first);
        plan.stored_at = got->second;
        plan.cal_source = "stored";
        loaded = true;
      }
    }
    bool fresh = !loaded || plan.cal_source == "file";  // something to store
    if (!loaded) {
      if (!json) std::cerr << "calibrating each device alone (a few slice sizes)...\n";
      plan.cal = runner.calibrate_all(dim, locals, timing, CalibrationBudget{cal_cap_ms});
    }
    plan.model_blocks = model_blocks(SplitModel::measured, runner, dim, locals, &plan.cal);
    plan.blocks = plan.model_blocks;
    if (refine > 0 && devices.size() == 2) {
      const RefineDomain domain{total, split_granularity(spec, dim, locals[0]), split_granularity(spec, dim, locals[1])};
      if (auto prev = split ? stored_refinement(*split, total, domain) : std::nullopt) {
        plan.blocks = two_blocks(dim, prev->units_first, total);
        plan.refinement = std::move(prev);
        plan.refine_source = "stored";
      } else {
        if (!json) std::cerr << "refining: measuring a few splits on both devices at once...\n";
        RefineOptions ro;
        ro.max_points = refine;
        const SplitRefinement r = refine_split(runner, plan.cal, locals, TimingOptions{warmup, refine_repeat, refine_min_ms, 50}, ro);
        plan.blocks = r.blocks;
        plan.refinement = r.search;
        plan.concurrent_rounds = r.concurrent_rounds;
        plan.refine_ms = r.elapsed_ms;
        plan.refine_source = "measured";
        fresh = true;
      }
    } else if (refine > 0 && devices.size() > 2) {
      plan.blocks = refine_measured(runner, plan.cal, locals, timing, refine);
      plan.refine_source = "rounds";
      fresh = true;
    }
    if (store && fresh) {
      store_split(*store, spec, devices, plan, total);
      plan.stored = true;
    }
    if (!cal_path.empty()) write_file(cal_path, to_json(plan.cal).dump(2) + "\n");
  }
  std::vector<Block> blocks =
      model == SplitModel::measured ? plan.blocks : model_blocks(model, runner, dim, locals, nullptr);
  if (any_rule) locals = resolve_locals(runner, blocks, fixed, paper_local_rule);

  nlohmann::json shares = nlohmann::json::array();
  Table t({"device", "id", "PEs", "share %", "units", "range", "local"});
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& info = devices[i].info;
    const double pct = 100.0 * static_cast<double>(blocks[i].size()) / static_cast<double>(total);
    t.add({info.name, info.id(), fmt::format("{}", info.total_pe()), fmt::format("{:.2f}", pct),
           fmt::format("{}", blocks[i].size()), fmt::format("[{}, {})", blocks[i].begin, blocks[i].end),
           to_string(locals[i])});
    shares.push_back({{"device", to_json(info)}, {"percent", pct}, {"begin", blocks[i].begin},
                      {"end", blocks[i].end}, {"local", to_json(locals[i])}});
  }
  out["model"] = std::string(to_string(model));
  out["shares"] = shares;
  if (model == SplitModel::measured) out["calibration"] = to_json(plan.cal);
  if (!json) {
    std::cout << fmt::format("{} {} split along {} by {} (C = {:.3g}, {} class), {} units\n", kernel, p.text,
                             dim == 0 ? "x" : "y", to_string(model), spec.compute_amount(p),
                             to_string(compute_class(spec.compute_amount(p))), total);
    t.print(std::cout);
  }
  if (model == SplitModel::measured) report_measured(plan, store ? &*store : nullptr, cal_path, total, json, out);
  int status = 0;
  if (vm.count("run")) {
    const SplitRunResult r = runner.run(blocks, locals, timing);
    status = r.ok() ? 0 : 1;
    out["run"] = run_json(r);
    if (!json) {
      Table rt({"device", "kernel ms", "h2d ms", "d2h ms", "wall ms"});
      for (const auto& s : r.slices) {
        if (s.block.size() == 0) continue;
        rt.add({s.device_name, fmt::format("{:.4f}", s.kernel.median()), fmt::format("{:.4f}", s.h2d.median()),
                fmt::format("{:.4f}", s.d2h.median()), fmt::format("{:.4f}", s.wall.median())});
      }
      std::cout << "\n";
      rt.print(std::cout);
      std::cout << fmt::format("makespan: {:.4f} ms median (min {:.4f}, {} rounds); host gather+finish {:.4f} ms\n",
                               r.makespan.median(), r.makespan.min(), r.makespan.size(), r.host_finish_ms);
      std::cout << fmt::format("status: {}{}\n", to_string(r.status), r.error.empty() ? "" : " - " + r.error);
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return status;
}

WSTUNE_COMMAND("split", "split one kernel across several devices (pe-ratio, proportional, measured), run or sweep it",
               split_main);

}  // namespace
}  // namespace wstune::cli
