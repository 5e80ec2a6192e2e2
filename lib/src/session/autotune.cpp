// Tuning a kernel end to end and looking up its stored best (autotune.hpp).
#include "session/autotune.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "session/tune_session.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

namespace wstune {
AutotuneResult autotune(const KernelSpec& spec, const ResolvedTune& request, Store* store,
                        const AutotuneOptions& options) {
  const auto started = std::chrono::steady_clock::now();  // a time limit counts the worker's setup too
  const TuningFile* file = tuning_file_of(spec);
  const ResolvedSearch& search = request.search;
  auto searcher = search.searcher();

  EvaluatorConfig cfg;
  cfg.device = options.device == "default" && file && !file->device.empty() ? file->device : options.device;
  cfg.seed = search.seed;
  cfg.trial_timeout = options.trial_timeout;
  cfg.build_jobs = options.build_jobs;
  IsolatedEvaluator evaluator(spec, request.problem, cfg);

  AutotuneResult out;
  const TuneBudget budget = search.budget(spec, evaluator.space());
  out.max_evals = budget.max_evals;
  const auto stop = budget.stop();

  std::optional<StoredTuneSession> session;
  TuneOptions topt = options.tune;
  if (!topt.started) topt.started = started;
  if (store) {
    session.emplace(*store, spec, evaluator.target(), budget.session(searcher->name()), options.resume);
    session->attach(topt);
    out.session = session->session();
    out.resumed_trials = session->stored_at_start();
  }
  if (options.on_start) options.on_start(evaluator, out);
  out.result = tune(evaluator, *searcher, *stop, topt);
  out.pool = evaluator.pool_counts();
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
    // CompilerOptions and the parameters as -D values: the application builds
    // the kernel file's source as it is (wstune's own builds put the values
    // in #define lines before it instead, KernelSpec::source_defines()).
    s.build_options = "-cl-std=CL1.2";
    for (const std::string& part : {spec.build_options(with_params(p, b.params)), define_options(b.params)})
      if (!part.empty()) s.build_options += " " + part;
    s.row = b;
    return s;
  }
  return std::nullopt;
}

}  // namespace wstune
