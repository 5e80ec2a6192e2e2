// A worker rank's OpenCL work in a child process (isolation.hpp).
#include "worker/isolation.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "app.hpp"

namespace wstune::daemon {

namespace {

using clock_type = std::chrono::steady_clock;

// A peer that stops in the middle of a message this long is gone.
constexpr std::chrono::seconds kMidMessage{60};

// How a buffer travels (PipeCommunicator): its bytes follow, or its memory file is attached.
constexpr char kBytesFollow = 'B';
constexpr char kMemoryFile = 'F';

void write_all(int fd, const void* data, std::size_t n) {
  if (!send_all(fd, data, n))
    throw ProtocolError(fmt::format("the peer process is gone (send: {})", std::strerror(errno)));
}

// Waits until `fd` is readable or `deadline` passes; false on timeout.
bool readable(int fd, clock_type::time_point deadline) {
  const SocketRead r = wait_readable(fd, deadline);
  if (r == SocketRead::failed)
    throw ProtocolError(fmt::format("poll on the peer's socket failed: {}", std::strerror(errno)));
  return r == SocketRead::ok;
}

void read_all(int fd, void* data, std::size_t n) {
  switch (recv_all(fd, data, n, clock_type::now() + kMidMessage)) {
    case SocketRead::ok:
      return;
    case SocketRead::timeout:
      throw ProtocolError("the peer process stopped in the middle of a message");
    case SocketRead::closed:
      throw ProtocolError("the peer process is gone (its end of the socket closed)");
    default:
      throw ProtocolError(fmt::format("the peer process is gone (recv: {})", std::strerror(errno)));
  }
}

// How a child's end reads in this file's messages: "was killed by signal
// 11 (...)", "exited with status 3".
std::string exit_words(const std::string& described) {
  return described.rfind("killed", 0) == 0 ? "was " + described : described;
}

// The child's view of the parent, with the child-only faults: on a work
// request, `crash` raises SIGSEGV (a kernel or driver that corrupts the
// process) and `stall` never returns (one that hangs it).
class FaultyPipe final : public ForwardingCommunicator {
 public:
  FaultyPipe(Communicator& inner, FaultKind fault) : ForwardingCommunicator(inner), fault_(fault) {}
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override {
    auto got = ForwardingCommunicator::recv(source, timeout);
    const bool work = got && (got->message.tag == Tag::run_block || got->message.tag == Tag::tune ||
                              got->message.tag == Tag::calibrate || got->message.tag == Tag::trial);
    if (work && fault_ == FaultKind::crash) {
      ::signal(SIGSEGV, SIG_DFL);
      ::raise(SIGSEGV);
    }
    if (work && fault_ == FaultKind::stall) {
      for (;;) ::pause();
    }
    return got;
  }

