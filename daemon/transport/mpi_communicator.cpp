#include "transport/mpi_communicator.hpp"

#include <algorithm>
#include <climits>
#include <thread>

#include <fmt/format.h>

namespace wstune::daemon {

namespace {
// Buffers travel in MPI messages of at most this many bytes (MPI counts are ints).
constexpr std::size_t kChunkBytes = std::size_t{1} << 30;
}  // namespace

namespace {
void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw ProtocolError(fmt::format("{} failed: {}", call, std::string(text, static_cast<std::size_t>(len))));
}
}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm_(comm) {
  mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  mpi_check(MPI_Comm_dup(comm_, &data_comm_), "MPI_Comm_dup");
}

MpiCommunicator::~MpiCommunicator() {
  try {
    if (!flush(std::chrono::seconds(5))) {
      for (auto& p : pending_) {
        for (auto& r : p.requests) {
          if (r == MPI_REQUEST_NULL) continue;
          MPI_Cancel(&r);
          MPI_Request_free(&r);
        }
      }
      // A send that had matched may still be reading its buffers after the
      // cancel (MPI_Request_free lets it finish): leak them rather than free
      // memory MPI may still read before MPI_Finalize.
      new std::list<Pending>(std::move(pending_));  // NOLINT: deliberate leak at shutdown
    }
  } catch (...) {
  }
}

void MpiCommunicator::reap() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    mpi_check(MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (done) spin_since_ = std::chrono::steady_clock::now();  // progress: keep spinning a while
    it = done ? pending_.erase(it) : std::next(it);
  }
}

void MpiCommunicator::send(int dest, Message m) {
  if (dest < 0 || dest >= size_) {
    throw ProtocolError(fmt::format("send to rank {}: the communicator has ranks 0..{}", dest, size_ - 1));
  }
  reap();
  Pending p;
  p.header = encode_header(m);
  if (p.header.size() > static_cast<std::size_t>(INT_MAX)) {
    throw ProtocolError(
        fmt::format("a {} message header of {} bytes exceeds MPI's count limit", to_string(m.tag), p.header.size()));
  }
  p.buffers = std::move(m.buffers);
  Pending& q = pending_.emplace_back(std::move(p));  // buffers keep their addresses from here on
  spin_since_ = std::chrono::steady_clock::now();
  q.requests.reserve(1 + q.buffers.size());
  q.requests.push_back(MPI_REQUEST_NULL);
  mpi_check(MPI_Isend(q.header.data(), static_cast<int>(q.header.size()), MPI_BYTE, dest, static_cast<int>(m.tag),
                      comm_, &q.requests.back()),
            "MPI_Isend");
  for (auto& b : q.buffers) {
    for (std::size_t at = 0; at < b.bytes(); at += kChunkBytes) {  // MPI counts are ints: chunks of 1 GiB
      q.requests.push_back(MPI_REQUEST_NULL);
      const auto n = static_cast<int>(std::min(kChunkBytes, b.bytes() - at));
      mpi_check(MPI_Isend(b.data() + at, n, MPI_BYTE, dest, 0, data_comm_, &q.requests.back()), "MPI_Isend(buffer)");
    }
  }
}

// One MPI_Iprobe for a message from `source` (any source for kAnySource);
// true with `st` its status when one is there.
bool MpiCommunicator::iprobe(int source, MPI_Status& st) {
  int flag = 0;
  mpi_check(MPI_Iprobe(source == kAnySource ? MPI_ANY_SOURCE : source, MPI_ANY_TAG, comm_, &flag, &st), "MPI_Iprobe");
  return flag != 0;
}

std::optional<std::pair<int, Tag>> MpiCommunicator::probe(int source) {
  reap();
  MPI_Status st;
  if (!iprobe(source, st)) return std::nullopt;
  return std::pair{st.MPI_SOURCE, static_cast<Tag>(st.MPI_TAG)};
}

std::optional<Received> MpiCommunicator::recv(int source, std::chrono::milliseconds timeout) {
  const auto deadline = clock::now() + timeout;
  auto backoff = std::chrono::microseconds(50);
  for (;;) {
    reap();
    MPI_Status st;
    if (iprobe(source, st)) return receive(st);
    const auto now = clock::now();
    if (now >= deadline) return std::nullopt;
    wait_between_polls(now, deadline, backoff);
  }
}

// Receives the message `st` announced: its header, then its buffers; timed
// from here.
Received MpiCommunicator::receive(const MPI_Status& st) {
  const auto t0 = clock::now();
  int count = 0;
  mpi_check(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(std::max(count, 0)));
  mpi_check(MPI_Recv(bytes.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
  // A header that cannot be read leaves its buffers (if any) queued on
  // data_comm_: the stream from that rank is then lost, and the
  // ProtocolError is fatal for the callers. A readable header's buffers
  // are always received, even when the message is then refused, so the
  // next message from that rank starts clean. The buffers were sent
  // together with the header, so these receives wait only for the data
  // in flight.
  auto [message, shapes] = decode_header(static_cast<Tag>(st.MPI_TAG), bytes);
  for (const BufferShape& shape : shapes) message.buffers.push_back(recv_buffer(shape, st.MPI_SOURCE));
  if (!is_known_tag(st.MPI_TAG)) {
    throw ProtocolError(fmt::format("rank {} sent a message with unknown tag {}", st.MPI_SOURCE, st.MPI_TAG));
  }
  Received r{st.MPI_SOURCE, std::move(message), 0};
  r.recv_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  return r;
}

// One buffer of `shape` from `source` on data_comm_, in chunks of at most kChunkBytes.
HostBuffer MpiCommunicator::recv_buffer(const BufferShape& shape, int source) {
  HostBuffer b = HostBuffer::uninitialized(shape.type, shape.count);  // the receives fill it
  for (std::size_t at = 0; at < b.bytes(); at += kChunkBytes) {
    const auto n = static_cast<int>(std::min(kChunkBytes, b.bytes() - at));
    mpi_check(MPI_Recv(b.data() + at, n, MPI_BYTE, source, 0, data_comm_, MPI_STATUS_IGNORE), "MPI_Recv(buffer)");
  }
  return b;
}

// Waits between two polls of recv(), never past `deadline`: yields while own
// sends progress, else sleeps `backoff` and doubles it (up to 250 µs).
void MpiCommunicator::wait_between_polls(clock::time_point now, clock::time_point deadline,
                                         std::chrono::microseconds& backoff) {
  if (!pending_.empty() && now - spin_since_ < kSpinAfterProgress) {
    // Own sends in flight and moving: keep MPI progressing them instead of
    // sleeping. A send whose peer never receives stops the spinning after
    // kSpinAfterProgress without progress (back-off as usual).
    std::this_thread::yield();
    backoff = std::chrono::microseconds(50);
    return;
  }
  std::this_thread::sleep_for(std::min<clock::duration>(backoff, deadline - now));
  backoff = std::min(backoff * 2, std::chrono::microseconds(250));
}

bool MpiCommunicator::flush(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    reap();
    if (pending_.empty()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();  // a rendezvous send advances only inside MPI calls
  }
}

}  // namespace wstune::daemon
