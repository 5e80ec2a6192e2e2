// Trial evaluators: in-process, and isolated in a forked worker process.
// The isolation protocol is described in docs/tuning.md.
#include "evaluate/trial.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/json.hpp"
#include "runner/runner.hpp"
#include "space/rules.hpp"
#include "wstune/device.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

using Clock = std::chrono::steady_clock;

// ---- the part that owns OpenCL (runs in-process or in the worker) ----------

}  // namespace

TuneTarget device_tune_target(const DeviceInfo& info, std::size_t kernel_work_group_size,
                              std::uint64_t kernel_local_mem_bytes) {
  TuneTarget t;
  t.limits.max_work_group_size = info.max_work_group_size;
  t.limits.kernel_work_group_size = kernel_work_group_size;
  t.limits.max_work_item_sizes = info.max_work_item_sizes;
  t.limits.local_mem_bytes = info.local_mem_bytes;
  t.limits.kernel_local_mem_bytes = kernel_local_mem_bytes;
  t.pe_per_cu = info.pe_per_cu;
  t.device_name = info.name;
  t.device_id = info.id();
  t.device_fingerprint = info.fingerprint();
  t.device = info;
  return t;
}

TuneTarget make_tune_target(const KernelSpec& spec, const DeviceInfo& info, std::size_t kernel_work_group_size,
                            std::uint64_t kernel_local_mem_bytes, const Problem& p, const Block& b) {
  const Problem ref = with_params(p, spec.reference_params());
  TuneTarget t = device_tune_target(info, kernel_work_group_size, kernel_local_mem_bytes);
  t.kernel = std::string(spec.name());
  t.size = p.text;
  t.global = spec.block_global(ref, b);
  t.problem = spec.tuning_parameters().empty() ? t.global : spec.problem_extent(ref);
  t.priority = spec.priority();
  t.limits.any_shape = spec.guards_bounds() || info.non_uniform_work_groups;
  return t;
}

TuneTarget make_tune_target(DeviceRunner& runner, const Problem& p, const Block& b) {
  return make_tune_target(runner.spec(), runner.device().info, runner.kernel_work_group_size(),
                          runner.kernel_local_mem_bytes(), p, b);
}

SearchSpace make_search_space(const KernelSpec& spec, const Problem& p, const Block& b, const TuneTarget& target) {
  const Problem ref = with_params(p, spec.reference_params());
  const bool null_ok = spec.null_local_allowed();
  const auto base_shapes = enumerate_local_sizes(target.global, target.limits);
  const LocalSize rule_shape = paper_rule(target.global, base_shapes, target.priority, target.pe_per_cu);
  if (spec.tuning_parameters().empty() && null_ok) return SearchSpace(base_shapes, rule_shape);
  // With parameters: the constraints first, then the local sizes each
  // combination runs with. Device limits known before a build leave
  // configurations out; the built kernel's limits are checked per trial.
  auto locals = [&](const nlohmann::json& params) -> std::vector<LocalSize> {
    const Problem pp = with_params(p, params);
    if (!spec.satisfies_constraints(pp)) return {};
    const Extent g = spec.block_global(pp, b);
    if (const LocalSize fixed = spec.parameter_local(pp)) {
      if (!fits(*fixed, g, target.limits)) return {};
      return {fixed};
    }
    std::vector<LocalSize> out;
    if (null_ok) out.emplace_back(std::nullopt);
    for (const Extent& e : enumerate_local_sizes(g, target.limits)) out.emplace_back(e);
    return out;
  };
  if (!spec.satisfies_constraints(ref)) {
    throw UsageError(
        fmt::format("{}: the reference configuration ({}) violates the constraints; name one that "
                    "satisfies them (the wstune extension's ReferenceConfiguration)",
                    spec.name(), to_string(Configuration{ref.params, std::nullopt})));
  }
  // The baseline: the reference parameters with the driver's choice (or the
  // local size they set; a kernel that cannot run NULL takes the paper's rule).
  LocalSize base_local = spec.parameter_local(ref);
  if (!base_local && !null_ok)
    base_local = rule_shape ? rule_shape : LocalSize(base_shapes.empty() ? Extent{} : base_shapes.front());
  std::optional<Configuration> rule;
  if (!spec.parameter_local(ref) && rule_shape && rule_shape != base_local)
    rule = Configuration{ref.params, rule_shape};
  return SearchSpace(spec.tuning_parameters(), locals, Configuration{ref.params, base_local}, rule);
}

