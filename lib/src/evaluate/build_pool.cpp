// Builder processes ahead of the timing worker (build_pool.hpp). The
// protocol, one JSON frame each way: the builder's hello ({"ok":true} or
// {"ok":false,"error":..}), then per request {"build":params} →
// {"built":bool,"error":..}, in order.
#include "evaluate/build_pool.hpp"

#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "runner/runner.hpp"

namespace wstune {
namespace {

// The builder: open the device, say hello, build what arrives until the
// tuner closes its end. Its builds yield the CPU to the timing process
// (nice +10), whose host side (launches, read-back, verification) is timed.
int builder_main(int fd, const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& cfg) {
  ::setpriority(PRIO_PROCESS, 0, 10);  // best effort: a failure only leaves the priority as it was
  std::unique_ptr<DeviceRunner> runner;
  try {
    Device device = select_device(enumerate_devices(), cfg.device);
    const bool nvidia = device.info.platform.find("NVIDIA") != std::string::npos;
    runner = std::make_unique<DeviceRunner>(std::move(device), spec, cfg.build_options);
    runner->warm_builds(nvidia);  // the PTX JIT's own cache, for the timing process
  } catch (const std::exception& e) {
    send_frame(fd, nlohmann::json{{"ok", false}, {"error", e.what()}});
    return 0;
  }
  if (!send_frame(fd, nlohmann::json{{"ok", true}})) return 0;
  for (;;) {
    nlohmann::json req;
    if (recv_frame(fd, req, std::nullopt) != SocketRead::ok || !req.contains("build")) break;
    std::string error;
    const bool built = runner->precompile(with_params(problem, req.at("build")), &error);
    if (!send_frame(fd, nlohmann::json{{"built", built}, {"error", error}})) break;
  }
  // Every build is in the cache: leave without tearing the context down
  // (the process's exit releases it), so the device is free sooner.
  static_cast<void>(runner.release());
  return 0;
}

std::string key_of(const nlohmann::json& params) {
  return params.dump();
}

double ms_between(SocketClock::time_point a, SocketClock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

unsigned default_build_jobs(std::string_view device_type) {
  if (device_type == "cpu") return 0;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 1 ? cores - 1 : 1;
}

BuildPool::BuildPool(const KernelSpec& spec, Problem problem, EvaluatorConfig cfg, unsigned builders,
                     std::chrono::milliseconds progress_limit)
    : spec_(spec),
      problem_(std::move(problem)),
      cfg_(std::move(cfg)),
      progress_limit_(progress_limit),
      builders_(builders),
      restarts_left_(2 * builders + 2) {}

BuildPool::~BuildPool() {
  // Each builder sees its socket's end at once and exits on its own; its
  // exit (an OpenCL context's teardown: about 2 s on NVIDIA's driver) is
  // waited for in the background, not by the tuner.
  for (Builder& b : builders_) b.process.stop_in_background(std::chrono::milliseconds(5000));
}

void BuildPool::start() {
  if (starting_done_) return;
  starting_done_ = true;
  for (Builder& b : builders_) start(b);
}

void BuildPool::start(Builder& b) {
  b = Builder{};
  b.since = SocketClock::now();
  try {
    b.process = ChildProcess::start([this](int fd) { return builder_main(fd, spec_, problem_, cfg_); }, "a builder");
    ++started_;
  } catch (const std::exception&) {
    b.dead = true;
  }
}

bool BuildPool::any_alive() const {
  return std::any_of(builders_.begin(), builders_.end(), [](const Builder& b) { return !b.dead; });
}

void BuildPool::revive() {
  if (queue_.empty()) return;
  for (Builder& b : builders_) {
    if (!b.dead || restarts_left_ == 0) continue;
    --restarts_left_;
    start(b);
  }
}

void BuildPool::feed() {
  revive();
  for (Builder& b : builders_) {
    while (!queue_.empty() && !b.dead && b.hello && b.holds.size() < kInFlight) {
      const std::string key = queue_.front();
      queue_.pop_front();
      Entry& e = entries_.at(key);
      if (!send_frame(b.process.fd(), nlohmann::json{{"build", e.params}})) {
        queue_.push_front(key);  // not handed: another builder takes it
        bury(b);
        break;
      }
      if (b.holds.empty()) b.since = SocketClock::now();  // its progress limit runs from now
      e.state = State::building;
      e.params = nullptr;
      b.holds.push_back(key);
    }
  }
  if (!any_alive()) {  // nobody left to build the queue: the timing process builds it
    for (const std::string& key : queue_) entries_.at(key).state = State::lost;
    lost_ += queue_.size();
    queue_.clear();
  }
}

void BuildPool::submit(const std::vector<nlohmann::json>& params) {
  start();
  for (const nlohmann::json& p : params) {
    std::string key = key_of(p);
    if (!seen_.insert(std::hash<std::string>{}(key)).second) continue;
    entries_[key] = Entry{State::queued, p};
    queue_.push_back(std::move(key));
  }
  pump(SocketClock::now());
}

bool BuildPool::take_answer(Builder& b) {
  nlohmann::json answer;
  // A frame is a few bytes written at once: once readable, it is all there
  // (or the builder died mid-write: the limit then buries it).
  if (recv_frame(b.process.fd(), answer, SocketClock::now() + progress_limit_) != SocketRead::ok) {
    bury(b);
    return false;
  }
  b.since = SocketClock::now();
  if (!b.hello) {
    b.hello = true;
    if (!answer.value("ok", false)) bury(b);
    return !b.dead;
  }
  if (!b.holds.empty()) {
    const auto it = entries_.find(b.holds.front());
    if (it != entries_.end()) it->second.state = State::built;
    b.holds.pop_front();
    ++built_;
  }
  return true;
}

void BuildPool::pump(SocketClock::time_point deadline) {
  feed();
  std::vector<pollfd> fds;
  std::vector<Builder*> who;
  for (Builder& b : builders_) {
    if (b.dead || !b.process.running()) continue;
    fds.push_back(pollfd{b.process.fd(), POLLIN, 0});
    who.push_back(&b);
  }
  if (!fds.empty()) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SocketClock::now()).count();
    const int r = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(left, 0, 1'000'000)));
    for (std::size_t i = 0; r > 0 && i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      Builder& b = *who[i];  // every answer that has arrived
      while (take_answer(b) && (!b.hello || !b.holds.empty()) &&
             wait_readable(b.process.fd(), SocketClock::now()) == SocketRead::ok) {
      }
    }
  }
  hang_check();
  feed();
}

