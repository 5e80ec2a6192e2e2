#pragma once
/// @file child_process.hpp
/// One forked child process joined to this one by a Unix socket pair: the
/// isolation of OpenCL work that may hang or crash (the tuner's trial worker,
/// IsolatedEvaluator, and wstuned's isolated device, daemon/worker/isolation.cpp).
/// The parent starts the child, talks to it over the socket (length-prefixed
/// JSON frames with deadlines, or its own framing over the raw socket), and
/// reaps it with a grace period before SIGKILL. See docs/tuning.md "Isolation".

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace wstune {

/// How reading from the peer's socket ended.
enum class SocketRead {
  ok,        ///< every byte asked for arrived (a frame: and it is a JSON document)
  closed,    ///< the peer closed its end (it exited or died)
  failed,    ///< poll() or recv() failed (errno says why)
  timeout,   ///< the deadline passed first
  malformed  ///< a frame arrived whole but is not JSON (frames only)
};

/// The clock of every deadline here.
using SocketClock = std::chrono::steady_clock;

/// Waits until `fd` is readable (data or the peer's end closed) or
/// `deadline` passes (a deadline already past polls once without waiting).
/// Returns SocketRead::ok, timeout, or failed (poll() failed, errno set).
SocketRead wait_readable(int fd, SocketClock::time_point deadline);

/// Writes all `n` bytes of `data` to the socket `fd` (send() with
/// MSG_NOSIGNAL, retried on EINTR); false, with errno set, when the peer is
/// gone.
bool send_all(int fd, const void* data, std::size_t n);

/// Reads exactly `n` bytes into `data` before `deadline` (none: wait as long
/// as it takes). Returns ok, closed, failed (errno set) or timeout.
SocketRead recv_all(int fd, void* data, std::size_t n, std::optional<SocketClock::time_point> deadline);

/// Sends `message` as one frame: its length in bytes (u32, host order) then
/// its compact JSON text (invalid UTF-8 in strings replaced, never thrown).
/// False when the peer is gone.
bool send_frame(int fd, const nlohmann::json& message);

/// Receives one frame (see send_frame) into `message` before `deadline`
/// (none: no limit). Returns ok, closed, failed, timeout, or malformed when
/// the frame's text is not JSON; `message` is set only on ok.
SocketRead recv_frame(int fd, nlohmann::json& message, std::optional<SocketClock::time_point> deadline);

/// A waitpid() status in words: "killed by signal 11 (Segmentation fault)",
/// "exited with status 3", or "ended".
std::string describe_exit(int status);

/// A child process forked with a socket pair. The child runs the body given
/// to start() and leaves with _exit(): it never returns into the parent's
/// code (copied by fork), never outlives the parent (PR_SET_PDEATHSIG,
/// SIGKILL) and ignores SIGPIPE. Movable, not copyable; the destructor stops
/// a child still running (SIGKILL after 2 s).
///
/// The calling process should not have initialised OpenCL (fork does not
/// copy an OpenCL runtime's threads); the child may.
class ChildProcess {
 public:
  /// What the child runs with its end of the socket pair; its return value
  /// is the child's exit status (an exception escaping it: status 3).
  using Body = std::function<int(int fd)>;

  /// No child.
  ChildProcess() = default;
  /// Forks a child running `body` on a new socket pair (SOCK_STREAM,
  /// close-on-exec). Throws Error naming `what` (e.g. "the tuning worker")
  /// when socketpair() or fork() fails.
  static ChildProcess start(const Body& body, const std::string& what);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// stop(2 s) when a child still runs.
  ~ChildProcess();

  /// True while a child has been started and not yet reaped.
  [[nodiscard]] bool running() const noexcept { return pid_ > 0; }
  /// The child's pid, or -1.
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// This process's end of the socket pair, or -1 (closed or taken).
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Hands this process's end of the socket to the caller, who closes it
  /// (stop() then no longer does).
  int take_fd() noexcept;

  /// Shuts down and closes this process's end of the socket (the child's
  /// next read ends, even while other children hold copies of this end,
  /// inherited through fork),
  /// waits up to `grace` for the child to exit, then sends SIGKILL and
  /// reaps it. Returns describe_exit() of its status ("ended" when no child
  /// runs).
  std::string stop(std::chrono::milliseconds grace);
  /// stop(grace) without waiting: ends the socket now (the child's next read
  /// ends) and leaves the wait, and the SIGKILL after `grace`, to a detached
  /// thread (this object no longer holds the child). For children whose exit
  /// is slow and of no interest (the build pool's builders). Never throws: if
  /// no thread can start, it waits here.
  void stop_in_background(std::chrono::milliseconds grace) noexcept;
  /// SIGKILL now, then stop(): for a child that hangs or is out of step.
  std::string kill();

 private:
  ChildProcess(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  void close_fd() noexcept;
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace wstune
