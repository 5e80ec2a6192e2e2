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
/// const auto best = wstune::best_configuration(&store, *kernel, p, device_info);  // never empty
/// program.build(best.build_options);   // -D values of the best parameters; best.level says whence
/// @endcode

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "evaluate/trial.hpp"
#include "kernel/kernel.hpp"
#include "metric/metric.hpp"
#include "search/search.hpp"
#include "session/best_configuration.hpp"
#include "session/tune_request.hpp"
#include "session/warm_start.hpp"
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
  /// Warm start (with a store): the search's first proposals are the stored
  /// bests of this kernel at other sizes and on other devices that are valid
  /// here (warm_seeds(), make_seeded_searcher()); an exhaustive or rule
  /// search takes none. Off: a cold start.
  bool warm_start = false;
  /// Energy observation of each correct trial (observe/observer.hpp).
  EnergyOptions energy = {};
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
  std::vector<WarmSeed> seeds;           ///< the warm start's seeds, in the order proposed (none: a cold start)
  /// With two objectives or more: the Pareto front over them, as indices
  /// into result.trials, best first by the first objective (pareto.hpp).
  std::vector<std::size_t> front = {};
  /// Why the first objective did not decide ("" when it did): it needs
  /// energy and the device has no sensor (TuneTarget::energy_note), so the
  /// time did.
  std::string objective_note = {};
  IsolatedEvaluator::PoolCounts pool;  ///< the build pool's work (jobs 0: none)
};

/// `options` for a search of `objectives`: with EnergyOptions::when_needed
/// (`wstune tune --energy auto`, a wstuned tune job's "energy": "auto"),
/// enabled only when one of them needs energy (MetricSet::needs_energy).
EnergyOptions energy_for_objectives(EnergyOptions options, const MetricSet& metrics,
                                    const std::vector<Objective>& objectives);

/// What decides a search's best (TuneOptions::score) and, when its first
/// objective could not, why.
struct ObjectiveDecision {
  /// The first objective's score (objective_score()); empty: the time decides.
  std::function<std::optional<double>(const Trial&)> score = {};
  /// "" when the objective decides; else "NAME needs energy, not measured
  /// (WHY): the time decides" (AutotuneResult::objective_note).
  std::string note = {};
};
/// The decision for `first` over trials measured on `target` (its
/// energy_sensor, energy_note): autotune()'s and wstuned's tune mode's.
ObjectiveDecision decide_objective(const MetricSet& metrics, const Objective& first, const TuneTarget& target);

/// Tunes `spec` for `request` (its problem, strategy, seeds and budget:
/// resolve_tune()) on one device in an isolated worker process
/// (IsolatedEvaluator: a hanging or crashing configuration cannot take the
/// caller down), storing every trial and the best in `store` when it is not
/// null. The best is decided by request.search.objectives' first (time by
/// default; tune()'s TuneOptions::score), and with several objectives their
/// Pareto front is kept (AutotuneResult::front). The caller must not have initialised OpenCL before (the worker is
/// forked). Throws UsageError for a bad device selector, strategy or space,
/// StoreError when the database refuses.
AutotuneResult autotune(const KernelSpec& spec, const ResolvedTune& request, Store* store,
                        const AutotuneOptions& options);

/// autotune()'s search on an evaluator the caller made (`options.device`,
/// trial_timeout, energy and build_jobs are the evaluator's business and
/// not read here): warm-start seeds, the stored session (resumed, every
/// trial committed), tune(), the Pareto front and the stored best, with the
/// time limit counted from `started`. Tuner::build_best's online tuning
/// runs it on an InProcessEvaluator (an app has initialised OpenCL, so no
/// worker can be forked). AutotuneResult::pool stays empty. Throws
/// StoreError when the database refuses.
AutotuneResult autotune_with(Evaluator& evaluator, const KernelSpec& spec, const ResolvedTune& request, Store* store,
                             const AutotuneOptions& options, std::chrono::steady_clock::time_point started);

}  // namespace wstune
