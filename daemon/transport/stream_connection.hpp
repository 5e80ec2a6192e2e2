#pragma once
/// @file stream_connection.hpp
/// One stream socket (TCP) carrying wstuned's messages in the same form as
/// over MPI: a frame is the Tag (u32), the length of encode_header()'s
/// bytes (u64), those bytes (the CBOR body and the buffers' shapes), then
/// each buffer's bytes in order (host byte order, as encode()). The socket
/// is non-blocking: queue() never waits, write_some() and read_some() move
/// what the socket takes or holds now, so one thread can serve many
/// connections with poll() (TcpHub) and a peer whose link is down for a
/// while costs nothing but its own queue. A partial frame is kept until the
/// rest arrives. Used by both ends (tcp_communicator.hpp); the blocking
/// socket-pair helpers of evaluate/child_process.hpp serve one peer that
/// answers at once and are not enough here.

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "protocol/protocol.hpp"

namespace wstune::daemon {

/// Frames longer than this are refused as malformed (ProtocolError).
inline constexpr std::uint64_t kMaxFrameHeader = std::uint64_t{1} << 30;

/// A connected stream socket with a message outbox and a frame reader.
class StreamConnection {
 public:
  /// Takes `fd` (a connected stream socket; closed by the destructor) and
  /// makes it non-blocking.
  explicit StreamConnection(int fd);
  ~StreamConnection();
  StreamConnection(const StreamConnection&) = delete;
  StreamConnection& operator=(const StreamConnection&) = delete;

  /// The socket.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// Queues `m` (its buffers are sent from their memory, not copied).
  void queue(Message m);
  /// True while queued bytes wait to be written.
  [[nodiscard]] bool wants_write() const noexcept { return !outbox_.empty(); }
  /// Writes what the socket takes now; false when the peer is gone (error()).
  bool write_some();
  /// Reads what has arrived; every message completed by it is appended to
  /// `out`. False when the connection ended (error() says how: closed by the
  /// peer, reset, ...). Throws ProtocolError for a frame that cannot be
  /// read (its tag unknown, its header malformed or too long).
  bool read_some(std::deque<Message>& out);
  /// Why the connection ended ("" while it works).
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  struct Outgoing {
    std::vector<std::uint8_t> head;   // tag, header length, header
    std::vector<HostBuffer> buffers;  // sent after it, in order
    std::size_t part = 0;             // 0: head, i: buffers[i-1]
    std::size_t offset = 0;           // bytes of that part written
  };
  // Where the next incoming bytes go, and how many are still missing there.
  std::pair<std::uint8_t*, std::size_t> target();
  // The current target is full: moves to the next part; a finished message to `out`.
  void advance(std::deque<Message>& out);
  int fd_ = -1;
  std::string error_;
  std::deque<Outgoing> outbox_;
  // Incoming frame: prefix (12 bytes), then header, then buffers.
  enum class Stage { prefix, header, buffers } stage_ = Stage::prefix;
  std::uint8_t prefix_[12] = {};
  std::vector<std::uint8_t> header_;
  std::size_t got_ = 0;  // bytes of the current part read
  std::uint32_t tag_ = 0;
  Message incoming_;
  std::size_t buffer_ = 0;  // index of the buffer being read
};

}  // namespace wstune::daemon
