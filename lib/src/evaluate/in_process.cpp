// InProcessEvaluator: trials in the caller's process (no isolation).
#include <chrono>

#include "evaluate/trial.hpp"
#include "evaluate/trial_runner.hpp"

namespace wstune {

struct InProcessEvaluator::Impl {
  Impl(const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& config)
      : runner(spec, problem, config), space(make_search_space(spec, problem, spec.whole(problem), runner.target())) {}
  TrialRunner runner;
  SearchSpace space;
};

InProcessEvaluator::InProcessEvaluator(const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& config)
    : impl_(std::make_unique<Impl>(spec, problem, config)) {}
InProcessEvaluator::~InProcessEvaluator() = default;
const TuneTarget& InProcessEvaluator::target() const {
  return impl_->runner.target();
}
const SearchSpace& InProcessEvaluator::space() const {
  return impl_->space;
}
void InProcessEvaluator::prepare(const std::vector<Configuration>& upcoming) {
  impl_->runner.prepare(upcoming);
}
Trial InProcessEvaluator::evaluate(const Configuration& config, const TimingOptions& timing) {
  const auto t0 = std::chrono::steady_clock::now();
  Trial t = impl_->runner.run(config, timing);
  t.wall_ms = ms_since(t0);
  return t;
}

}  // namespace wstune