namespace {

class TrialRunner {
 public:
  // A problem without parameter values runs with the reference ones (a
  // described kernel's NDRange and buffers depend on them).
  TrialRunner(const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& cfg)
      : spec_(spec),
        p_(problem.params.empty() ? with_params(problem, spec.reference_params()) : problem),
        whole_(spec.whole(p_)),
        runner_(select_device(enumerate_devices(), cfg.device), spec, cfg.build_options) {
    const auto inputs = spec.generate_inputs(p_, cfg.seed);
    ref_ = reference_outputs(runner_, p_, inputs);
    runner_.upload(p_, whole_, spec.block_inputs(p_, inputs, whole_));
    target_ = make_tune_target(runner_, p_, whole_);
  }

  const TuneTarget& target() const { return target_; }

  void prepare(const std::vector<Configuration>& upcoming) {
    std::vector<Problem> ps;
    for (const auto& c : upcoming) ps.push_back(with_params(p_, c.params));
    runner_.prebuild(ps);
  }

  Trial run(const Configuration& config, const TimingOptions& timing) {
    const Problem p = with_params(p_, config.params);
    const std::string key = config.key();
    const bool verify = !verified_.count(key);  // outputs are read back only to verify them
    RunResult r = runner_.run(p, whole_, config.local, timing, verify);
    Trial t;
    t.params = config.params;
    t.local = config.local;
    if (r.ok() && !(r.global == target_.global)) t.global = r.global;
    t.status = r.status;
    t.error = r.error;
    t.kernel = r.kernel;
    t.run_wall_ms = r.wall_ms;
    t.compile_ms = r.compile_ms;
    if (r.ok() && verify) {
      const auto tv = std::chrono::steady_clock::now();
      const Verdict v = verify_outputs(spec_, p, whole_, r.outputs, ref_);
      runner_.recycle(std::move(r.outputs));
      t.verify_ms = ms_since(tv);
      t.verified = true;
      if (v.ok) {
        verified_.insert(key);
      } else {
        t.status = TrialStatus::correctness;
        t.error = verification_error(v);
      }
    }
    return t;
  }

 private:
  const KernelSpec& spec_;
  Problem p_;
  Block whole_;
  DeviceRunner runner_;
  std::vector<HostBuffer> ref_;
  std::set<std::string> verified_;
  TuneTarget target_;
};

// ---- JSON forms for the worker protocol ---------------------------------------

nlohmann::json optional_extent_json(const std::optional<Extent>& e) {
  return e ? to_json(*e) : nlohmann::json();
}

nlohmann::json trial_json(const Trial& t) {
  return {{"params", t.params},
          {"local", to_json(t.local)},
          {"global", optional_extent_json(t.global)},
          {"status", std::string(to_string(t.status))},
          {"error", t.error},
          {"samples_ms", t.kernel.ms},
          {"run_wall_ms", t.run_wall_ms},
          {"compile_ms", t.compile_ms},
          {"verify_ms", t.verify_ms},
          {"verified", t.verified}};
}

Trial trial_from(const nlohmann::json& j) {
  Trial t;
  t.params = j.at("params");
  t.local = local_from_json(j.at("local"));
  t.global = local_from_json(j.at("global"));
  t.status = parse_trial_status(j.at("status").get<std::string>());
  t.error = j.at("error").get<std::string>();
  t.kernel.ms = j.at("samples_ms").get<std::vector<double>>();
  t.run_wall_ms = j.at("run_wall_ms").get<double>();
  t.compile_ms = j.at("compile_ms").get<double>();
  t.verify_ms = j.at("verify_ms").get<double>();
  t.verified = j.at("verified").get<bool>();
  return t;
}

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
          {"device", to_json(t.device)}};
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
  return t;
}

// ---- framing: uint32 length + JSON text over a SOCK_STREAM socket -------------

bool send_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool send_msg(int fd, const nlohmann::json& j) {
  // replace: a build log or device name with invalid UTF-8 must not throw.
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const auto len = static_cast<std::uint32_t>(text.size());
  return send_all(fd, reinterpret_cast<const char*>(&len), sizeof len) && send_all(fd, text.data(), text.size());
}

enum class Recv { ok, eof, timeout };

