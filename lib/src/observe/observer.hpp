#pragma once
/// @file observer.hpp
/// Energy observers (internal): a device's cumulative energy counter read
/// through a small interface, so one trial's energy and average power are
/// the counter's difference over an observation window of back-to-back
/// kernel runs (observe_window()). Implementations: NVML for NVIDIA GPUs
/// (nvml.hpp, loaded at run time), RAPL through Linux powercap for CPU
/// packages (rapl.hpp); ROCm SMI and others fit the same interface.
/// make_energy_observer() picks one for an OpenCL device, or says why none.
/// Nothing here changes clocks or power limits. See docs/energy.md.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "wstune/device.hpp"
#include "wstune/energy.hpp"

namespace wstune {

/// powercap's root: $WSTUNE_POWERCAP_ROOT when set and not empty (a fake
/// sysfs tree in tests of a process the test cannot reach into, e.g. a
/// wstuned worker), else /sys/class/powercap.
std::string default_powercap_root();

/// A cumulative energy counter of one device.
class EnergyObserver {
 public:
  virtual ~EnergyObserver() = default;
  /// "nvml", "rapl", ... (EnergyMeasurement::sensor).
  [[nodiscard]] virtual std::string_view sensor() const = 0;
  /// Energy since the observer started (J), never decreasing: a counter
  /// that wraps is unwrapped here. Throws Error when the counter cannot be
  /// read any more.
  virtual double read_j() = 0;
  /// The counter's unit (J).
  [[nodiscard]] virtual double resolution_j() const = 0;
  /// The counter's update period (ms), set by measure_update_period(); 0 unknown.
  [[nodiscard]] double update_period_ms() const noexcept { return period_ms_; }
  /// Sets update_period_ms().
  void set_update_period_ms(double ms) noexcept { period_ms_ = ms; }

 private:
  double period_ms_ = 0;
};

/// How trials observe energy.
struct EnergyOptions {
  bool enabled = true;  ///< false: no observer, no energy (tune --energy off)
  /// The observation window covers at least this many update periods of
  /// the sensor (so each end's staleness is at most 1/periods of it) ...
  unsigned periods = 10;
  /// ... and at least this many ms.
  double min_window_ms = 20;
  /// powercap's root: default_powercap_root() (tests point it at a fake sysfs tree).
  std::string powercap_root = default_powercap_root();
  /// With `enabled`: observe only when an objective needs energy
  /// (MetricSet::needs_energy; tune --energy auto, the default), as an
  /// observation window of about ten sensor periods (about 1 s a
  /// configuration with NVML on the H100) would otherwise slow every tune.
  bool when_needed = false;
};

/// Whether `mode` is one of the energy modes "auto", "on", "off" (`wstune
/// tune --energy`, the job key "energy", wstune_autotune_options.energy).
[[nodiscard]] bool is_energy_mode(const std::string& mode);

/// The EnergyOptions of an energy mode: "off" disabled, "auto" only when
/// an objective needs energy, "on" always. `mode` must pass is_energy_mode().
[[nodiscard]] EnergyOptions energy_options_of(const std::string& mode);

/// An observer for a device, or why there is none.
struct ObserverChoice {
  std::unique_ptr<EnergyObserver> observer;  ///< null when none is available
  std::string why_not;                       ///< "" when there is one
};

/// The observer of `device`: NVML for an NVIDIA GPU (matched by PCI bus id,
/// nvml.hpp), RAPL for a CPU device where powercap is readable (rapl.hpp);
/// otherwise none, with why. Measures the chosen sensor's update period.
/// Never throws: a missing library or sensor is an answer, not an error.
ObserverChoice make_energy_observer(const Device& device, const EnergyOptions& options);

/// The counter's update period (ms): the time between two successive
/// changes of read_j(), polled every `poll`, giving up after `limit`
/// (then 0). `read` and the clock are the observer's own.
double measure_update_period(EnergyObserver& o, std::chrono::milliseconds limit = std::chrono::milliseconds(1000),
                             std::chrono::microseconds poll = std::chrono::microseconds(200));

/// The counter of `o` (J): none without an observer (null) or when the
/// read fails (read_j() threw).
std::optional<double> read_counter_j(EnergyObserver* o) noexcept;

/// The joules of one round of work between two readings of a counter
/// (read_counter_j()) over `rounds` rounds (warm-up rounds included: they
/// draw too): none when a reading is missing or rounds is 0. The device's
/// whole draw, idle included, as the counter counts it; a run shorter than
/// the sensor's update period is stale by up to one period at each end.
std::optional<double> joules_per_round(std::optional<double> before, std::optional<double> after, double rounds);

/// Kernel runs for a window of `window_ms` at `median_ms` per run: at least 1, at most 1e6.
unsigned window_runs(double window_ms, double median_ms);

/// The window an observer needs (ms): max(options.min_window_ms,
/// options.periods × its update period).
double window_ms(const EnergyObserver& o, const EnergyOptions& options);

/// Reads the counter, calls `run` (which runs `runs` kernel launches back
/// to back and returns when they finished), reads it again: power is the
/// difference over the wall time between the reads, the energy of one run
/// power × `median_ms`. Throws what `run` or read_j() throws.
EnergyMeasurement observe_window(EnergyObserver& o, unsigned runs, double median_ms, const std::function<void()>& run);

}  // namespace wstune
