// Tuning a kernel end to end and looking up its stored best (autotune.hpp).
#include "session/autotune.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "metric/pareto.hpp"
#include "session/tune_session.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

namespace wstune {

EnergyOptions energy_for_objectives(EnergyOptions options, const MetricSet& metrics,
                                    const std::vector<Objective>& objectives) {
  if (options.enabled && options.when_needed)
    options.enabled = std::any_of(objectives.begin(), objectives.end(),
                                  [&](const Objective& o) { return metrics.needs_energy(o.name); });
  return options;
}

ObjectiveDecision decide_objective(const MetricSet& metrics, const Objective& first, const TuneTarget& target) {
  ObjectiveDecision d;
  if (needs_energy(first) && target.energy_sensor.empty())
    d.note = fmt::format("{} needs energy, not measured ({}): the time decides", to_string(first), target.energy_note);
  else if (!(first == Objective{}))
    d.score = objective_score(metrics, first);
  return d;
}

AutotuneResult autotune(const KernelSpec& spec, const ResolvedTune& request, Store* store,
                        const AutotuneOptions& options) {
  const auto started = std::chrono::steady_clock::now();  // a time limit counts the worker's setup too
  const TuningFile* file = tuning_file_of(spec);
  const ResolvedSearch& search = request.search;

  EvaluatorConfig cfg;
  cfg.device = options.device == "default" && file && !file->device.empty() ? file->device : options.device;
  cfg.seed = search.seed;
  cfg.trial_timeout = options.trial_timeout;
  const MetricSet metrics(spec, request.problem);
  cfg.energy = energy_for_objectives(options.energy, metrics, search.objectives);
  cfg.build_jobs = options.build_jobs;
  IsolatedEvaluator evaluator(spec, request.problem, cfg);
  AutotuneResult out = autotune_with(evaluator, spec, request, store, options, started);
  out.pool = evaluator.pool_counts();
  return out;
}

AutotuneResult autotune_with(Evaluator& evaluator, const KernelSpec& spec, const ResolvedTune& request, Store* store,
                             const AutotuneOptions& options, std::chrono::steady_clock::time_point started) {
  const ResolvedSearch& search = request.search;
  auto searcher = search.searcher();
  const MetricSet metrics(spec, request.problem);
  AutotuneResult out;
  TuneOptions topt = options.tune;
  ObjectiveDecision decision = decide_objective(metrics, search.objectives.front(), evaluator.target());
  out.objective_note = std::move(decision.note);
  if (decision.score) topt.score = std::move(decision.score);
  const TuneBudget budget = search.budget(spec, evaluator.space());
  out.max_evals = budget.max_evals;
  const auto stop = budget.stop();
  if (store && options.warm_start && search.strategy != "exhaustive" && search.strategy != "rule") {
    out.seeds = warm_seeds(*store, spec, request.problem, evaluator.target().device);
    std::vector<Configuration> seeds;
    for (const WarmSeed& s : out.seeds) seeds.push_back(s.config);
    searcher = make_seeded_searcher(std::move(searcher), std::move(seeds));
  }

  std::optional<StoredTuneSession> session;
  if (!topt.started) topt.started = started;
  if (store) {
    SessionSpec spec_row = budget.session(searcher->name());
    spec_row.objectives = search.objective_names();
    session.emplace(*store, spec, evaluator.target(), spec_row, options.resume);
    session->attach(topt);
    out.session = session->session();
    out.resumed_trials = session->stored_at_start();
  }
  if (options.on_start) options.on_start(evaluator, out);
  out.result = tune(evaluator, *searcher, *stop, topt);
  if (search.objectives.size() > 1) out.front = pareto_front(out.result.trials, search.objectives, metrics);
  if (session) out.best = session->finish(out.result);
  return out;
}

}  // namespace wstune
