#pragma once
/// @file energy.hpp
/// What an energy observer measured for one trial on one device: the energy
/// of one kernel run (J) and the device's average power while the kernel
/// ran back to back (W), with the sensor and its resolution. Measured on the
/// device's own counter (NVML's total-energy counter for NVIDIA GPUs,
/// RAPL through Linux powercap for CPU packages); nothing changes clocks
/// or power limits. See docs/energy.md.

#include <string>

namespace wstune {

/// One trial's energy on its device.
struct EnergyMeasurement {
  std::string sensor = {};  ///< "nvml" (GPU board), "rapl" (CPU packages), ...
  /// Energy of one kernel run (J): power_w × the trial's median kernel time.
  double energy_j = 0;
  /// Average power over the observation window (W): the counter's
  /// difference over the window's wall time.
  double power_w = 0;
  double window_ms = 0;  ///< wall time of the observation window (ms)
  unsigned runs = 0;     ///< kernel runs, back to back, inside the window
  /// The counter's unit (J): 0.001 for NVML (mJ), 1e-6 for RAPL (µJ).
  double resolution_j = 0;
  /// The sensor's update period, measured when the observer started (ms):
  /// the counter changes this often, so a reading is stale by up to one
  /// period at each end of the window (0 when unknown).
  double update_period_ms = 0;
  /// Relative uncertainty of power_w from the update period: 2 ×
  /// update_period_ms / window_ms (each end stale by up to one period).
  [[nodiscard]] double relative_uncertainty() const noexcept {
    return window_ms > 0 ? 2 * update_period_ms / window_ms : 0;
  }
  /// Wall time the observer's counter reads took in this trial (ms): the
  /// observer's own overhead, beside the window's kernel runs.
  double read_ms = 0;
  friend bool operator==(const EnergyMeasurement&, const EnergyMeasurement&) = default;
};

}  // namespace wstune
