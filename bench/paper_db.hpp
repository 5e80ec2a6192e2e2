#pragma once
// bench_paper's writes into the wstune store. A separate translation unit:
// store.hpp's wstune::Calibration (a stored calibration row) and split.hpp's
// wstune::Calibration (the measured model) share a name, so no file can
// include both headers. This interface uses neither.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/kernel.hpp"
#include "search/search.hpp"
#include "wstune/device.hpp"

namespace wstune::bench {

/// One device's part of a stored split run.
struct PaperShare {
  const DeviceInfo* device = nullptr;  ///< the device
  double share = 0;                    ///< fraction of the split units, 0..1
  double time_ms = 0;                  ///< its time (ms, median wall of upload + kernel + read-back)
};

/// Writes bench_paper's runs, tuning trials and calibrations into a store;
/// does nothing when opened with an empty path. Throws StoreError.
class PaperDb {
 public:
  explicit PaperDb(const std::string& path);
  ~PaperDb();
  /// True when a database is open.
  [[nodiscard]] bool enabled() const noexcept;
  /// Stores a tune() result as a finished "guided" session with all its trials.
  void record_tune(const DeviceInfo& device, const KernelSpec& spec, const Problem& p, const TuneResult& r);
  /// Stores one split run (model: the split model name; detail: method etc.).
  void record_run(const KernelSpec& spec, const Problem& p, const std::string& model, double makespan_ms,
                  const std::vector<PaperShare>& shares, const nlohmann::json& detail);
  /// Stores one device's calibration of the measured model (params: to_json(DeviceCalibration)).
  void record_calibration(const DeviceInfo& device, const KernelSpec& spec, const nlohmann::json& params);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wstune::bench
