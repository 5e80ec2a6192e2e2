// IsolatedEvaluator: trials in a forked worker process that owns its own
// OpenCL context (child_process.hpp). The worker protocol, one JSON frame
// each way: the worker's hello ({"ok":true,"target":..} or {"ok":false,
// "kind":"compile"|"usage"|"error","error":..}); then per request either a
// trial ({"params","local","timing"} → the trial's JSON form,
// format/trial_json.hpp; the target and the timing in their forms of
// format/target_json.hpp) or {"prepare":[params...]} → {"prepared":n}.
// docs/tuning.md describes the isolation.
#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluate/build_pool.hpp"
#include "evaluate/child_process.hpp"
#include "evaluate/trial.hpp"
#include "evaluate/trial_runner.hpp"
#include "format/json.hpp"
#include "format/target_json.hpp"
#include "format/trial_json.hpp"
#include "program_cache/program_cache.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

using Clock = SocketClock;

// ---- a trial request: the configuration and its timing (format/target_json.hpp) ----

nlohmann::json trial_request(const Configuration& config, const TimingOptions& timing) {
  return {{"params", config.params}, {"local", to_json(config.local)}, {"timing", to_json(timing)}};
}

// ---- the worker process --------------------------------------------------------------

// The worker's hello: its target, or why it has none (and then no runner).
nlohmann::json start_runner(std::unique_ptr<TrialRunner>& runner, const KernelSpec& spec, const Problem& p,
                            const EvaluatorConfig& cfg) {
  try {
    runner = std::make_unique<TrialRunner>(spec, p, cfg);
    return {{"ok", true}, {"target", to_json(runner->target())}};
  } catch (const BuildError& e) {
    return {{"ok", false}, {"kind", "compile"}, {"error", fmt::format("{}\n{}", e.what(), e.log())}};
  } catch (const UsageError& e) {
    return {{"ok", false}, {"kind", "usage"}, {"error", e.what()}};
  } catch (const std::exception& e) {
    return {{"ok", false}, {"kind", "error"}, {"error", e.what()}};
  } catch (...) {
    return {{"ok", false}, {"kind", "error"}, {"error", "unknown exception in the tuning worker"}};
  }
}

// The worker: start, say hello, answer requests until the tuner closes its
// end; its exit status (ChildProcess::Body).
int worker_main(int fd, const KernelSpec& spec, const Problem& p, const EvaluatorConfig& cfg) {
  std::unique_ptr<TrialRunner> runner;
  if (!send_frame(fd, start_runner(runner, spec, p, cfg)) || !runner) return 0;
  for (;;) {
    nlohmann::json req;
    if (recv_frame(fd, req, std::nullopt) != SocketRead::ok) return 0;
    nlohmann::json answer;
    if (req.contains("prepare")) {  // build these configurations' programs, then say so
      std::vector<Configuration> up;
      for (const auto& params : req.at("prepare")) up.push_back(Configuration{params, std::nullopt});
      runner->prepare(up);
      answer = {{"prepared", up.size()}};
    } else {
      const Configuration c{req.at("params"), local_from_json(req.at("local"))};
      answer = to_json(runner->run(c, timing_from_json(req.at("timing"), "the trial request's timing")));
    }
    if (!send_frame(fd, answer)) return 0;
  }
}

}  // namespace

// ---- IsolatedEvaluator -------------------------------------------------------

struct IsolatedEvaluator::Impl {
  const KernelSpec* spec = nullptr;
  Problem problem;
  EvaluatorConfig cfg;
  TuneTarget target;
  SearchSpace space;
  ChildProcess worker;
  std::unique_ptr<BuildPool> pool;  // null: no pool
  unsigned jobs = 0;                // the pool's size
  unsigned started = 0;
  std::string compile_error;  // non-empty: the kernel does not build

  // Forks a worker and waits for its hello. Throws UsageError/Error.
  void start() {
    fork_worker();
    take_hello();
  }
  void fork_worker() {
    worker = ChildProcess::start([this](int fd) { return worker_main(fd, *spec, problem, cfg); }, "the tuning worker");
    ++started;
  }
  // The worker's hello: its target, or why it has none. Throws UsageError/Error.
  void take_hello() {
    nlohmann::json hello;
    const SocketRead r = recv_frame(worker.fd(), hello, Clock::now() + cfg.startup_timeout);
    if (r != SocketRead::ok) {
      const std::string how =
          r == SocketRead::timeout ? "did not start within the startup timeout" : "died while starting";
      const std::string exit = worker.stop(std::chrono::milliseconds(0));
      throw Error(fmt::format("the tuning worker for {} {} {} ({})", problem.kernel, problem.text, how, exit));
    }
    if (!hello.at("ok").get<bool>()) {
      const auto kind = hello.at("kind").get<std::string>();
      const auto err = hello.at("error").get<std::string>();
      worker.stop(std::chrono::milliseconds(1000));
      if (kind == "usage") throw UsageError(err);
      if (kind == "compile") {
        compile_error = err;
        return;
      }
      throw Error(fmt::format("the tuning worker failed to start: {}", err));
    }
    try {
      target = tune_target_from_json(hello.at("target"), "the tuning worker's target");
    } catch (const UsageError& e) {  // our own worker's answer: not the user's input
      worker.stop(std::chrono::milliseconds(1000));
      throw Error(fmt::format("malformed hello from the tuning worker: {}", e.what()));
    }
  }

