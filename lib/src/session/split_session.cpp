// One split job end to end: runner, model, calibration (stored and reused),
// refinement, rule local sizes, run, record.
#include "session/split_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "format/json_input.hpp"
#include "session/tune_session.hpp"
#include "store/calibration_row.hpp"
#include "wstune/error.hpp"

namespace wstune {

using nlohmann::json;

json used_device_ids(const std::vector<Device>& devices, const std::vector<Block>& blocks) {
  json ids = json::array();
  for (std::size_t i : device_set(block_units(blocks))) ids.push_back(devices[i].info.id());
  return ids;
}

namespace {

// Whether `got` calibrates the kernel, size, dimension, devices and local sizes `want` does.
bool matches(const Calibration& got, const Calibration& want) {
  bool ok = got.kernel == want.kernel && got.size == want.size && got.dim == want.dim &&
            got.devices.size() == want.devices.size();
  for (std::size_t i = 0; ok && i < got.devices.size(); ++i) {
    ok = got.devices[i].fingerprint == want.devices[i].fingerprint && got.devices[i].local == want.devices[i].local;
  }
  return ok;
}

// A split stored by an earlier measured session: every device's newest
// calibration row for this kernel must come from the same split (one key)
// whose calibration matches `want`; then its whole Calibration and
// refinement are reused. The split and the row's created_at.
std::optional<std::pair<SplitRecord, std::string>> stored_split(const Store& store, const KernelKey& key,
                                                                const Calibration& want) {
  std::optional<SplitRecord> split;
  std::string created;
  std::set<std::string> seen;
  for (const auto& d : want.devices) {
    if (!seen.insert(d.fingerprint).second) continue;
    const auto row = newest_calibration_row(store, d.fingerprint, key.name);
    if (!row || !(row->kernel == key) || !row->row.split) return std::nullopt;
    if (split && row->row.split->key != split->key) return std::nullopt;
    split = row->row.split;
    created = row->created_at;
  }
  if (!split || !matches(split->calibration, want)) return std::nullopt;
  return std::make_pair(std::move(*split), created);
}

// A stored refinement, if its chosen split still fits the range and the local sizes.
std::optional<RefineOutcome> stored_refinement(const SplitRecord& split, const SplitLattice& lattice) {
  if (!split.refinement || split.total_units != lattice.total_units) return std::nullopt;
  if (!split.refinement->found() || !lattice.contains(split.refinement->units)) return std::nullopt;
  return split.refinement;
}

// One row per device, each carrying the whole split.
void store_split(Store& store, const KernelKey& key, const std::vector<Device>& devices, const MeasuredPlan& plan,
                 std::size_t total_units) {
  SplitRecord split{fmt::format("{:x}-{}", std::chrono::system_clock::now().time_since_epoch().count(), ::getpid()),
                    plan.cal, total_units, plan.refinement, 0};
  for (std::size_t i = 0; i < devices.size(); ++i) {
    store.put_device(devices[i].info);
    split.position = i;
    const CalibrationRow row{plan.cal.devices[i], plan.cal.size, plan.cal.dim, std::nullopt, split};
    put_calibration_row(store, devices[i].info.fingerprint(), key, row);
  }
}

// The calibration in `path`, when the file exists (UsageError when it is not a calibration).
std::optional<Calibration> file_calibration(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::stringstream text;
  text << f.rdbuf();
  try {
    return calibration_from_json(parse_json_input(text.str(), "--calibration " + path));
  } catch (const json::exception& e) {
    throw UsageError(
        fmt::format("--calibration '{}' is not a calibration ({}); delete it to recalibrate", path, bounded(e.what())));
  }
}

void write_calibration_file(const std::string& path, const Calibration& cal) {
  std::ofstream f(path);
  if (!(f << to_json(cal).dump(2) << "\n"))
    throw UsageError(fmt::format("cannot write '{}': check the directory exists and is writable", path));
}

}  // namespace

SplitSession::SplitSession(const KernelSpec& spec, Problem problem, std::vector<Device> devices,
                           SplitSessionOptions options)
    : spec_(spec), problem_(std::move(problem)), devices_(std::move(devices)), options_(std::move(options)) {
  if (options_.locals.size() != devices_.size()) {
    throw UsageError(fmt::format("split session: {} devices but {} local sizes; give one each", devices_.size(),
                                 options_.locals.size()));
  }
  for (const auto& l : options_.locals) planning_locals_.push_back(l ? *l : LocalSize{});
  runner_ = std::make_unique<MultiDeviceRunner>(devices_, spec_, problem_, options_.seed);
  for (std::size_t i = 0; i < options_.params.size() && i < devices_.size(); ++i) {
    if (!options_.params[i].is_null()) runner_->set_params(i, options_.params[i]);
  }
}

SplitSession::~SplitSession() = default;

std::size_t SplitSession::total_units() const {
  return spec_.split_units(problem_, options_.dim);
}

namespace {

// What a measured plan needs of its session.
struct MeasuredStep {
  const SplitSessionOptions& o;
  const KernelSpec& spec;
  const Problem& problem;
  const std::vector<Device>& devices;
  const std::vector<LocalSize>& locals;
  MultiDeviceRunner& runner;
  Store* store;
  const SplitProgress& progress;

