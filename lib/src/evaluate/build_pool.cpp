// Builder processes ahead of the timing worker (build_pool.hpp). The
// protocol, one JSON frame each way: the builder's hello ({"ok":true} or
// {"ok":false,"error":..}), then per request {"build":params} →
// {"built":bool,"error":..}, in order.
#include "evaluate/build_pool.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "runner/runner.hpp"

namespace wstune {
namespace {

// The builder: open the device, say hello, build what arrives until the
// tuner closes its end.
int builder_main(int fd, const KernelSpec& spec, const Problem& problem, const EvaluatorConfig& cfg) {
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
    if (recv_frame(fd, req, std::nullopt) != SocketRead::ok || !req.contains("build")) return 0;
    std::string error;
    const bool built = runner->precompile(with_params(problem, req.at("build")), &error);
    if (!send_frame(fd, nlohmann::json{{"built", built}, {"error", error}})) return 0;
  }
}

std::string key_of(const nlohmann::json& params) {
  return params.dump();
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
  // Every builder sees its socket's end at once, so they exit (and tear
  // down their OpenCL contexts) side by side; stopping them one by one
  // waited for each teardown in turn (about 2 s each on NVIDIA's driver).
  for (Builder& b : builders_)
    if (b.process.fd() >= 0) ::shutdown(b.process.fd(), SHUT_RDWR);
  for (Builder& b : builders_) b.process.stop(std::chrono::milliseconds(2000));
}

void BuildPool::start(Builder& b) {
  b = Builder{};
  try {
    b.process = ChildProcess::start([this](int fd) { return builder_main(fd, spec_, problem_, cfg_); }, "a builder");
    ++started_;
  } catch (const std::exception&) {
    b.dead = true;
  }
}

BuildPool::Builder* BuildPool::least_loaded() {
  Builder* best = nullptr;
  for (Builder& b : builders_) {
    if (!b.process.running() && !b.dead && started_ < builders_.size()) start(b);  // the first start
    if (b.dead && b.queue.empty() && restarts_left_ > 0) {
      --restarts_left_;
      start(b);
    }
    if (b.dead || !b.process.running()) continue;
    drain(b);
    if (!b.dead && (!best || b.queue.size() < best->queue.size())) best = &b;
  }
  return best;
}

void BuildPool::submit(const std::vector<nlohmann::json>& params) {
  for (const nlohmann::json& p : params) {
    const std::string key = key_of(p);
    if (state_.count(key)) continue;
    Builder* b = least_loaded();
    if (!b) return;  // no builder left: the timing process builds
    if (!send_frame(b->process.fd(), nlohmann::json{{"build", p}})) {
      bury(*b);
      continue;
    }
    b->queue.push_back(key);
    state_[key] = {State::queued, static_cast<std::size_t>(b - builders_.data())};
  }
}

bool BuildPool::take_answer(Builder& b, SocketClock::time_point deadline) {
  nlohmann::json answer;
  const SocketRead r = recv_frame(b.process.fd(), answer, deadline);
  if (r != SocketRead::ok) {
    bury(b);
    return false;
  }
  if (!b.hello) {
    b.hello = true;
    if (!answer.value("ok", false)) {
      bury(b);
      return false;
    }
    return true;
  }
  if (!b.queue.empty()) {
    state_[b.queue.front()].first = State::built;
    b.queue.pop_front();
    ++built_;
  }
  return true;
}

void BuildPool::drain(Builder& b) {
  while (!b.dead && (!b.hello || !b.queue.empty()) &&
         wait_readable(b.process.fd(), SocketClock::now()) == SocketRead::ok) {
    if (!take_answer(b, SocketClock::now() + progress_limit_)) return;
  }
}

void BuildPool::bury(Builder& b) {
  b.process.kill();
  b.dead = true;
  for (const std::string& key : b.queue) state_[key].first = State::lost;
  lost_ += b.queue.size();
  b.queue.clear();
}

std::vector<pid_t> BuildPool::builder_pids() const {
  std::vector<pid_t> pids;
  for (const Builder& b : builders_)
    if (b.process.running()) pids.push_back(b.process.pid());
  return pids;
}

bool BuildPool::await(const nlohmann::json& params) {
  const auto it = state_.find(key_of(params));
  if (it == state_.end()) return false;
  Builder& b = builders_[it->second.second];
  // Each answer restarts the limit: a builder that makes progress is not hung.
  while (it->second.first == State::queued)
    if (!take_answer(b, SocketClock::now() + progress_limit_)) break;
  return it->second.first == State::built;
}

}  // namespace wstune
