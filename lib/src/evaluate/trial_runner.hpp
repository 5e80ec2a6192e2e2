#pragma once
/// @file trial_runner.hpp
/// The part of an evaluator that owns OpenCL (internal): it builds the
/// kernel, uploads the whole problem's inputs once, computes the CPU
/// reference, and runs one configuration per trial, verifying its outputs
/// the first time the configuration runs. InProcessEvaluator runs it in the
/// caller's process, IsolatedEvaluator in its forked worker.

#include <set>
#include <string>
#include <vector>

#include "evaluate/trial.hpp"
#include "evaluate/trial_energy.hpp"

namespace wstune {

/// Runs trials of one kernel and problem on one device.
class TrialRunner {
 public:
  /// Selects `cfg.device`, builds `spec` with `cfg.build_options`, generates
  /// the inputs from `cfg.seed`, computes the reference and uploads the
  /// inputs. A problem without parameter values runs with the reference ones
  /// (a described kernel's NDRange and buffers depend on them). Throws
  /// UsageError for a bad selector, BuildError when the kernel does not
  /// compile, ClError otherwise. `spec` must outlive the runner.
  TrialRunner(const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& cfg);
  /// The target: the whole problem on the selected device and built kernel.
  [[nodiscard]] const TuneTarget& target() const { return target_; }
  /// Builds the programs of `upcoming` now, several at once (DeviceRunner::prebuild).
  void prepare(const std::vector<Configuration>& upcoming);
  /// Runs `config` with `timing`; failures are the trial's status. Sets
  /// every field but wall_ms (the caller's) and from_store. With an energy
  /// observer (EvaluatorConfig::energy, observe/observer.hpp), a
  /// configuration's first correct trial then runs back to back for the observation window
  /// (window_ms(), window_runs()) and Trial::energy is what it measured.
  Trial run(const Configuration& config, const TimingOptions& timing);

 private:
  const KernelSpec& spec_;
  Problem p_;
  Block whole_;
  DeviceRunner runner_;
  std::vector<HostBuffer> ref_;
  std::set<std::string> verified_;  // configuration keys whose outputs were verified
  TuneTarget target_;
  TrialEnergy energy_;  // the trials' energy observation (none without a sensor)
};

}  // namespace wstune