void BuildPool::hang_check() {
  const auto now = SocketClock::now();
  for (Builder& b : builders_)
    if (!b.dead && (!b.hello || !b.holds.empty()) && now - b.since > progress_limit_) bury(b);
}

void BuildPool::bury(Builder& b) {
  b.process.kill();
  b.dead = true;
  for (const std::string& key : b.holds) {
    const auto it = entries_.find(key);
    if (it != entries_.end()) it->second.state = State::lost;
  }
  lost_ += b.holds.size();
  b.holds.clear();
}

std::vector<pid_t> BuildPool::builder_pids() const {
  std::vector<pid_t> pids;
  for (const Builder& b : builders_)
    if (b.process.running()) pids.push_back(b.process.pid());
  return pids;
}

bool BuildPool::await(const nlohmann::json& params) {
  const std::string key = key_of(params);
  const auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  if (it->second.state == State::queued) {  // next in line
    queue_.erase(std::find(queue_.begin(), queue_.end(), key));
    queue_.push_front(key);
  }
  const auto t0 = SocketClock::now();
  // Waits in slices, so a builder past its progress limit is found.
  while (it->second.state == State::queued || it->second.state == State::building)
    pump(SocketClock::now() + std::min<std::chrono::milliseconds>(progress_limit_, std::chrono::milliseconds(1000)));
  waited_ms_ += ms_between(t0, SocketClock::now());
  const bool built = it->second.state == State::built;
  entries_.erase(it);
  return built;
}

}  // namespace wstune