  // The calibration: from the file, the store or measured now. Returns the
  // stored split when the store's was reused.
  std::optional<SplitRecord> calibrate(MeasuredPlan& plan) const {
    Calibration want{std::string(spec.name()), problem.text, o.dim, {}};
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const auto& info = devices[i].info;
      want.devices.push_back(
          DeviceCalibration{info.id(), info.name, info.fingerprint(), to_string(locals[i]), {}, {}, 1.0});
    }
    if (!o.recalibrate && !o.calibration_path.empty()) {
      if (auto got = file_calibration(o.calibration_path); got && matches(*got, want)) {
        plan.cal = std::move(*got);
        plan.cal_source = "file";
        return std::nullopt;
      }
    }
    if (!o.recalibrate && store) {
      if (auto got = stored_split(*store, kernel_key(spec), want)) {
        plan.cal = got->first.calibration;
        plan.stored_at = got->second;
        plan.cal_source = "stored";
        return std::move(got->first);
      }
    }
    if (progress) progress("calibrating each device alone (a few slice sizes)...");
    plan.cal = runner.calibrate_all(o.dim, locals, o.timing, CalibrationBudget{o.calibration_cap_ms});
    plan.cal_source = "measured";
    return std::nullopt;
  }

  // The refinement: the stored one when it fits, else measured now. True when measured.
  bool refine(MeasuredPlan& plan, const std::optional<SplitRecord>& split) const {
    const SplitLattice lattice{spec.split_units(problem, o.dim), split_granularities(spec, problem, o.dim, locals)};
    if (auto prev = split ? stored_refinement(*split, lattice) : std::nullopt) {
      plan.blocks = shares_blocks(o.dim, prev->units);
      plan.refinement = std::move(prev);
      plan.refine_source = "stored";
      return false;
    }
    if (progress) progress("refining: measuring a few splits on the devices at once...");
    RefineOptions ro;
    ro.max_points = o.refine;
    const SplitRefinement r = refine_split(runner, plan.cal, locals, o.refine_timing, ro);
    plan.blocks = r.blocks;
    plan.refinement = r.search;
    plan.concurrent_rounds = r.concurrent_rounds;
    plan.refine_ms = r.elapsed_ms;
    plan.refine_source = "measured";
    return true;
  }

  // Calibration, prediction, refinement (or the stored refinement), stored for the next run.
  MeasuredPlan plan() const {
    MeasuredPlan plan;
    const std::optional<SplitRecord> split = calibrate(plan);
    bool fresh = plan.cal_source != "stored";  // something to store
    plan.model_blocks = model_blocks(SplitModel::measured, runner, o.dim, locals, &plan.cal);
    plan.blocks = plan.model_blocks;
    if (o.refine > 0 && devices.size() >= 2) fresh = refine(plan, split) || fresh;
    const auto work_items = [&](std::size_t, std::size_t u) { return runner.work_items(o.dim, u); };
    const std::size_t total = spec.split_units(problem, o.dim);
    if (o.objective != SplitObjective::time) {
      plan.blocks = objective_blocks(plan.cal, total, o.dim, split_granularities(spec, problem, o.dim, locals),
                                     work_items, o.objective);
    }
    plan.predicted = predicted_cost(plan.cal, plan.blocks, work_items);
    plan.time_optimal = predicted_cost(plan.cal, plan.model_blocks, work_items);
    for (std::size_t i = 0; i < devices.size(); ++i) {
      std::vector<Block> alone(devices.size(), Block{o.dim, total, total});
      alone[i] = Block{o.dim, 0, total};
      plan.alone.push_back(predicted_cost(plan.cal, alone, work_items));
    }
    if (store && fresh) {
      store_split(*store, kernel_key(spec), devices, plan, spec.split_units(problem, o.dim));
      plan.stored = true;
    }
    if (!o.calibration_path.empty()) write_calibration_file(o.calibration_path, plan.cal);
    return plan;
  }
};

}  // namespace

