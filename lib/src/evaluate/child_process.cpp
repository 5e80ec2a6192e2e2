// A forked child process on a socket pair (child_process.hpp).
#include "evaluate/child_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

SocketRead wait_readable(int fd, SocketClock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SocketClock::now()).count();
    pollfd pfd{fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(std::clamp<long long>(left, 0, 1'000'000'000)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return SocketRead::failed;
    return r > 0 ? SocketRead::ok : SocketRead::timeout;
  }
}

bool send_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

SocketRead recv_all(int fd, void* data, std::size_t n, std::optional<SocketClock::time_point> deadline) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const SocketRead ready = wait_readable(fd, deadline.value_or(SocketClock::time_point::max()));
    if (ready != SocketRead::ok) return ready;
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return SocketRead::closed;
    if (r < 0) return SocketRead::failed;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return SocketRead::ok;
}

bool send_frame(int fd, const nlohmann::json& message) {
  // replace: a build log or device name with invalid UTF-8 must not throw.
  const std::string text = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const auto len = static_cast<std::uint32_t>(text.size());
  return send_all(fd, &len, sizeof len) && send_all(fd, text.data(), text.size());
}

SocketRead recv_frame(int fd, nlohmann::json& message, std::optional<SocketClock::time_point> deadline) {
  std::uint32_t len = 0;
  if (const SocketRead r = recv_all(fd, &len, sizeof len, deadline); r != SocketRead::ok) return r;
  std::string text(len, '\0');
  if (const SocketRead r = recv_all(fd, text.data(), len, deadline); r != SocketRead::ok) return r;
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) return SocketRead::malformed;
  message = std::move(parsed);
  return SocketRead::ok;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("killed by signal {} ({})", sig, ::strsignal(sig));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

namespace {

// The child's side of start(): never returns into the parent's code.
[[noreturn]] void run_child(int fd, pid_t parent, const ChildProcess::Body& body) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);     // never outlive the parent
  if (::getppid() != parent) ::_exit(0);  // the parent died before prctl
  ::signal(SIGPIPE, SIG_IGN);
  int code = 3;
  try {
    code = body(fd);
  } catch (...) {
    code = 3;
  }
  ::_exit(code);
}

}  // namespace

ChildProcess ChildProcess::start(const Body& body, const std::string& what) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(fmt::format("socketpair for {} failed: {}", what, std::strerror(errno)));
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    const int err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    throw Error(fmt::format("fork of {} failed: {}", what, std::strerror(err)));
  }
  if (child == 0) {
    ::close(sv[0]);
    run_child(sv[1], parent, body);
  }
  ::close(sv[1]);
  return ChildProcess(child, sv[0]);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), fd_(std::exchange(other.fd_, -1)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (running()) stop(std::chrono::milliseconds(2000));
    close_fd();
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (running()) stop(std::chrono::milliseconds(2000));
  close_fd();
}

int ChildProcess::take_fd() noexcept {
  return std::exchange(fd_, -1);
}

void ChildProcess::close_fd() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string ChildProcess::stop(std::chrono::milliseconds grace) {
  // shutdown(), not close() alone: a child forked later holds a copy of this
  // end, and the child would then see its end only at the grace's SIGKILL.
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  close_fd();
  if (pid_ < 0) return "ended";
  int status = 0;
  const auto deadline = SocketClock::now() + grace;
  pid_t r = 0;
  while ((r = ::waitpid(pid_, &status, WNOHANG)) == 0 && SocketClock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (r == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  return describe_exit(status);
}

void ChildProcess::stop_in_background(std::chrono::milliseconds grace) noexcept {
  if (!running()) {
    close_fd();
    return;
  }
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  try {
    std::thread([child = std::move(*this), grace]() mutable { child.stop(grace); }).detach();
  } catch (...) {  // no thread: wait here
    stop(grace);
  }
}

std::string ChildProcess::kill() {
  if (pid_ > 0) ::kill(pid_, SIGKILL);
  return stop(std::chrono::milliseconds(2000));
}

}  // namespace wstune
