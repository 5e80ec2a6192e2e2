// IsolatedEvaluator: trials in a forked worker process that owns its own
// OpenCL context (child_process.hpp). The worker protocol, one JSON frame
// each way: the worker's hello ({"ok":true,"target":..} or {"ok":false,
// "kind":"compile"|"usage"|"error","error":..}); then per request either a
// trial ({"params","local","timing"} → the trial's JSON form,
// format/trial_json.hpp) or {"prepare":[params...]} → {"prepared":n}.
// docs/tuning.md describes the isolation.
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "evaluate/child_process.hpp"
#include "evaluate/trial.hpp"
#include "evaluate/trial_runner.hpp"
#include "format/json.hpp"
#include "format/trial_json.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

using Clock = SocketClock;

// ---- the worker's hello: the target as JSON ------------------------------------

nlohmann::json target_json(const TuneTarget& t) {
  return {{"kernel", t.kernel},
          {"size", t.size},
          {"global", to_json(t.global)},
          {"problem", to_json(t.problem)},
          {"any_shape", t.limits.any_shape},
          {"priority", std::string(to_string(t.priority))},
          {"max_work_group_size", t.limits.max_work_group_size},
          {"kernel_work_group_size", t.limits.kernel_work_group_size},
          {"max_work_item_sizes", t.limits.max_work_item_sizes},
          {"local_mem_bytes", t.limits.local_mem_bytes},
          {"kernel_local_mem_bytes", t.limits.kernel_local_mem_bytes},
          {"local_mem_per_item_bytes", t.limits.local_mem_per_item_bytes},
          {"pe_per_cu", t.pe_per_cu},
          {"device_name", t.device_name},
          {"device_id", t.device_id},
          {"device_fingerprint", t.device_fingerprint},
          {"device", to_json(t.device)},
          {"reference_params", t.reference_params},
          {"rejected_references", t.rejected_references}};
}

TuneTarget target_from(const nlohmann::json& j) {
  TuneTarget t;
  t.kernel = j.at("kernel").get<std::string>();
  t.size = j.at("size").get<std::string>();
  t.global = extent_from_json(j.at("global"));
  t.problem = extent_from_json(j.at("problem"));
  t.limits.any_shape = j.at("any_shape").get<bool>();
  const auto pri = j.at("priority").get<std::string>();
  t.priority = pri == "x" ? Priority::x : pri == "y" ? Priority::y : Priority::none;
  t.limits.max_work_group_size = j.at("max_work_group_size").get<std::size_t>();
  t.limits.kernel_work_group_size = j.at("kernel_work_group_size").get<std::size_t>();
  t.limits.max_work_item_sizes = j.at("max_work_item_sizes").get<std::vector<std::size_t>>();
  t.limits.local_mem_bytes = j.at("local_mem_bytes").get<std::uint64_t>();
  t.limits.kernel_local_mem_bytes = j.at("kernel_local_mem_bytes").get<std::uint64_t>();
  t.limits.local_mem_per_item_bytes = j.at("local_mem_per_item_bytes").get<std::uint64_t>();
  t.pe_per_cu = j.at("pe_per_cu").get<unsigned>();
  t.device_name = j.at("device_name").get<std::string>();
  t.device_id = j.at("device_id").get<std::string>();
  t.device_fingerprint = j.at("device_fingerprint").get<std::string>();
  if (j.contains("device")) t.device = device_info_from_json(j.at("device"));
  t.reference_params = j.value("reference_params", nlohmann::json::object());
  if (j.contains("rejected_references"))
    t.rejected_references = j.at("rejected_references").get<std::vector<nlohmann::json>>();
  return t;
}

// ---- a trial request ----------------------------------------------------------------

nlohmann::json trial_request(const Configuration& config, const TimingOptions& timing) {
  // JSON has no NaN or infinity (nlohmann writes null, which the worker
  // would refuse): a non-finite or negative bound means "off" (0).
  auto bound = [](double v) { return std::isfinite(v) && v > 0 ? v : 0.0; };
  return {{"params", config.params},
          {"local", to_json(config.local)},
          {"timing",
           {{"warmup", timing.warmup},
            {"repetitions", timing.repetitions},
            {"min_timed_ms", bound(timing.min_timed_ms)},
            {"max_repetitions", timing.max_repetitions},
            {"max_median_error", bound(timing.max_median_error)},
            {"max_timed_ms", bound(timing.max_timed_ms)}}}};
}

TimingOptions timing_from(const nlohmann::json& j) {
  return TimingOptions{j.at("warmup").get<unsigned>(),   j.at("repetitions").get<unsigned>(),
                       j.value("min_timed_ms", 0.0),     j.value("max_repetitions", 0u),
                       j.value("max_median_error", 0.0), j.value("max_timed_ms", 0.0)};
}

// ---- the worker process --------------------------------------------------------------

// The worker's hello: its target, or why it has none (and then no runner).
nlohmann::json start_runner(std::unique_ptr<TrialRunner>& runner, const KernelSpec& spec, const Problem& p,
                            const EvaluatorConfig& cfg) {
  try {
    runner = std::make_unique<TrialRunner>(spec, p, cfg);
    return {{"ok", true}, {"target", target_json(runner->target())}};
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
      answer = to_json(runner->run(c, timing_from(req.at("timing"))));
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
  unsigned started = 0;
  std::string compile_error;  // non-empty: the kernel does not build

  // Forks a worker and waits for its hello. Throws UsageError/Error.
  void start() {
    worker = ChildProcess::start([this](int fd) { return worker_main(fd, *spec, problem, cfg); }, "the tuning worker");
    ++started;
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
    target = target_from(hello.at("target"));
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
  impl_->start();
  impl_->space = make_search_space(spec, problem, spec.whole(problem), impl_->target);
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
  t = m.measure(config, timing, t0);
  t.params = config.params;
  t.local = config.local;
  t.wall_ms = ms_since(t0);
  return t;
}

}  // namespace wstune
