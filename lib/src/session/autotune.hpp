#pragma once
/// @file autotune.hpp
/// Tuning a kernel end to end, as `wstune tune` does: a measured search of
/// its configurations (tuning parameters × local size) on one device, every
/// trial committed to the store as it is measured (a killed session
/// resumes), the best configuration recorded; and the look-up of that best
/// configuration with the build options to compile the kernel with. The same
/// path serves wstune's built-in kernels and kernels described by a T1
/// tuning file (tuning_file.hpp).
///
/// @code
/// auto kernel = wstune::load_tuning_file("share/examples/kernels/matmul_tiled.json");
/// const wstune::ResolvedTune request = wstune::resolve_tune(*kernel, {.size = "1024x1024x1024"});
/// const wstune::Problem& p = request.problem;
/// wstune::Store store(wstune::default_db_path());
/// wstune::autotune(*kernel, request, &store, {});
/// if (auto best = wstune::stored_configuration(store, *kernel, p, device_info))
///   program.build(best->build_options);   // -D values of the best parameters
/// @endcode

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "evaluate/trial.hpp"
#include "kernel/kernel.hpp"
#include "search/search.hpp"
#include "session/tune_request.hpp"
#include "wstune/store.hpp"

namespace wstune {

struct AutotuneResult;

/// How autotune() measures (what it searches, and for how long, is the
/// ResolvedTune it is given: tune_request.hpp).
struct AutotuneOptions {
  std::string device = "default";  ///< device selector (select_devices()); a tuning file's Device when "default"
  TuneOptions tune;                ///< timing, tie rounds and observer (on_trial) of tune()
  /// Per-trial limit: the isolated worker is killed and the trial is a timeout past it.
  std::chrono::milliseconds trial_timeout{60'000};
  bool resume = true;  ///< reuse an unfinished session of the same device, kernel, problem, strategy
  /// Builder processes ahead of the timed runs (EvaluatorConfig::build_jobs:
  /// -1 = default_build_jobs() of the device's type, 0 = none).
  int build_jobs = -1;
  /// Called once the evaluator has started, before the first trial, with the
  /// result so far (its session, resumed trials and budget; e.g. to print a
  /// header or size a progress line).
  std::function<void(const Evaluator&, const AutotuneResult&)> on_start;
};

/// What autotune() did.
struct AutotuneResult {
  TuneResult result;                     ///< the search (tune())
  std::optional<BestConfig> best;        ///< the stored best (none without a store or a correct trial)
  std::optional<SessionRecord> session;  ///< the stored session (none without a store)
  std::size_t resumed_trials = 0;        ///< trials taken from an unfinished session
  unsigned max_evals = 0;                ///< the evaluation budget applied (0: none)
  IsolatedEvaluator::PoolCounts pool;    ///< the build pool's work (jobs 0: none)
};

/// Tunes `spec` for `request` (its problem, strategy, seeds and budget:
/// resolve_tune()) on one device in an isolated worker process
/// (IsolatedEvaluator: a hanging or crashing configuration cannot take the
/// caller down), storing every trial and the best in `store` when it is not
/// null. The caller must not have initialised OpenCL before (the worker is
/// forked). Throws UsageError for a bad device selector, strategy or space,
/// StoreError when the database refuses.
AutotuneResult autotune(const KernelSpec& spec, const ResolvedTune& request, Store* store,
                        const AutotuneOptions& options);

/// A stored best configuration, ready to build with.
struct StoredConfiguration {
  Configuration config;       ///< its parameters and local size
  std::string build_options;  ///< "-cl-std=CL1.2", the kernel's own options and the parameters' -D values
  BestConfig row;             ///< the stored row (times, ratio to the baseline, session)
};

/// The current best configuration of `spec` (identity: kernel_key()) for
/// problem `p` (its size text) on `device` (its fingerprint), or nullopt
/// when none is stored. Throws StoreError on a database failure.
std::optional<StoredConfiguration> stored_configuration(const Store& store, const KernelSpec& spec, const Problem& p,
                                                        const DeviceInfo& device);

}  // namespace wstune
