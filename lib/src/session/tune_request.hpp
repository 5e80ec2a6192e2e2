#pragma once
/// @file tune_request.hpp
/// The one place that turns what a user asked of a tuning run (a kernel or
/// tuning file, a size text or none, a strategy or none, a seed, a budget)
/// into what runs: the problem, the search strategy and its seed, the
/// evaluation budget and the stop condition. `wstune tune` (through
/// autotune()), wstuned's tune mode (the master's shared search and a
/// worker's block search) and autotune() all resolve here, so a tuning file
/// tunes with the same defaults wherever it is given (issue 35).
///
/// The rules (docs/tuning.md, docs/tuning-files.md):
/// - problem: the size text parsed by the kernel (KernelSpec::parse_size);
///   none: its default (KernelSpec::paper_size(): the paper's Table 3 size,
///   or a tuning file's ProblemSize and size variables, or "fixed" for a file
///   without sizes, where a size text other than "fixed" is refused);
/// - strategy: the request's, else the tuning file's Search, else "auto";
/// - search seed: the tuning file's Search Seed when the request names no
///   strategy, else the request's seed;
/// - evaluations: the request's, else the file's Budget (a
///   ConfigurationCount, or a ConfigurationFraction of the space with the
///   baseline), else the strategy's default (default_evaluations());
/// - time limit: the request's, else the file's TuningDuration, else none.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kernel/kernel.hpp"
#include "metric/metric.hpp"
#include "search/search.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// What a user gave for one tuning run, before any default is applied: the
/// CLI's options (`wstune tune`) or a daemon job's fields.
struct TuneRequest {
  std::string size;         ///< size text (KernelSpec::parse_size()); "" = the kernel's default size
  std::string strategy;     ///< make_searcher() name; "" = the tuning file's Search, else "auto"
  std::uint64_t seed = 42;  ///< input seed, and search seed unless a file's Search Seed applies
  unsigned max_evals = 0;   ///< measured configurations at most; 0 = the file's Budget, else the strategy's default
  double time_limit_s = 0;  ///< seconds of search at most; 0 = the file's TuningDuration, else none
  /// What decides the best: "NAME[:min|max]" or a comma-separated list of
  /// them (the first decides, all of them keep a Pareto front); NAME a
  /// built-in metric (time, energy, power, edp) or the tuning file's
  /// wstune.Metrics (metric/metric.hpp). "" = time.
  std::string objectives = {};
};

/// A search's budget once the space is known: evaluations and seconds.
struct TuneBudget {
  unsigned max_evals = 0;   ///< at most this many evaluations, the baseline included (0: no limit)
  double time_limit_s = 0;  ///< at most this many seconds of search (0: no limit)
  /// The stop condition: the evaluations and the time limit, whichever comes
  /// first; never_stop() when both are 0 (the searcher runs out).
  [[nodiscard]] std::unique_ptr<StopCondition> stop() const;
  /// The stored session's description: `strategy` (the searcher's name) and
  /// this budget (none where 0).
  [[nodiscard]] SessionSpec session(std::string_view strategy) const;
};

/// A TuneRequest's search with every default applied but the evaluations,
/// which need the space (budget()).
struct ResolvedSearch {
  std::string strategy;            ///< the strategy name (make_searcher())
  std::uint64_t seed = 42;         ///< the input seed (KernelSpec::generate_inputs)
  std::uint64_t search_seed = 42;  ///< the searcher's seed
  unsigned max_evals = 0;          ///< the request's evaluations (0: resolved by budget())
  double time_limit_s = 0;         ///< the time limit in seconds (0: none)
  /// The objectives (the first decides the best); {time:min} by default.
  std::vector<Objective> objectives{Objective{}};
  /// The objectives as the store keeps them (SessionSpec::objectives):
  /// "NAME:min|max" each; empty for time alone.
  [[nodiscard]] std::vector<std::string> objective_names() const;
  /// The searcher: make_searcher(strategy, search_seed).
  [[nodiscard]] std::unique_ptr<Searcher> searcher() const;
  /// The budget over `space` of `spec` (the kernel this was resolved for):
  /// evaluation_budget() and the time limit.
  [[nodiscard]] TuneBudget budget(const KernelSpec& spec, const SearchSpace& space) const;
};

/// A TuneRequest resolved: the problem and the search.
struct ResolvedTune {
  Problem problem;        ///< the problem to tune (its text is the stored size)
  ResolvedSearch search;  ///< strategy, seeds and budget
};

/// The problem of `size` for `spec`: KernelSpec::paper_size() when `size`
/// is empty, else KernelSpec::parse_size(size). Throws UsageError naming
/// the size and the fix when the kernel refuses it.
Problem resolve_problem(const KernelSpec& spec, std::string_view size);

/// The strategy of a search of `spec`: `strategy` when not empty, else a
/// tuning file's Search, else "auto". Does not check the name.
std::string resolve_strategy(const KernelSpec& spec, std::string_view strategy);

/// The search of `request` for `spec` with every default applied (the
/// rules in this file's comment; the size is not read). Throws UsageError
/// for an unknown strategy or objective (parse_objectives(), against the
/// built-in metrics and the kernel's user metrics).
ResolvedSearch resolve_search(const KernelSpec& spec, const TuneRequest& request);

/// Every default of `request` for `spec` applied: resolve_problem() and
/// resolve_search(). Throws UsageError for a size the kernel refuses or an
/// unknown strategy.
ResolvedTune resolve_tune(const KernelSpec& spec, const TuneRequest& request);

/// The evaluation budget of a search of `spec` with `strategy` over
/// `space`: `max_evals` when not 0, else a tuning file's Budget (a
/// ConfigurationCount, or a ConfigurationFraction of the space with the
/// baseline, at least 1), else default_evaluations(strategy, space) (guided
/// 20 % of the space, at least 8; genetic, annealing, differential,
/// portfolio and bayes 5 %, at least 20; auto that of its pick; 0, no
/// limit, for the others).
unsigned evaluation_budget(unsigned max_evals, const KernelSpec& spec, std::string_view strategy,
                           const SearchSpace& space);

}  // namespace wstune
