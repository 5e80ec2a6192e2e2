#pragma once
/// @file isolation.hpp
/// A worker rank's OpenCL work in a child process (issue 17): the rank never
/// initialises OpenCL itself; a forked child opens the device and serves
/// run_block, tune and calibrate requests as an ordinary Worker over a Unix
/// socket pair. A kernel or driver that crashes the child (SIGSEGV), or
/// hangs it past the job's time, costs that job on that rank only: the rank
/// answers the master with a worker_error naming the signal or the timeout,
/// and starts a fresh child for its next request. The fork, the socket pair
/// and the reaping are lib/src/evaluate/child_process.hpp's, as for the
/// CLI's trial worker (IsolatedEvaluator). docs/daemon.md "Faults".

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "evaluate/child_process.hpp"
#include "transport/communicator.hpp"
#include "transport/shared_memory.hpp"
#include "worker/worker.hpp"

namespace wstune::daemon {

/// A Communicator between two processes over a connected AF_UNIX
/// SOCK_STREAM socket: rank() is `rank`, the peer is the other of ranks 0
/// and 1. A message is the tag (u32), the header's length (u64),
/// encode_header(), then per buffer one byte saying how it travels: 'B' and
/// its bytes, or 'F' with the descriptor of a SharedMemory file attached
/// (SCM_RIGHTS) and the file's id (u64), which the receiver maps once and
/// adopts (PeerMemory): a large result crosses without a copy. Last come two
/// lists of file ids (u32 count, u64 each): the peer's files whose buffers
/// were released here, and this side's files that were closed. recv() waits
/// with poll(); a peer that closed the socket (died) is a ProtocolError, so
/// is a peer that stops mid-message or announces a memory file without one.
class PipeCommunicator final : public Communicator {
 public:
  /// Takes ownership of `fd` (closed by the destructor). Buffers allocated
  /// from `shared` (if given; it must outlive the communicator) are lent as
  /// their memory files.
  PipeCommunicator(int fd, int rank, SharedMemory* shared = nullptr);
  ~PipeCommunicator() override;
  PipeCommunicator(const PipeCommunicator&) = delete;
  PipeCommunicator& operator=(const PipeCommunicator&) = delete;
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  /// Writes the whole message (blocking until the peer has read what does
  /// not fit the socket buffer); ProtocolError when the peer is gone.
  void send(int dest, Message m) override;
  std::optional<std::pair<int, Tag>> probe(int source) override;
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override;
  /// Sends are synchronous: always true.
  bool flush(std::chrono::milliseconds timeout) override;
  /// The peer's memory files mapped here (tests, logs).
  [[nodiscard]] const PeerMemory& peer_memory() const noexcept { return peer_; }

 private:
  void send_buffer(const HostBuffer& b);
  HostBuffer recv_buffer(const BufferShape& shape);
  void send_releases();
  void recv_releases();
  int fd_ = -1;
  int rank_ = 0;
  SharedMemory* shared_ = nullptr;
  PeerMemory peer_;
};

/// Where and how an isolated device runs.
struct IsolationOptions {
  std::string selector = "auto";  ///< device selector (open_worker_device())
  int local_index = 0;            ///< node-local worker index (device rule)
  /// The child's Worker settings: fault (build, kernel, or the child-only
  /// crash and stall), host; its stop_requested and log are ignored.
  WorkerOptions worker;
  /// How long one request may take in the child before it is killed (the
  /// daemon passes --timeout minus a margin, so the master hears of it
  /// before its own deadline).
  std::chrono::milliseconds request_timeout{600'000};
  /// How long the child may take to open its device and say hello.
  std::chrono::milliseconds startup_timeout{120'000};
};

/// The child process that owns a worker rank's OpenCL device; it is the
/// rank's WorkDelegate. The constructor forks the first child and waits for
/// its hello (the device model, or why there is none); a child that died is
/// restarted on the next request.
///
/// The calling process must not have initialised OpenCL (fork does not copy
/// an OpenCL runtime's threads); MPI may be initialised (the child never
/// calls MPI and leaves with _exit).
class IsolatedDevice final : public WorkDelegate {
 public:
  explicit IsolatedDevice(IsolationOptions options);
  /// Shuts the child down (SIGKILL after 2 s).
  ~IsolatedDevice() override;
  IsolatedDevice(const IsolatedDevice&) = delete;
  IsolatedDevice& operator=(const IsolatedDevice&) = delete;
  /// The device model the child reported (no OpenCL handles in this
  /// process), or empty with error() saying why.
  [[nodiscard]] const std::optional<Device>& device() const noexcept { return device_; }
  /// Why there is no device ("" when there is one).
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  /// Hands `request` (run_block, tune or calibrate) to the child and returns
  /// its answer; a crash or a request past the timeout is answered as a
  /// worker_error (runtime with the signal, or timeout) and the child is
  /// replaced on the next request.
  Message handle(Received& request) override;
  /// Children started so far (1 + restarts).
  [[nodiscard]] unsigned children_started() const noexcept { return started_; }
  /// The current child's pid, or -1.
  [[nodiscard]] pid_t child_pid() const noexcept { return child_.pid(); }

 private:
  bool start();
  bool fork_child();
  bool take_hello(const Hello& h);
  std::string stop(std::chrono::milliseconds grace);
  std::string kill();
  IsolationOptions opt_;
  std::optional<Device> device_;
  std::string error_;
  ChildProcess child_;
  std::optional<PipeCommunicator> pipe_;
  unsigned started_ = 0;
};

}  // namespace wstune::daemon
