#pragma once
/// @file trial_energy.hpp
/// A trial's energy observation (internal): a configuration's first
/// correct trial runs back to back for the observer's window (window_ms(),
/// window_runs()) and the observer's counter is read around the runs
/// (observe_window()). One copy for every evaluator that owns a
/// DeviceRunner: TrialRunner (the CLI's, autotune()'s) and a wstuned
/// worker's (daemon/worker/tasks.hpp). See docs/energy.md.

#include <memory>
#include <optional>
#include <string>

#include "evaluate/trial.hpp"
#include "observe/observer.hpp"
#include "runner/runner.hpp"

namespace wstune {

/// Observes trials' energy on one device, or says why not.
class TrialEnergy {
 public:
  /// None: every observe() is empty; `why_not` says why (TuneTarget::energy_note).
  explicit TrialEnergy(std::string why_not = "energy observation is off");
  /// Observes with `observer` (shared: a wstuned worker opens its device's
  /// once) over windows of window_ms(*observer, options); null: none, with `why_not`.
  TrialEnergy(std::shared_ptr<EnergyObserver> observer, std::string why_not, const EnergyOptions& options);
  /// make_energy_observer() of `device` with `options` (never throws).
  static TrialEnergy open(const Device& device, const EnergyOptions& options);
  /// Whether trials are observed.
  [[nodiscard]] bool active() const noexcept { return observer_ != nullptr; }
  /// Writes the sensor (or "") and why none observes into `t`.
  void describe(TuneTarget& t) const;
  /// Runs `local` on block `b` of `p` (already uploaded to `runner`) back to
  /// back for the window, at `median_ms` a run, reading the counter around
  /// the runs. None without an observer, when a run fails or the counter
  /// stops answering (the trial then has no energy; never throws Error).
  std::optional<EnergyMeasurement> observe(DeviceRunner& runner, const Problem& p, const Block& b,
                                           const LocalSize& local, double median_ms);

 private:
  std::shared_ptr<EnergyObserver> observer_;  // null without a sensor
  std::string why_not_;
  double window_ms_ = 0;  // the observation window (ms)
};

}  // namespace wstune
