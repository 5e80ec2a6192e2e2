#pragma once
/// @file memory_sink.hpp
/// The master's ResultSink without a database (wstuned --no-store, tests).

#include "master/master.hpp"

namespace wstune::daemon {

/// A ResultSink that keeps everything in memory (tests, --no-store).
class MemorySink : public ResultSink {
 public:
  void workers(const std::vector<WorkerState>& w) override { registered = w; }
  void run(const JobReport& r) override { runs.push_back(r); }
  void tuned(const WorkerState& w, const Job& j, const std::string& size, const nlohmann::json& r) override;
  void calibrated(const WorkerState& w, const Job& j, const std::string& size, const CalibrationRow& c) override;
  std::optional<LocalSize> stored_local(const DeviceInfo& d, const KernelSpec& kernel, const Extent& block,
                                        const Extent& whole) override;
  std::optional<DeviceCalibration> calibration(const DeviceInfo& d, const KernelSpec& kernel) override;
  std::unique_ptr<TrialLog> open_trial_log(const KernelSpec& spec, const TuneTarget& target,
                                           const SessionSpec& session) override;
  bool tuned_before(const KernelSpec& spec, const Problem& p, const DeviceInfo& device) override;
  bool stored(Mode mode, const std::string& run_key, std::size_t index, const Job& job, const std::string& size,
              const WorkerState* worker) override;
  std::vector<WorkerState> registered;                    ///< from workers()
  std::vector<JobReport> runs;                            ///< from run()
  nlohmann::json tune_results = nlohmann::json::array();  ///< {rank, fingerprint, kernel, size, result}
  /// One worker's calibration, as calibrated() got it.
  struct Calibrated {
    int rank = 0;             ///< the worker's rank
    std::string fingerprint;  ///< its device's fingerprint
    std::string kernel;       ///< the job's kernel name
    std::string size;         ///< the problem's size text
    CalibrationRow row;       ///< the calibration
  };
  std::vector<Calibrated> calibrations;  ///< from calibrated(), in order
  /// Every committed trial: {fingerprint, kernel, size, trial (to_json(Trial), format/trial_json.hpp)}.
  nlohmann::json trials = nlohmann::json::array();
};

}  // namespace wstune::daemon