SplitSessionPlan SplitSession::plan(const SplitProgress& progress) {
  SplitSessionPlan out;
  if (options_.model == SplitModel::measured) {
    if (options_.db) store_.emplace(*options_.db);
    out.measured =
        MeasuredStep{options_, spec_, problem_, devices_, planning_locals_, *runner_, store(), progress}.plan();
    out.blocks = out.measured->blocks;
  } else {
    out.blocks = model_blocks(options_.model, *runner_, options_.dim, planning_locals_, nullptr);
  }
  const bool any_rule =
      std::any_of(options_.locals.begin(), options_.locals.end(), [](const auto& l) { return !l.has_value(); });
  out.locals = any_rule ? resolve_locals(*runner_, out.blocks, options_.locals, paper_local_rule) : planning_locals_;
  return out;
}

namespace {

// A run of the split as the store's split run: the shares and times, with
// the devices used and the measured model's refinement in the detail.
SplitRun split_run_row(const SplitSession& s, SplitModel model, unsigned dim, const SplitSessionPlan& plan,
                       const SplitRunResult& r) {
  const KernelSpec& spec = s.spec();
  const std::size_t total = s.total_units();
  SplitRun run;
  run.kernel = kernel_key(spec);
  run.problem = ProblemKey{spec.global_size(s.problem()), s.problem().text};
  run.model = std::string(to_string(model));
  run.makespan_ms = r.makespan.median();
  for (std::size_t i = 0; i < s.devices().size(); ++i) {
    const auto& sl = r.slices[i];
    run.devices.push_back(SplitShare{s.devices()[i].info.fingerprint(),
                                     static_cast<double>(plan.blocks[i].size()) / static_cast<double>(total),
                                     sl.wall.size() ? sl.wall.median() : 0.0});
  }
  json fingerprints = json::array();
  for (std::size_t i : device_set(block_units(plan.blocks))) fingerprints.push_back(s.devices()[i].info.fingerprint());
  const auto* refinement = plan.measured && plan.measured->refinement ? &*plan.measured->refinement : nullptr;
  run.detail = {{"source", "wstune split"},
                {"dim", dim},
                {"units", block_units(plan.blocks)},
                {"device_set", used_device_ids(s.devices(), plan.blocks)},
                {"device_set_fingerprints", fingerprints},
                {"host_finish_ms", r.host_finish_ms},
                {"refinement", refinement ? to_json(*refinement) : json(nullptr)}};
  return run;
}

}  // namespace

SplitRunResult SplitSession::run(const SplitSessionPlan& plan, std::size_t overlap) {
  runner_->set_overlap(overlap);  // the run only: calibration and refinement time whole blocks
  if (options_.measure_energy && !observers_) {
    observers_.emplace();
    for (const auto& d : devices_) observers_->push_back(make_energy_observer(d, EnergyOptions{}).observer);
  }
  std::vector<std::optional<double>> before;
  if (observers_)
    for (const auto& o : *observers_) before.push_back(read_counter_j(o.get()));
  SplitRunResult r = runner_->run(plan.blocks, plan.locals, options_.timing);
  const auto rounds = static_cast<double>(r.makespan.size() + options_.timing.warmup);  // warm-up rounds draw too
  for (std::size_t i = 0; i < before.size(); ++i) {
    r.device_joules.push_back(joules_per_round(before[i], read_counter_j((*observers_)[i].get()), rounds));
  }
  if (r.ok() && store_) {
    for (const auto& d : devices_) store_->put_device(d.info);
    store_->record_split_run(split_run_row(*this, options_.model, options_.dim, plan, r));
  }
  return r;
}

}  // namespace wstune