 private:
  FaultKind fault_;
};

// The child: opens the device and serves the parent as a Worker would serve
// the master; its exit status (ChildProcess::Body).
int child_main(int fd, const IsolationOptions& o) {
  // The rank decides when this process ends; signals meant for the job
  // (hydra forwards SIGINT) are the rank's to handle.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  int code = 3;
  try {
    // Block results are read back into memory files the rank maps: no
    // copy through the socket (shared_memory.hpp).
    SharedMemory shared;
    PipeCommunicator pipe(fd, 1, &shared);
    FaultyPipe comm(pipe, o.worker.fault);
    WorkerOptions wo = o.worker;
    wo.output_memory = &shared;
    if (wo.fault == FaultKind::crash || wo.fault == FaultKind::stall || wo.fault == FaultKind::hang) {
      wo.fault = FaultKind::none;  // crash and stall are FaultyPipe's; hang is the rank's
    }
    wo.delegate = nullptr;
    wo.stop_requested = nullptr;
    wo.leave_on_stop = false;
    wo.log = nullptr;
    wo.welcome_timeout = o.startup_timeout;
    auto [device, why] = open_worker_device(o.selector, o.local_index);
    Worker worker(comm, std::move(device), why, wo);
    code = worker.serve();
  } catch (...) {
    // The parent closed its end (it is shutting down or gone): nothing to say.
  }
  return code;
}

}  // namespace

// ---- PipeCommunicator -------------------------------------------------------------

PipeCommunicator::PipeCommunicator(int fd, int rank, SharedMemory* shared) : fd_(fd), rank_(rank), shared_(shared) {}

PipeCommunicator::~PipeCommunicator() {
  if (fd_ >= 0) ::close(fd_);
}

void PipeCommunicator::send(int dest, Message m) {
  if (dest != 1 - rank_) throw ProtocolError(fmt::format("send to rank {}: a pipe joins ranks 0 and 1", dest));
  const std::vector<std::uint8_t> header = encode_header(m);
  const auto tag = static_cast<std::uint32_t>(m.tag);
  const auto len = static_cast<std::uint64_t>(header.size());
  write_all(fd_, &tag, sizeof tag);
  write_all(fd_, &len, sizeof len);
  write_all(fd_, header.data(), header.size());
  for (const HostBuffer& b : m.buffers) send_buffer(b);
  send_releases();
}

// A buffer in one of `shared_`'s memory files goes as its descriptor
// attached to the byte 'F' and the file's id (u64); any other as 'B' and
// its bytes.
void PipeCommunicator::send_buffer(const HostBuffer& b) {
  const SharedMemory::Lent lent = shared_ && b.bytes() ? shared_->lend(b.data(), b.bytes()) : SharedMemory::Lent{};
  if (lent.fd >= 0) {
    send_marked(fd_, kMemoryFile, lent.fd);
    write_all(fd_, &lent.id, sizeof lent.id);
    return;
  }
  write_all(fd_, &kBytesFollow, 1);
  write_all(fd_, b.data(), b.bytes());
}

HostBuffer PipeCommunicator::recv_buffer(const BufferShape& shape) {
  if (!readable(fd_, clock_type::now() + kMidMessage))
    throw ProtocolError("the peer process stopped in the middle of a message");
  const auto [mark, memfd] = recv_marked(fd_);
  if (mark == kBytesFollow && memfd < 0) {
    HostBuffer b = HostBuffer::uninitialized(shape.type, shape.count);  // read_all fills it
    read_all(fd_, b.data(), b.bytes());
    return b;
  }
  if (mark != kMemoryFile || memfd < 0) {
    if (memfd >= 0) ::close(memfd);
    throw ProtocolError(fmt::format("the peer process announced a buffer of {} {} as '{}' {} a memory file",
                                    shape.count, shape.type.name(), mark, memfd < 0 ? "without" : "with"));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{memfd};
  std::uint64_t id = 0;
  read_all(fd_, &id, sizeof id);
  return peer_.adopt(id, memfd, shape.type, shape.count);
}

// Each message ends with two lists of file ids (u32 count, u64 ids): the
// peer's files whose buffers this side released (returned), and this
// side's files it closed (the peer drops its mappings).
void PipeCommunicator::send_releases() {
  for (const std::vector<std::uint64_t>& ids :
       {peer_.take_returned(), shared_ ? shared_->take_forgotten() : std::vector<std::uint64_t>{}}) {
    const auto n = static_cast<std::uint32_t>(ids.size());
    write_all(fd_, &n, sizeof n);
    write_all(fd_, ids.data(), ids.size() * sizeof(std::uint64_t));
  }
}

void PipeCommunicator::recv_releases() {
  for (int list = 0; list < 2; ++list) {
    std::uint32_t n = 0;
    read_all(fd_, &n, sizeof n);
    if (n > (1u << 20)) throw ProtocolError(fmt::format("the peer process announced {} released memory files", n));
    std::vector<std::uint64_t> ids(n);
    read_all(fd_, ids.data(), ids.size() * sizeof(std::uint64_t));
    if (list == 1) {
      peer_.forget(ids);
    } else if (shared_) {
      for (const std::uint64_t id : ids) shared_->returned(id);
    }
  }
}

std::optional<std::pair<int, Tag>> PipeCommunicator::probe(int) {
  if (!readable(fd_, clock_type::now())) return std::nullopt;
  std::uint32_t tag = 0;
  const ssize_t r = ::recv(fd_, &tag, sizeof tag, MSG_PEEK | MSG_DONTWAIT);
  if (r != static_cast<ssize_t>(sizeof tag)) return std::nullopt;
  return std::pair{1 - rank_, static_cast<Tag>(tag)};
}

std::optional<Received> PipeCommunicator::recv(int, std::chrono::milliseconds timeout) {
  if (!readable(fd_, clock_type::now() + timeout)) return std::nullopt;
  const auto t0 = clock_type::now();
  std::uint32_t tag = 0;
  std::uint64_t len = 0;
  read_all(fd_, &tag, sizeof tag);
  read_all(fd_, &len, sizeof len);
  if (!is_known_tag(static_cast<int>(tag)) || len > (std::uint64_t{1} << 31)) {
    throw ProtocolError(fmt::format("the peer process sent a message with tag {} and a {}-byte header", tag, len));
  }
  std::vector<std::uint8_t> header(len);
  read_all(fd_, header.data(), header.size());
  auto [message, shapes] = decode_header(static_cast<Tag>(tag), header);
  for (const BufferShape& shape : shapes) {
    if (shape.count > (std::uint64_t{1} << 40) / shape.type.bytes()) {
      throw ProtocolError(fmt::format("the peer process announced {} elements of {}", shape.count, shape.type.name()));
    }
    message.buffers.push_back(recv_buffer(shape));
  }
  recv_releases();
  Received r{1 - rank_, std::move(message), 0};
  r.recv_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  return r;
}

bool PipeCommunicator::flush(std::chrono::milliseconds) {
  return true;
}

// ---- IsolatedDevice ---------------------------------------------------------------

IsolatedDevice::IsolatedDevice(IsolationOptions options) : opt_(std::move(options)) {
  start();
}

IsolatedDevice::~IsolatedDevice() {
  if (!child_.running()) return;
  try {
    pipe_->send(1, Message{Tag::shutdown, nlohmann::json::object(), {}});
  } catch (...) {
  }
  stop(std::chrono::milliseconds(2000));
}

std::string IsolatedDevice::stop(std::chrono::milliseconds grace) {
  pipe_.reset();  // closes our end: the child's next read fails
  if (!child_.running()) return "ended";
  return exit_words(child_.stop(grace));
}

std::string IsolatedDevice::kill() {
  pipe_.reset();
  if (!child_.running()) return "ended";
  return exit_words(child_.kill());
}

// Forks a child on a new socket pair (the child runs child_main()) and keeps
// it and our end; false, with error_ saying why, when that fails.
bool IsolatedDevice::fork_child() {
  try {
    child_ = ChildProcess::start([this](int fd) { return child_main(fd, opt_); }, "the isolated OpenCL process");
  } catch (const Error& e) {
    error_ = e.what();
    return false;
  }
  pipe_.emplace(child_.take_fd(), 0);
  ++started_;
  return true;
}

bool IsolatedDevice::start() {
  if (!fork_child()) return false;
  std::string why;
  try {
    auto got = pipe_->recv(1, opt_.startup_timeout);
    if (!got) {
      why = fmt::format("did not open its device within {} s", opt_.startup_timeout.count() / 1000.0);
    } else if (got->message.tag != Tag::hello) {
      why = fmt::format("said {} instead of hello", to_string(got->message.tag));
    } else {
      return take_hello(Hello::from(got->message));
    }
  } catch (const ProtocolError& e) {
    why = fmt::format("failed while starting ({})", e.what());
  }
  const pid_t was = child_.pid();
  const std::string exit = stop(std::chrono::milliseconds(0));
  device_.reset();
  error_ = fmt::format("the isolated OpenCL process (pid {}) {}; it {}", was, why, exit);
  return false;
}

// The child's hello: with a device, its model is kept and the child
// welcomed; without one, the child is refused (error_ says why) and stopped.
bool IsolatedDevice::take_hello(const Hello& h) {
  if (h.device) {
    device_ = Device{cl::Platform(), cl::Device(), *h.device};
    error_.clear();
    pipe_->send(1, Welcome{true, ""}.to_message());
    return true;
  }
  // No device: the reason is the worker's; the child leaves when refused.
  device_.reset();
  error_ = h.error;
  pipe_->send(1, Welcome{false, h.error}.to_message());
  stop(std::chrono::milliseconds(2000));
  return false;
}

namespace {
// The job and attempt (run_block only) a request is for.
struct RequestId {
  std::uint64_t job = 0;
  unsigned attempt = 0;
  // A worker_error about the request.
  [[nodiscard]] Message fail(TrialStatus status, const std::string& text) const {
    return WorkerError{job, attempt, status, text}.to_message();
  }
};

RequestId request_id(const Message& m) {
  if (m.tag == Tag::run_block) {
    const RunBlock rb = RunBlock::from(m);
    return {rb.job, rb.attempt};
  }
  if (m.tag == Tag::trial) return {TrialRequest::from(m).job, 0};
  return {WorkRequest::from(m).job, 0};
}

// The child's answer to a request the rank received in `recv_ms` and took
// on at `t0`, or nothing when none came by `deadline`.
std::optional<Message> await_answer(PipeCommunicator& pipe, double recv_ms, clock_type::time_point t0,
                                    clock_type::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    auto got = left.count() > 0 ? pipe.recv(1, left) : std::nullopt;
    if (!got) return std::nullopt;
    Message& m = got->message;
    if (m.tag == Tag::block_result) {
      // The rank's own receive and relay belong to the block's times.
      BlockResult br = BlockResult::from(m);
      br.recv_ms += recv_ms;
      br.busy_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
      return br.to_message(std::move(m.buffers));
    }
    if (m.tag == Tag::worker_error || m.tag == Tag::tune_result || m.tag == Tag::calibrate_result ||
        m.tag == Tag::trial_result)
      return std::move(m);
    // Anything else (a stray bye) is not an answer: keep waiting.
  }
}
}  // namespace

Message IsolatedDevice::handle(Received& request) {
  const auto t0 = clock_type::now();
  const RequestId id = request_id(request.message);
  if (!child_.running() && !start())
    return id.fail(TrialStatus::runtime, "the isolated OpenCL process could not start: " + error_);
  const pid_t child = child_.pid();
  try {
    pipe_->send(1, std::move(request.message));
    if (auto answer = await_answer(*pipe_, request.recv_ms, t0, t0 + opt_.request_timeout)) return std::move(*answer);
    kill();
    return id.fail(TrialStatus::timeout,
                   fmt::format("no answer from the isolated OpenCL process (pid {}) within {} s on job {}; it was "
                               "killed and a new one starts for the next request",
                               child, opt_.request_timeout.count() / 1000.0, id.job));
  } catch (const ProtocolError&) {
    // Its end of the socket closed, or it sent what it cannot have meant.
    const std::string exit = stop(std::chrono::milliseconds(2000));
    return id.fail(TrialStatus::runtime, fmt::format("the isolated OpenCL process (pid {}) {} during job {}; a new one "
                                                     "starts for the next request",
                                                     child, exit, id.job));
  } catch (const std::exception& e) {
    // This side could not take the answer (e.g. std::bad_alloc): the stream
    // is out of step, so the process goes.
    kill();
    return id.fail(TrialStatus::runtime, fmt::format("the answer of the isolated OpenCL process (pid {}) to job {} "
                                                     "could not be received ({}); a new one starts for the next "
                                                     "request",
                                                     child, id.job, e.what()));
  }
}

}  // namespace wstune::daemon
