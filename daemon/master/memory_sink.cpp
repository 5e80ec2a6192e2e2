// The in-memory ResultSink (wstuned --no-store, tests).
#include "master/memory_sink.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <ostream>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/trial_json.hpp"
#include "master/router.hpp"
#include "protocol/kernel_source.hpp"
#include "search/strategies.hpp"
#include "session/autotune.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/store.hpp"

#include "master/master_util.hpp"

namespace wstune::daemon {

void MemorySink::tuned(const WorkerState& w, const Job& j, const std::string& size, const json& r) {
  tune_results.push_back(json{{"rank", w.rank},
                              {"fingerprint", w.device ? w.device->fingerprint() : ""},
                              {"kernel", j.kernel},
                              {"size", size},
                              {"result", r}});
}
void MemorySink::calibrated(const WorkerState& w, const Job& j, const std::string& size, const CalibrationRow& c) {
  calibrations.push_back(Calibrated{w.rank, w.device ? w.device->fingerprint() : "", j.kernel, size, c});
}
std::optional<LocalSize> MemorySink::stored_local(const DeviceInfo&, const KernelSpec&, const Extent&, const Extent&) {
  return std::nullopt;
}

namespace {
// A session kept in memory (--no-store, tests): trials go to the sink's list.
class MemoryLog final : public TrialLog {
 public:
  MemoryLog(json& list, json base) : list_(list), base_(std::move(base)) {}
  // Nothing from before the session (a session in memory is never
  // resumed). What this session recorded is not "stored": tune() would take
  // a trial a worker measured ahead as a stored one, count no evaluation
  // for it and never collect it from the evaluator (the budget overrun and
  // the stalled look-ahead of --no-store before 2026-11-24).
  std::optional<Trial> stored(const Configuration&) override { return std::nullopt; }
  bool record(const Trial& t) override {
    if (!mine_.insert(t.configuration().key()).second) return false;
    json e = base_;
    e["trial"] = to_json(t);
    list_.push_back(std::move(e));
    return true;
  }
  json finish(const TuneResult&) override { return json{{"session", nullptr}, {"resumed_trials", 0}}; }

 private:
  json& list_;
  json base_;
  std::set<std::string> mine_;  // configurations recorded (one row each)
};
}  // namespace

std::unique_ptr<TrialLog> MemorySink::open_trial_log(const KernelSpec& spec, const TuneTarget& target,
                                                     const SessionSpec&) {
  return std::make_unique<MemoryLog>(
      trials, json{{"fingerprint", target.device_fingerprint}, {"kernel", spec.name()}, {"size", target.size}});
}

bool MemorySink::tuned_before(const KernelSpec& spec, const Problem& p, const DeviceInfo& device) {
  return std::any_of(tune_results.begin(), tune_results.end(), [&](const json& e) {
    return e["fingerprint"] == device.fingerprint() && e["kernel"] == spec.name() && e["size"] == p.text;
  });
}
bool MemorySink::stored(Mode mode, const std::string& key, std::size_t index, const Job& job, const std::string& size,
                        const WorkerState* w) {
  if (mode == Mode::run) {
    return std::any_of(runs.begin(), runs.end(), [&](const JobReport& r) {
      return r.run_key == key && r.index == index && r.status == JobStatus::ok;
    });
  }
  const std::string fp = w && w->device ? w->device->fingerprint() : "";
  if (mode == Mode::calibrate) {
    return std::any_of(calibrations.begin(), calibrations.end(), [&](const Calibrated& c) {
      return c.fingerprint == fp && c.kernel == job.kernel && c.size == size;
    });
  }
  return std::any_of(tune_results.begin(), tune_results.end(), [&](const json& e) {
    return e["fingerprint"] == fp && e["kernel"] == job.kernel && e["size"] == size;
  });
}

std::optional<DeviceCalibration> MemorySink::calibration(const DeviceInfo& d, const KernelSpec& kernel) {
  std::optional<DeviceCalibration> found;
  for (const auto& c : calibrations)
    if (c.fingerprint == d.fingerprint() && c.kernel == kernel.name()) found = c.row.device;
  return found;
}

}  // namespace wstune::daemon