  // Sends `config` to the worker and takes its answer, or makes the trial a
  // timeout or runtime failure (and stops the worker) when none comes.
  Trial measure(const Configuration& config, const TimingOptions& timing, Clock::time_point t0) {
    Trial t;
    nlohmann::json answer;
    const SocketRead r = send_frame(worker.fd(), trial_request(config, timing))
                             ? recv_frame(worker.fd(), answer, t0 + cfg.trial_timeout)
                             : SocketRead::closed;
    if (r == SocketRead::ok) {
      try {
        t = trial_from_json(answer, "the tuning worker's trial");
      } catch (const std::exception& e) {
        t.status = TrialStatus::runtime;
        t.error = fmt::format("malformed answer from the tuning worker: {}", e.what());
      }
    } else if (r == SocketRead::timeout) {
      const std::string exit = worker.kill();
      t.status = TrialStatus::timeout;
      t.error = fmt::format("no answer within {} ms; worker {}", cfg.trial_timeout.count(), exit);
    } else {
      const std::string exit = worker.stop(std::chrono::milliseconds(2000));
      t.status = TrialStatus::runtime;
      t.error = fmt::format("the tuning worker {} during the trial", exit);
    }
    return t;
  }
};

IsolatedEvaluator::IsolatedEvaluator(const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& config)
    : impl_(std::make_unique<Impl>()) {
  impl_->spec = &spec;
  impl_->problem = problem;
  impl_->cfg = config;
  impl_->target.kernel = std::string(spec.name());
  impl_->target.size = problem.text;
  impl_->target.global = spec.global_size(with_params(problem, spec.reference_params()));
  impl_->target.problem = impl_->target.global;
  impl_->target.priority = spec.priority();
  auto& m = *impl_;
  const bool poolable = ProgramCache::process().enabled() && !spec.tuning_parameters().empty();
  const auto make_pool = [&](unsigned jobs) {
    m.jobs = jobs;
    if (jobs) m.pool = std::make_unique<BuildPool>(spec, problem, config, jobs, config.trial_timeout);
    if (m.pool) m.pool->start();
  };
  m.fork_worker();
  // A pool of a given size opens the device side by side with the worker's
  // start (its device, inputs and reference); the default size depends on
  // the device's type, which the worker's hello tells.
  if (poolable && config.build_jobs > 0) make_pool(static_cast<unsigned>(config.build_jobs));
  m.take_hello();
  if (!m.compile_error.empty()) {
    m.pool.reset();
    m.jobs = 0;
  } else if (poolable && config.build_jobs < 0) {
    make_pool(default_build_jobs(m.target.device.type));
  }
  m.space = make_search_space(spec, problem, spec.whole(problem), m.target);
}

IsolatedEvaluator::~IsolatedEvaluator() {
  impl_->worker.stop(std::chrono::milliseconds(2000));
}

const TuneTarget& IsolatedEvaluator::target() const {
  return impl_->target;
}
const SearchSpace& IsolatedEvaluator::space() const {
  return impl_->space;
}

void IsolatedEvaluator::prepare(const std::vector<Configuration>& upcoming) {
  auto& m = *impl_;
  if (m.pool) {  // the builders build them; the worker loads their binaries
    std::vector<nlohmann::json> params;
    for (const auto& c : upcoming) params.push_back(c.params);
    m.pool->submit(params);
    return;
  }
  if (upcoming.empty() || !m.compile_error.empty() || !m.worker.running()) return;  // a hint: skipped without a worker
  nlohmann::json params = nlohmann::json::array();
  for (const auto& c : upcoming) params.push_back(c.params);
  nlohmann::json answer;
  // Builds take at most the startup limit; a worker that does not answer is
  // restarted by the next trial (its builds are lost, nothing else).
  const SocketRead r = send_frame(m.worker.fd(), nlohmann::json{{"prepare", params}})
                           ? recv_frame(m.worker.fd(), answer, Clock::now() + m.cfg.startup_timeout)
                           : SocketRead::closed;
  if (r != SocketRead::ok) m.worker.kill();
}
unsigned IsolatedEvaluator::workers_started() const noexcept {
  return impl_->started;
}
std::vector<pid_t> IsolatedEvaluator::builder_pids() const {
  return impl_->pool ? impl_->pool->builder_pids() : std::vector<pid_t>{};
}
IsolatedEvaluator::PoolCounts IsolatedEvaluator::pool_counts() const noexcept {
  const auto& m = *impl_;
  if (!m.pool) return {};
  return {m.jobs, m.pool->builders_started(), m.pool->built(), m.pool->lost(), m.pool->waited_ms()};
}
std::size_t IsolatedEvaluator::announce_ahead() const noexcept {
  // Several configurations a builder: each holds BuildPool::kInFlight, and
  // tune() tops the announcement up at half of this.
  return std::max<std::size_t>(Evaluator::announce_ahead(), 4 * BuildPool::kInFlight * impl_->jobs);
}

Trial IsolatedEvaluator::evaluate(const Configuration& config, const TimingOptions& timing) {
  auto& m = *impl_;
  const auto t0 = Clock::now();
  Trial t;
  t.params = config.params;
  t.local = config.local;
  if (!m.compile_error.empty()) {
    t.status = TrialStatus::compile;
    t.error = m.compile_error;
    return t;
  }
  try {
    if (!m.worker.running()) m.start();
  } catch (const std::exception& e) {
    t.status = TrialStatus::runtime;
    t.error = fmt::format("could not restart the tuning worker: {}", e.what());
    t.wall_ms = ms_since(t0);
    return t;
  }
  if (m.pool) m.pool->await(config.params);     // false: the worker builds it itself
  t = m.measure(config, timing, Clock::now());  // the trial's limit starts after the wait
  t.params = config.params;
  t.local = config.local;
  t.wall_ms = ms_since(t0);
  return t;
}

}  // namespace wstune
