// Tuner::build_best's online tuning of a tuning file's parameters (build_best_online.hpp).
#include "app/build_best_online.hpp"

#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "evaluate/trial.hpp"
#include "session/autotune.hpp"
#include "session/tune_request.hpp"
#include "wstune/error.hpp"

namespace wstune::detail {

void check_budget(const BuildBestOnline& online) {
  if (!online.enabled) return;
  if (online.max_evals == 0)
    throw UsageError(
        "BuildBestOnline::max_evals is 0 (C: wstune_set_build_best_online's max_evals): online tuning "
        "needs at least 1 configuration; give 1 or more, or disable it");
  if (online.max_time.count() <= 0)
    throw UsageError(
        fmt::format("BuildBestOnline::max_time is {} ms (C: wstune_set_build_best_online's max_time_ms): "
                    "online tuning needs a time bound; give 1 ms or more, or disable it",
                    online.max_time.count()));
}

OnlineParamsTuning tune_parameters_online(Store& store, const KernelSpec& spec, const Problem& p,
                                          const DeviceInfo& device, const BuildBestOnline& online) noexcept {
  OnlineParamsTuning out;
  try {
    const auto started = std::chrono::steady_clock::now();
    TuneRequest request;
    request.size = p.text;
    request.max_evals = online.max_evals;
    request.time_limit_s = std::chrono::duration<double>(online.max_time).count();
    const ResolvedTune tune = resolve_tune(spec, request);
    EvaluatorConfig config;
    config.device = device.id();  // "P:D": the queue's device
    config.seed = tune.search.seed;
    InProcessEvaluator evaluator(spec, tune.problem, config);
    AutotuneOptions options;
    options.warm_start = true;
    const AutotuneResult r = autotune_with(evaluator, spec, tune, &store, options, started);
    out.evaluations = static_cast<unsigned>(r.result.trials.size());
    out.stored = r.best.has_value();
    if (!out.stored)
      out.note = fmt::format("online tuning measured {} configurations and none ran correctly", out.evaluations);
  } catch (const std::exception& e) {
    out.note = fmt::format("online tuning failed: {}", e.what());
  } catch (...) {
    out.note = "online tuning failed: unknown error";
  }
  return out;
}

}  // namespace wstune::detail
