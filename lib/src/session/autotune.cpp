// Tuning a kernel end to end and looking up its stored best (autotune.hpp).
#include "session/autotune.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "search/strategies.hpp"
#include "session/tune_session.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

using Clock = std::chrono::steady_clock;

// The stop condition: the evaluation budget and the time limit, whichever
// comes first (none: the searcher runs out).
std::unique_ptr<StopCondition> stop_condition(unsigned max_evals, double time_limit_s) {
  std::unique_ptr<StopCondition> stop = never_stop();
  if (max_evals) stop = max_evaluations(max_evals);
  if (time_limit_s > 0) {
    auto tl = time_limit(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_s)));
    stop = max_evals ? either(std::move(stop), std::move(tl)) : std::move(tl);
  }
  return stop;
}

}  // namespace

unsigned evaluation_budget(unsigned max_evals, const KernelSpec& spec, std::string_view strategy,
                           const SearchSpace& space) {
  const TuningFile* file = tuning_file_of(spec);
  if (max_evals) return max_evals;
  if (file && file->budget_count) return *file->budget_count;
  if (file && file->budget_fraction)
    return std::max(1u, static_cast<unsigned>(*file->budget_fraction * static_cast<double>(space.size() + 1)));
  return default_evaluations(strategy, space);
}

AutotuneResult autotune(const KernelSpec& spec, const Problem& p, Store* store, const AutotuneOptions& options) {
  const TuningFile* file = tuning_file_of(spec);
  std::string strategy = options.strategy;
  if (strategy.empty()) strategy = file && !file->strategy.empty() ? file->strategy : "auto";
  const std::uint64_t seed = file && file->search_seed && options.strategy.empty() ? *file->search_seed : options.seed;
  auto searcher = make_searcher(strategy, seed);

  EvaluatorConfig cfg;
  cfg.device = options.device == "default" && file && !file->device.empty() ? file->device : options.device;
  cfg.seed = options.seed;
  cfg.trial_timeout = options.trial_timeout;
  IsolatedEvaluator evaluator(spec, p, cfg);

  AutotuneResult out;
  out.max_evals = evaluation_budget(options.max_evals, spec, strategy, evaluator.space());
  const double seconds = options.time_limit_s > 0       ? options.time_limit_s
                         : file && file->budget_seconds ? *file->budget_seconds
                                                        : 0;
  const auto stop = stop_condition(out.max_evals, seconds);

  std::optional<StoredTuneSession> session;
  TuneOptions topt = options.tune;
  if (store) {
    const SessionSpec sspec{std::string(searcher->name()),
                            out.max_evals ? std::optional<std::int64_t>(out.max_evals) : std::nullopt,
                            seconds > 0 ? std::optional<double>(seconds) : std::nullopt};
    session.emplace(*store, spec, evaluator.target(), sspec, options.resume);
    session->attach(topt);
    out.session = session->session();
    out.resumed_trials = session->stored_at_start();
  }
  if (options.on_start) options.on_start(evaluator, out);
  out.result = tune(evaluator, *searcher, *stop, topt);
  if (session) out.best = session->finish(out.result);
  return out;
}

std::optional<StoredConfiguration> stored_configuration(const Store& store, const KernelSpec& spec, const Problem& p,
                                                        const DeviceInfo& device) {
  const KernelKey key = kernel_key(spec);
  BestFilter f;
  f.device = device.fingerprint();
  f.kernel = key.name;
  for (const BestConfig& b : store.best_configs(f)) {  // newest first
    if (!(b.kernel == key) || b.problem.size_text != p.text) continue;
    StoredConfiguration s;
    s.config = Configuration{b.params, b.local};
    const std::string own = spec.build_options(with_params(p, b.params));  // CompilerOptions and -D values
    s.build_options = own.empty() ? "-cl-std=CL1.2" : "-cl-std=CL1.2 " + own;
    s.row = b;
    return s;
  }
  return std::nullopt;
}

}  // namespace wstune
