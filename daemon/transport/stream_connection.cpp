// Messages over a non-blocking stream socket (stream_connection.hpp).
#include "transport/stream_connection.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace wstune::daemon {

StreamConnection::StreamConnection(int fd) : fd_(fd) {
  const int flags = ::fcntl(fd_, F_GETFL, 0);
  ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
}

StreamConnection::~StreamConnection() {
  if (fd_ >= 0) ::close(fd_);
}

void StreamConnection::queue(Message m) {
  Outgoing o;
  const std::vector<std::uint8_t> header = encode_header(m);
  const auto tag = static_cast<std::uint32_t>(m.tag);
  const std::uint64_t len = header.size();
  o.head.resize(12 + header.size());
  std::memcpy(o.head.data(), &tag, 4);
  std::memcpy(o.head.data() + 4, &len, 8);
  std::memcpy(o.head.data() + 12, header.data(), header.size());
  o.buffers = std::move(m.buffers);
  outbox_.push_back(std::move(o));
}

bool StreamConnection::write_some() {
  while (!outbox_.empty()) {
    Outgoing& o = outbox_.front();
    if (o.part > o.buffers.size()) {
      outbox_.pop_front();
      continue;
    }
    const auto* data = o.part == 0
                           ? o.head.data()
                           : reinterpret_cast<const std::uint8_t*>(o.buffers[o.part - 1].data());  // NOLINT: bytes
    const std::size_t size = o.part == 0 ? o.head.size() : o.buffers[o.part - 1].bytes();
    if (o.offset >= size) {
      ++o.part;
      o.offset = 0;
      continue;
    }
    const ssize_t w = ::send(fd_, data + o.offset, size - o.offset, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (w <= 0) {
      error_ = w < 0 ? std::strerror(errno) : "the peer closed the connection";
      return false;
    }
    o.offset += static_cast<std::size_t>(w);
  }
  return true;
}

std::pair<std::uint8_t*, std::size_t> StreamConnection::target() {
  switch (stage_) {
    case Stage::prefix:
      return {prefix_ + got_, sizeof prefix_ - got_};
    case Stage::header:
      return {header_.data() + got_, header_.size() - got_};
    case Stage::buffers:
      break;
  }
  HostBuffer& b = incoming_.buffers[buffer_];
  return {reinterpret_cast<std::uint8_t*>(b.data()) + got_, b.bytes() - got_};  // NOLINT: bytes
}

void StreamConnection::advance(std::deque<Message>& out) {
  got_ = 0;
  if (stage_ == Stage::prefix) {
    std::uint64_t len = 0;
    std::memcpy(&tag_, prefix_, 4);
    std::memcpy(&len, prefix_ + 4, 8);
    if (len > kMaxFrameHeader) {
      throw ProtocolError(fmt::format("a frame announces a header of {} bytes (at most {}): not wstuned's protocol",
                                      len, kMaxFrameHeader));
    }
    header_.assign(static_cast<std::size_t>(len), 0);
    stage_ = Stage::header;
    if (!header_.empty()) return;
  }
  if (stage_ == Stage::header) {
    stage_ = Stage::prefix;  // a malformed header leaves the stream at the next frame
    if (!is_known_tag(static_cast<int>(tag_))) throw ProtocolError(fmt::format("a message with unknown tag {}", tag_));
    auto [message, shapes] = decode_header(static_cast<Tag>(tag_), header_);
    incoming_ = std::move(message);
    for (const BufferShape& s : shapes) incoming_.buffers.push_back(HostBuffer::uninitialized(s.type, s.count));
    buffer_ = 0;
    stage_ = Stage::buffers;
  } else {
    ++buffer_;  // a buffer is full
  }
  while (buffer_ < incoming_.buffers.size() && incoming_.buffers[buffer_].bytes() == 0) ++buffer_;
  if (buffer_ < incoming_.buffers.size()) return;
  out.push_back(std::move(incoming_));
  incoming_ = Message{};
  stage_ = Stage::prefix;
}

bool StreamConnection::read_some(std::deque<Message>& out) {
  for (;;) {
    auto [at, missing] = target();
    if (missing == 0) {  // an empty header or buffer
      advance(out);
      continue;
    }
    const ssize_t r = ::recv(fd_, at, missing, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (r == 0) {
      error_ = "the peer closed the connection";
      return false;
    }
    if (r < 0) {
      error_ = std::strerror(errno);
      return false;
    }
    got_ += static_cast<std::size_t>(r);
    if (static_cast<std::size_t>(r) == missing) advance(out);
  }
}

}  // namespace wstune::daemon
