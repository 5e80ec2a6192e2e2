#include "worker.hpp"

#include <ostream>

#include <fmt/format.h>

#include "split_plan.hpp"
#include "tasks.hpp"

namespace wstune::daemon {

using nlohmann::json;
using clock_type = std::chrono::steady_clock;

std::string_view to_string(FaultKind f) noexcept {
  switch (f) {
    case FaultKind::none: return "none";
    case FaultKind::build: return "build";
    case FaultKind::kernel: return "kernel";
    case FaultKind::hang: return "hang";
    case FaultKind::crash: return "crash";
    case FaultKind::stall: return "stall";
  }
  return "none";
}

FaultKind parse_fault(std::string_view text) {
  for (auto f : {FaultKind::build, FaultKind::kernel, FaultKind::hang, FaultKind::crash, FaultKind::stall})
    if (to_string(f) == text) return f;
  throw UsageError(fmt::format("unknown fault '{}': use build, kernel, hang, crash or stall", text));
}

Worker::Worker(Communicator& comm, std::optional<Device> device, std::string device_error, WorkerOptions options)
    : comm_(comm), device_(std::move(device)), device_error_(std::move(device_error)), opt_(std::move(options)) {}

Worker::~Worker() = default;

void Worker::say(const std::string& line) {
  if (opt_.log) *opt_.log << fmt::format("wstuned[{}]: {}", comm_.rank(), line) << std::endl;
}

DeviceRunner& Worker::runner_for(const KernelSpec& spec, double* build_ms) {
  const std::string key(spec.name());
  auto it = runners_.find(key);
  if (it != runners_.end()) {
    if (build_ms) *build_ms = 0;
    return *it->second;
  }
  const auto t0 = clock_type::now();
  // The injected build fault passes an option no compiler knows: a real
  // clBuildProgram failure (CL_INVALID_BUILD_OPTIONS).
  const std::string options = opt_.fault == FaultKind::build ? "-cl-wstune-injected-build-fault" : "";
  auto runner = std::make_unique<DeviceRunner>(*device_, spec, options);
  if (build_ms) *build_ms = ms_since(t0);
  return *runners_.emplace(key, std::move(runner)).first->second;
}

namespace {
TrialStatus status_of(const std::exception& e) {
  if (dynamic_cast<const BuildError*>(&e)) return TrialStatus::compile;
  return TrialStatus::runtime;
}
}  // namespace

void Worker::handle_run(Received& got) {
  const auto t0 = clock_type::now();
  const RunBlock job = RunBlock::from(got.message);
  if (opt_.fault == FaultKind::hang) {
    say(fmt::format("injected hang: not answering job {}", job.job));
    return;
  }
  auto fail = [&](TrialStatus status, const std::string& text) {
    comm_.send(0, WorkerError{job.job, job.attempt, status, text}.to_message());
  };
  try {
    const KernelSpec& spec = kernel_spec(job.kernel);
    const Problem p = spec.parse_size(job.size);
    BlockResult res;
    res.job = job.job;
    res.attempt = job.attempt;
    res.block = job.block;
    res.recv_ms = got.recv_ms;
    DeviceRunner& runner = runner_for(spec, &res.build_ms);
    if (opt_.fault == FaultKind::kernel) {
      fail(TrialStatus::runtime, "injected kernel fault (--inject-fault): the kernel was not run");
      return;
    }
    runner.upload(p, job.block, got.message.buffers);
    got.message.buffers.clear();
    LocalSize local;
    switch (job.policy) {
      case LocalPolicy::null: res.local_source = "null"; break;
      case LocalPolicy::rule: local = rule_local(runner, p, job.block); res.local_source = "rule"; break;
      case LocalPolicy::stored: local = job.local; res.local_source = "stored"; break;
      case LocalPolicy::tune: {
        res.trials = tune_block(runner, p, job.block, std::max(1u, job.repetitions), 0);
        local = parse_local_size(res.trials["best"]["local"].get<std::string>());
        res.local_source = "tune";
        break;
      }
    }
    if (std::string why = runner.check_local(p, job.block, local); !why.empty()) {
      res.local_source = fmt::format("null (fallback: {})", why);
      local = std::nullopt;
    }
    RunResult r = runner.run(p, job.block, local, TimingOptions{job.warmup, job.repetitions});
    if (!r.ok()) {
      fail(r.status, r.error);
      return;
    }
    res.local = local;
    res.kernel = std::move(r.kernel);
    res.h2d = std::move(r.h2d);
    res.d2h = std::move(r.d2h);
    res.h2d_wall_ms = r.h2d_wall_ms;
    res.d2h_wall_ms = r.d2h_wall_ms;
    res.busy_ms = ms_since(t0);
    comm_.send(0, res.to_message(std::move(r.outputs)));
  } catch (const std::exception& e) {
    say(fmt::format("job {} failed: {}", job.job, e.what()));
    fail(status_of(e), e.what());
  }
}

void Worker::handle_work(const Received& got) {
  const WorkRequest req = WorkRequest::from(got.message);
  if (opt_.fault == FaultKind::hang) {
    say(fmt::format("injected hang: not answering job {}", req.job));
    return;
  }
  const Tag answer = got.message.tag == Tag::tune ? Tag::tune_result : Tag::calibrate_result;
  try {
    const KernelSpec& spec = kernel_spec(req.kernel);
    const Problem p = spec.parse_size(req.size);
    DeviceRunner& runner = runner_for(spec, nullptr);
    if (opt_.fault == FaultKind::kernel) {
      comm_.send(0, WorkerError{req.job, 0, TrialStatus::runtime, "injected kernel fault (--inject-fault)"}
                        .to_message());
      return;
    }
    json data;
    if (answer == Tag::tune_result) {
      data = tune_whole(runner, p, req.repetitions, req.max_trials, 42);
    } else {
      data = calibrate_device(*device_, spec, p, split_dim(spec, "auto"), req.repetitions, 42,
                              CalibrationBudget{req.calibrate_budget_ms});
    }
    comm_.send(0, WorkResult{req.job, data}.to_message(answer));
  } catch (const std::exception& e) {
    say(fmt::format("job {} failed: {}", req.job, e.what()));
    comm_.send(0, WorkerError{req.job, 0, status_of(e), e.what()}.to_message());
  }
}

void Worker::delegate(Received& got) {
  if (opt_.fault == FaultKind::hang) {
    say(fmt::format("injected hang: not answering a {} request", to_string(got.message.tag)));
    return;
  }
  comm_.send(0, opt_.delegate->handle(got));
}

int Worker::serve() {
  Hello hello;
  hello.protocol = opt_.protocol;
  hello.rank = comm_.rank();
  hello.host = opt_.host;
  hello.selector = opt_.selector;
  if (device_) hello.device = device_->info;
  hello.error = device_error_;
  comm_.send(0, hello.to_message());

  const auto welcome_deadline = clock_type::now() + opt_.welcome_timeout;
  std::optional<clock_type::time_point> stop_seen;
  bool welcomed = false;
  for (;;) {
    if (!stop_seen && opt_.stop_requested && opt_.stop_requested()) stop_seen = clock_type::now();
    // A message already waiting comes first: after a long block the master's
    // shutdown may be there, and it deserves a bye rather than a silent exit.
    auto got = comm_.recv(0, std::chrono::milliseconds(100));
    if (!got) {
      if (stop_seen && clock_type::now() - *stop_seen > opt_.stop_grace) {
        say("signal received and no shutdown from the master; exiting");
        return 4;
      }
      if (!welcomed && clock_type::now() > welcome_deadline) {
        say("no welcome from the master; exiting");
        return 4;
      }
      continue;
    }
    try {
      switch (got->message.tag) {
        case Tag::welcome: {
          const Welcome w = Welcome::from(got->message);
          if (!w.accepted) {
            say(fmt::format("refused by the master: {}", w.reason));
            comm_.flush(std::chrono::seconds(2));
            return 3;
          }
          welcomed = true;
          break;
        }
        case Tag::run_block:
        case Tag::tune:
        case Tag::calibrate:
          if (opt_.delegate) delegate(*got);
          else if (got->message.tag == Tag::run_block) handle_run(*got);
          else handle_work(*got);
          break;
        case Tag::shutdown:
          comm_.send(0, Message{Tag::bye, json::object(), {}});
          comm_.flush(std::chrono::seconds(5));
          return 0;
        default: say(fmt::format("ignoring an unexpected {} message", to_string(got->message.tag)));
      }
    } catch (const ProtocolError& e) {
      say(fmt::format("bad message from the master: {}", e.what()));
      comm_.send(0, WorkerError{0, 0, TrialStatus::runtime, fmt::format("bad message: {}", e.what())}.to_message());
    }
  }
}

}  // namespace wstune::daemon