// Reads exactly n bytes before `deadline` (no deadline when nullopt).
Recv recv_all(int fd, char* data, std::size_t n, std::optional<Clock::time_point> deadline) {
  while (n > 0) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return Recv::timeout;
      wait_ms = static_cast<int>(std::min<long long>(left, 1'000'000'000));
    }
    pollfd pfd{fd, POLLIN, 0};
    const int pr = ::poll(&pfd, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) return Recv::eof;
    if (pr == 0) return Recv::timeout;
    const ssize_t r = ::recv(fd, data, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return Recv::eof;
    data += r;
    n -= static_cast<std::size_t>(r);
  }
  return Recv::ok;
}

Recv recv_msg(int fd, nlohmann::json& out, std::optional<Clock::time_point> deadline) {
  std::uint32_t len = 0;
  if (Recv r = recv_all(fd, reinterpret_cast<char*>(&len), sizeof len, deadline); r != Recv::ok) return r;
  std::string text(len, '\0');
  if (Recv r = recv_all(fd, text.data(), len, deadline); r != Recv::ok) return r;
  out = nlohmann::json::parse(text, nullptr, false);
  return out.is_discarded() ? Recv::eof : Recv::ok;
}

TimingOptions timing_from(const nlohmann::json& j) {
  return TimingOptions{j.at("warmup").get<unsigned>(),   j.at("repetitions").get<unsigned>(),
                       j.value("min_timed_ms", 0.0),     j.value("max_repetitions", 0u),
                       j.value("max_median_error", 0.0), j.value("max_timed_ms", 0.0)};
}

// The worker process: start, say hello, answer trial requests until EOF.
[[noreturn]] void worker_main(int fd, const KernelSpec& spec, const Problem& p, const EvaluatorConfig& cfg) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the tuner
  ::signal(SIGPIPE, SIG_IGN);
  // Nothing may unwind out of here into the parent's code (copied by fork).
  try {
    std::unique_ptr<TrialRunner> runner;
    nlohmann::json hello;
    try {
      runner = std::make_unique<TrialRunner>(spec, p, cfg);
      hello = {{"ok", true}, {"target", target_json(runner->target())}};
    } catch (const BuildError& e) {
      hello = {{"ok", false}, {"kind", "compile"}, {"error", fmt::format("{}\n{}", e.what(), e.log())}};
    } catch (const UsageError& e) {
      hello = {{"ok", false}, {"kind", "usage"}, {"error", e.what()}};
    } catch (const std::exception& e) {
      hello = {{"ok", false}, {"kind", "error"}, {"error", e.what()}};
    } catch (...) {
      hello = {{"ok", false}, {"kind", "error"}, {"error", "unknown exception in the tuning worker"}};
    }
    if (!send_msg(fd, hello) || !runner) ::_exit(0);
    try {
      for (;;) {
        nlohmann::json req;
        if (recv_msg(fd, req, std::nullopt) != Recv::ok) ::_exit(0);
        if (req.contains("prepare")) {  // build these configurations' programs, then say so
          std::vector<Configuration> up;
          for (const auto& params : req.at("prepare")) up.push_back(Configuration{params, std::nullopt});
          runner->prepare(up);
          if (!send_msg(fd, nlohmann::json{{"prepared", up.size()}})) ::_exit(0);
          continue;
        }
        const Configuration c{req.at("params"), local_from_json(req.at("local"))};
        const Trial t = runner->run(c, timing_from(req.at("timing")));
        if (!send_msg(fd, trial_json(t))) ::_exit(0);
      }
    } catch (...) {
      ::_exit(3);
    }
  } catch (...) {
    ::_exit(3);
  }
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("killed by signal {} ({})", sig, ::strsignal(sig));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

}  // namespace

// ---- InProcessEvaluator ------------------------------------------------------

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
  const auto t0 = Clock::now();
  Trial t = impl_->runner.run(config, timing);
  t.wall_ms = ms_since(t0);
  return t;
}

// ---- IsolatedEvaluator -------------------------------------------------------

struct IsolatedEvaluator::Impl {
  const KernelSpec* spec = nullptr;
  Problem problem;
  EvaluatorConfig cfg;
  TuneTarget target;
  SearchSpace space;
  pid_t pid = -1;
  int fd = -1;
  unsigned started = 0;
  std::string compile_error;  // non-empty: the kernel does not build

