// The one resolver of a tuning request (tune_request.hpp).
#include "session/tune_request.hpp"

#include <algorithm>
#include <chrono>

#include "search/strategies.hpp"
#include "tuning_file/tuning_file.hpp"

namespace wstune {

std::unique_ptr<StopCondition> TuneBudget::stop() const {
  using Clock = std::chrono::steady_clock;
  std::unique_ptr<StopCondition> stop = never_stop();
  if (max_evals) stop = max_evaluations(max_evals);
  if (time_limit_s > 0) {
    auto tl = time_limit(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_s)));
    stop = max_evals ? either(std::move(stop), std::move(tl)) : std::move(tl);
  }
  return stop;
}

SessionSpec TuneBudget::session(std::string_view strategy) const {
  return SessionSpec{std::string(strategy), max_evals ? std::optional<std::int64_t>(max_evals) : std::nullopt,
                     time_limit_s > 0 ? std::optional<double>(time_limit_s) : std::nullopt};
}

std::vector<std::string> ResolvedSearch::objective_names() const {
  if (objectives.size() == 1 && objectives[0] == Objective{}) return {};
  std::vector<std::string> out;
  for (const Objective& o : objectives) out.push_back(to_string(o));
  return out;
}

std::unique_ptr<Searcher> ResolvedSearch::searcher() const {
  return make_searcher(strategy, search_seed);
}

TuneBudget ResolvedSearch::budget(const KernelSpec& spec, const SearchSpace& space) const {
  return TuneBudget{evaluation_budget(max_evals, spec, strategy, space), time_limit_s};
}

Problem resolve_problem(const KernelSpec& spec, std::string_view size) {
  return size.empty() ? spec.paper_size() : spec.parse_size(size);
}

std::string resolve_strategy(const KernelSpec& spec, std::string_view strategy) {
  if (!strategy.empty()) return std::string(strategy);
  if (const TuningFile* file = tuning_file_of(spec); file && !file->strategy.empty()) return file->strategy;
  return "auto";
}

ResolvedSearch resolve_search(const KernelSpec& spec, const TuneRequest& request) {
  const TuningFile* file = tuning_file_of(spec);
  ResolvedSearch r;
  r.strategy = resolve_strategy(spec, request.strategy);
  r.seed = request.seed;
  // A file's Search Seed belongs to its Search: it applies when the file's
  // strategy does.
  r.search_seed = file && file->search_seed && request.strategy.empty() ? *file->search_seed : request.seed;
  r.max_evals = request.max_evals;
  r.time_limit_s = request.time_limit_s > 0       ? request.time_limit_s
                   : file && file->budget_seconds ? *file->budget_seconds
                                                  : 0;
  (void)r.searcher();  // an unknown strategy is a UsageError before anything runs
  if (!request.objectives.empty())
    r.objectives = parse_objectives(request.objectives, MetricSet(spec, Problem{}), "the objectives");
  return r;
}

ResolvedTune resolve_tune(const KernelSpec& spec, const TuneRequest& request) {
  return ResolvedTune{resolve_problem(spec, request.size), resolve_search(spec, request)};
}

unsigned evaluation_budget(unsigned max_evals, const KernelSpec& spec, std::string_view strategy,
                           const SearchSpace& space) {
  const TuningFile* file = tuning_file_of(spec);
  if (max_evals) return max_evals;
  if (file && file->budget_count) return *file->budget_count;
  if (file && file->budget_fraction)
    return std::max(1u, static_cast<unsigned>(*file->budget_fraction * static_cast<double>(space.size() + 1)));
  return default_evaluations(strategy, space);
}

}  // namespace wstune
