#include "master/store_sink.hpp"

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/trial_json.hpp"
#include "protocol/kernel_source.hpp"
#include "protocol/protocol.hpp"
#include "session/autotune.hpp"
#include "session/tune_session.hpp"
#include "store/calibration_row.hpp"
#include "wstune/lookup.hpp"
#include "wstune/store.hpp"

namespace wstune::daemon {

using nlohmann::json;

namespace {

// One group's search in the store: StoredTuneSession (resumes an unfinished
// session whose writer is gone; one trial row per configuration).
class StoreLog final : public TrialLog {
 public:
  StoreLog(Store& store, const KernelSpec& spec, const TuneTarget& target, const SessionSpec& session)
      : session_(store, spec, target, session, true) {}
  std::optional<Trial> stored(const Configuration& c) override { return session_.stored(c); }
  bool record(const Trial& t) override { return session_.record(t); }
  json finish(const TuneResult& result) override {
    const auto best = session_.finish(result);
    return json{{"session", session_.session().id},
                {"resumed", session_.session().resumed},
                {"resumed_trials", session_.stored_at_start()},
                {"best_id", best ? json(best->id) : json(nullptr)}};
  }

 private:
  StoredTuneSession session_;
};

class StoreSink final : public ResultSink {
 public:
  explicit StoreSink(const std::string& path) : store_(path) {}
  const std::string& path() const { return store_.path(); }

  void workers(const std::vector<WorkerState>& workers) override {
    for (const auto& w : workers)
      if (w.device) store_.put_device(*w.device);
  }

  void run(const JobReport& r) override {
    if (r.parts.empty()) return;  // nothing ran: nothing to store
    const auto spec_ptr = master_kernel(r.job.kernel, r.job.kernel_file);
    const KernelSpec& spec = *spec_ptr;
    const Problem p = job_problem(spec, r.size, r.job.config);
    SplitRun run;
    run.kernel = kernel_key(spec);
    run.problem = ProblemKey{spec.global_size(p), p.text};
    run.model = std::string(to_string(r.plan.model));
    run.makespan_ms = r.makespan_ms;
    for (const auto& part : r.parts) run.devices.push_back(SplitShare{part.fingerprint, part.share, part.device_ms()});
    run.detail = to_json(r);
    run.detail["source"] = "wstuned";
    json used = json::array();  // the devices the split gave a slice, as `wstune split` records them
    for (const auto& part : r.parts) {
      if (part.share > 0) used.push_back(part.fingerprint);
    }
    run.detail["device_set_fingerprints"] = used;
    store_.record_split_run(run);
    // Trials of the tune policy: one session per worker block.
    for (const auto& part : r.parts) {
      if (part.trials.is_object() && part.trials.contains("trials")) {
        record_trials(fingerprint_device(part.fingerprint), spec,
                      ProblemKey{spec.block_global(p, part.block), p.text + " block"}, part.trials);
      }
    }
  }

  // The trials are in the group's session already (open_trial_log()).
  void tuned(const WorkerState&, const Job&, const std::string&, const json&) override {}

  std::unique_ptr<TrialLog> open_trial_log(const KernelSpec& spec, const TuneTarget& target,
                                           const SessionSpec& session) override {
    return std::make_unique<StoreLog>(store_, spec, target, session);
  }

  bool tuned_before(const KernelSpec& spec, const Problem& p, const DeviceInfo& device) override {
    return stored_configuration(store_, spec, p, device).has_value();
  }

  void calibrated(const WorkerState& w, const Job& job, const std::string& size, const CalibrationRow& cal) override {
    const auto spec_ptr = master_kernel(job.kernel, job.kernel_file);
    CalibrationRow row = cal;
    row.size = size;
    put_calibration_row(store_, w.device->fingerprint(), kernel_key(*spec_ptr), row);
  }

  std::optional<LocalSize> stored_local(const DeviceInfo& d, const KernelSpec& spec, const Extent& block,
                                        const Extent& whole) override {
    // A stored best of a kernel with tuning parameters belongs to its
    // parameter values, which a run job sets itself (config): the rule then.
    if (!spec.tuning_parameters().empty()) return std::nullopt;
    const KernelKey key = kernel_key(spec);
    if (auto best = store_.exact_best(d.fingerprint(), key, block)) return best->local;
    if (auto best = store_.exact_best(d.fingerprint(), key, whole)) {
      if (local_fits(best->local, block, d)) return best->local;
    }
    return std::nullopt;
  }

  bool stored(Mode mode, const std::string& key, std::size_t index, const Job& job, const std::string& size,
              const WorkerState* w) override {
    const auto spec_ptr = master_kernel(job.kernel, job.kernel_file);
    const KernelSpec& spec = *spec_ptr;
    if (mode == Mode::run) {
      for (const SplitRun& run : store_.split_runs(spec.entry_point())) {
        const json& d = run.detail;
        if (d.value("run_key", "") == key && d.value("index", std::size_t{0}) == index && d.value("status", "") == "ok")
          return true;
      }
      return false;
    }
    if (!w || !w->device) return false;
    const std::string fp = w->device->fingerprint();
    if (mode == Mode::calibrate) {
      const auto c = newest_calibration_row(store_, fp, spec.entry_point());
      return c && c->row.size == size;
    }
    const Problem p = spec.parse_size(size);
    const ProblemKey problem{spec.global_size(p), p.text};
    const KernelKey kernel = kernel_key(spec);
    for (const SessionRecord& s : store_.sessions()) {
      if (s.ended_at && s.device_fingerprint == fp && s.kernel == kernel && s.problem == problem) return true;
    }
    return false;
  }

  std::optional<DeviceCalibration> calibration(const DeviceInfo& d, const KernelSpec& spec) override {
    const auto c = newest_calibration_row(store_, d.fingerprint(), spec.entry_point());
    return c ? std::optional<DeviceCalibration>(c->row.device) : std::nullopt;
  }

 private:
  DeviceInfo fingerprint_device(const std::string& fp) {
    auto d = store_.device(fp);
    if (!d) throw StoreError(fmt::format("device {} is not in the database", fp));
    return *d;
  }

  // A search's trials (tasks.hpp format) as one session, its best derived.
  void record_trials(const DeviceInfo& device, const KernelSpec& spec, const ProblemKey& problem, const json& result) {
    const json& trials = result.at("trials");
    SessionSpec sspec{result.value("strategy", "daemon"), static_cast<std::int64_t>(trials.size()), std::nullopt};
    const SessionRecord s = store_.open_session(device, kernel_key(spec), problem, sspec, false);
    std::vector<TrialRecord> records;
    for (std::size_t i = 0; i < trials.size(); ++i) {
      const Trial t = trial_from_json(trials[i], fmt::format("the tune result's trials[{}]", i));
      TrialRecord rec;
      rec.local = t.local;
      rec.status = t.status;
      rec.error = t.error;
      rec.samples_ms = t.kernel.ms;
      rec.run_ms = t.run_wall_ms;
      records.push_back(std::move(rec));
    }
    store_.add_trials(s.id, records);
    const LocalSize rule = parse_local_size(result.value("rule", "null"), "rule local size");
    store_.derive_best(s.id, rule ? &rule : nullptr);
    store_.end_session(s.id);
  }

  Store store_;
};

}  // namespace

std::pair<std::unique_ptr<ResultSink>, std::string> open_store_sink(const std::string& path) {
  const std::string where = path.empty() ? default_db_path() : path;
  auto sink = std::make_unique<StoreSink>(where);
  std::string opened = sink->path();
  return {std::move(sink), opened};
}

}  // namespace wstune::daemon