  // Reaps the worker: waits up to `grace` for it to exit, then SIGKILL.
  std::string stop(std::chrono::milliseconds grace) {
    if (fd >= 0) ::close(fd);
    fd = -1;
    if (pid < 0) return {};
    int status = 0;
    const auto deadline = Clock::now() + grace;
    pid_t r = 0;
    while ((r = ::waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (r == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    pid = -1;
    return describe_exit(status);
  }

  // Forks a worker and waits for its hello. Throws UsageError/Error.
  void start() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw Error(fmt::format("socketpair for the tuning worker failed: {}", std::strerror(errno)));
    const pid_t child = ::fork();
    if (child < 0) {
      ::close(sv[0]);
      ::close(sv[1]);
      throw Error(fmt::format("fork of the tuning worker failed: {}", std::strerror(errno)));
    }
    if (child == 0) {
      ::close(sv[0]);
      worker_main(sv[1], *spec, problem, cfg);
    }
    ::close(sv[1]);
    pid = child;
    fd = sv[0];
    ++started;
    nlohmann::json hello;
    const Recv r = recv_msg(fd, hello, Clock::now() + cfg.startup_timeout);
    if (r != Recv::ok) {
      const std::string how = r == Recv::timeout ? "did not start within the startup timeout" : "died while starting";
      const std::string exit = stop(std::chrono::milliseconds(0));
      throw Error(fmt::format("the tuning worker for {} {} {} ({})", problem.kernel, problem.text, how, exit));
    }
    if (!hello.at("ok").get<bool>()) {
      const auto kind = hello.at("kind").get<std::string>();
      const auto err = hello.at("error").get<std::string>();
      stop(std::chrono::milliseconds(1000));
      if (kind == "usage") throw UsageError(err);
      if (kind == "compile") {
        compile_error = err;
        return;
      }
      throw Error(fmt::format("the tuning worker failed to start: {}", err));
    }
    target = target_from(hello.at("target"));
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
  impl_->stop(std::chrono::milliseconds(2000));
}

const TuneTarget& IsolatedEvaluator::target() const {
  return impl_->target;
}
const SearchSpace& IsolatedEvaluator::space() const {
  return impl_->space;
}

void IsolatedEvaluator::prepare(const std::vector<Configuration>& upcoming) {
  auto& m = *impl_;
  if (upcoming.empty() || !m.compile_error.empty() || m.pid < 0) return;  // a hint: skipped when no worker runs
  nlohmann::json params = nlohmann::json::array();
  for (const auto& c : upcoming) params.push_back(c.params);
  nlohmann::json answer;
  // Builds take at most the startup limit; a worker that does not answer is
  // restarted by the next trial (its builds are lost, nothing else).
  const Recv r = send_msg(m.fd, nlohmann::json{{"prepare", params}})
                     ? recv_msg(m.fd, answer, Clock::now() + m.cfg.startup_timeout)
                     : Recv::eof;
  if (r != Recv::ok) {
    if (m.pid >= 0) ::kill(m.pid, SIGKILL);
    m.stop(std::chrono::milliseconds(2000));
  }
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
    if (m.pid < 0) m.start();
  } catch (const std::exception& e) {
    t.status = TrialStatus::runtime;
    t.error = fmt::format("could not restart the tuning worker: {}", e.what());
    t.wall_ms = ms_since(t0);
    return t;
  }
  // JSON has no NaN or infinity (nlohmann writes null, which the worker
  // would refuse): a non-finite or negative bound means "off" (0).
  auto bound = [](double v) { return std::isfinite(v) && v > 0 ? v : 0.0; };
  const nlohmann::json req = {{"params", config.params},
                              {"local", to_json(config.local)},
                              {"timing",
                               {{"warmup", timing.warmup},
                                {"repetitions", timing.repetitions},
                                {"min_timed_ms", bound(timing.min_timed_ms)},
                                {"max_repetitions", timing.max_repetitions},
                                {"max_median_error", bound(timing.max_median_error)},
                                {"max_timed_ms", bound(timing.max_timed_ms)}}}};
  nlohmann::json answer;
  Recv r = send_msg(m.fd, req) ? recv_msg(m.fd, answer, t0 + m.cfg.trial_timeout) : Recv::eof;
  if (r == Recv::ok) {
    try {
      t = trial_from(answer);
    } catch (const std::exception& e) {
      t.status = TrialStatus::runtime;
      t.error = fmt::format("malformed answer from the tuning worker: {}", e.what());
    }
  } else if (r == Recv::timeout) {
    ::kill(m.pid, SIGKILL);
    const std::string exit = m.stop(std::chrono::milliseconds(2000));
    t.status = TrialStatus::timeout;
    t.error = fmt::format("no answer within {} ms; worker {}", m.cfg.trial_timeout.count(), exit);
  } else {
    const std::string exit = m.stop(std::chrono::milliseconds(2000));
    t.status = TrialStatus::runtime;
    t.error = fmt::format("the tuning worker {} during the trial", exit);
  }
  t.params = config.params;
  t.local = config.local;
  t.wall_ms = ms_since(t0);
  return t;
}

}  // namespace wstune
