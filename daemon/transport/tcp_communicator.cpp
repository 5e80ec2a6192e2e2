// wstuned's master and workers over TCP (tcp_communicator.hpp).
#include "transport/tcp_communicator.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace wstune::daemon {

namespace {
using clock_type = std::chrono::steady_clock;

std::chrono::milliseconds left_until(clock_type::time_point deadline) {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()));
}

// The IPv4 address of `host` ("" or "*": any); throws Error.
sockaddr_in resolve(const Endpoint& at) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(at.port);
  if (at.host.empty() || at.host == "*") {
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    return a;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(at.host.c_str(), nullptr, &hints, &found); rc != 0 || !found)
    throw Error(fmt::format("cannot resolve host '{}': {}", at.host, ::gai_strerror(rc)));
  a.sin_addr = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;  // NOLINT: getaddrinfo's API
  ::freeaddrinfo(found);
  return a;
}

std::string address_text(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return fmt::format("{}:{}", text, ntohs(a.sin_port));
}

void no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}
}  // namespace

Endpoint parse_endpoint(std::string_view text, std::string_view option) {
  const auto colon = text.rfind(':');
  Endpoint e;
  unsigned long port = 70000;
  if (colon != std::string_view::npos && colon + 1 < text.size()) {
    const std::string digits(text.substr(colon + 1));
    if (digits.find_first_not_of("0123456789") == std::string::npos && digits.size() <= 5) port = std::stoul(digits);
  }
  if (colon == std::string_view::npos || colon == 0 || port > 65535) {
    throw UsageError(
        fmt::format("{} '{}': write HOST:PORT, e.g. {} 10.0.0.1:7470 (port 0..65535)", option, text, option));
  }
  e.host = std::string(text.substr(0, colon));
  e.port = static_cast<std::uint16_t>(port);
  return e;
}

// ---- TcpHub ----

TcpHub::TcpHub(const Endpoint& at, Communicator* inner) : inner_(inner), first_(inner ? inner->size() : 1) {
  const sockaddr_in a = resolve(at);
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw Error(fmt::format("socket(): {}", std::strerror(errno)));
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||  // NOLINT: sockets API
      ::listen(listen_fd_, 64) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    throw Error(fmt::format("cannot listen on {}:{}: {}", at.host, at.port, std::strerror(err)));
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);  // NOLINT: sockets API
  port_ = ntohs(bound.sin_port);
}

TcpHub::~TcpHub() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void TcpHub::send(int dest, Message m) {
  if (dest < first_) {
    if (!inner_ || dest < 1) throw ProtocolError(fmt::format("send to rank {}: not a worker", dest));
    return inner_->send(dest, std::move(m));
  }
  if (dest >= size()) throw ProtocolError(fmt::format("send to rank {}: the hub has ranks 0..{}", dest, size() - 1));
  Conn& c = conns_[static_cast<std::size_t>(dest - first_)];
  if (!c.stream) return;  // ended: the master learnt it from the bye it got
  c.stream->queue(std::move(m));
  if (!c.stream->write_some()) end(dest, c.stream->error());
}

std::optional<Received> TcpHub::take_ready(int source) {
  auto it = std::find_if(ready_.begin(), ready_.end(),
                         [&](const Received& r) { return source == kAnySource || r.source == source; });
  if (it == ready_.end()) return std::nullopt;
  Received r = std::move(*it);
  ready_.erase(it);
  return r;
}

std::optional<std::pair<int, Tag>> TcpHub::probe(int source) {
  if (inner_ && source < first_)
    if (auto p = inner_->probe(source)) return p;
  poll_once(std::chrono::milliseconds(0));
  for (const auto& r : ready_)
    if (source == kAnySource || r.source == source) return std::pair{r.source, r.message.tag};
  return std::nullopt;
}

std::optional<Received> TcpHub::recv(int source, std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  for (;;) {
    if (auto r = take_ready(source)) return r;
    if (inner_ && first_ > 1 && source < first_)
      if (auto r = inner_->recv(source, std::chrono::milliseconds(0))) return r;
    const auto left = left_until(deadline);
    // With MPI ranks beside the connections, poll in short slices so both are served.
    poll_once(inner_ && first_ > 1 ? std::min(left, std::chrono::milliseconds(1)) : left);
    if (auto r = take_ready(source)) return r;
    if (clock_type::now() >= deadline) return std::nullopt;
  }
}

bool TcpHub::flush(std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  bool ok = inner_ ? inner_->flush(timeout) : true;
  for (;;) {
    const bool pending =
        std::any_of(conns_.begin(), conns_.end(), [](const Conn& c) { return c.stream && c.stream->wants_write(); });
    if (!pending) return ok;
    if (clock_type::now() >= deadline) return false;
    poll_once(std::min(left_until(deadline), std::chrono::milliseconds(10)));
  }
}

std::string TcpHub::peer(int rank) const {
  if (rank < first_ || rank >= size()) return {};
  return "tcp " + conns_[static_cast<std::size_t>(rank - first_)].peer;
}

bool TcpHub::connected(int rank) const {
  if (rank < first_) return inner_ ? inner_->connected(rank) : rank == 0;
  return rank < size() && conns_[static_cast<std::size_t>(rank - first_)].stream != nullptr;
}

// One poll() over the listening socket and every open connection, waiting at
// most `wait`: accepts, reads, writes.
void TcpHub::poll_once(std::chrono::milliseconds wait) {
  std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
  std::vector<int> ranks{-1};
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    const auto& s = conns_[i].stream;
    if (!s) continue;
    fds.push_back({s->fd(), static_cast<short>(POLLIN | (s->wants_write() ? POLLOUT : 0)), 0});
    ranks.push_back(first_ + static_cast<int>(i));
  }
  const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(wait.count(), 1'000'000)));
  if (n <= 0) return;
  if (fds[0].revents & POLLIN) accept_all();
  for (std::size_t k = 1; k < fds.size(); ++k) {
    const int rank = ranks[k];
    auto& s = conns_[static_cast<std::size_t>(rank - first_)].stream;
    if (s && (fds[k].revents & POLLOUT) && !s->write_some()) end(rank, s->error());
    if (s && (fds[k].revents & (POLLIN | POLLHUP | POLLERR))) read(rank);
  }
}

void TcpHub::accept_all() {
  for (;;) {
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC);  // NOLINT
    if (fd < 0) return;  // EAGAIN: no more waiting
    no_delay(fd);
    conns_.push_back(Conn{std::make_unique<StreamConnection>(fd), address_text(from), false});
  }
}

// Reads what rank's connection holds: its complete messages become ready;
// an end or an unreadable frame ends the connection.
void TcpHub::read(int rank) {
  Conn& c = conns_[static_cast<std::size_t>(rank - first_)];
  std::deque<Message> got;
  bool open = true;
  std::string why;
  try {
    open = c.stream->read_some(got);
    if (!open) why = c.stream->error();
  } catch (const ProtocolError& e) {
    open = false;
    why = fmt::format("sent a frame that cannot be read: {}", e.what());
  }
  for (auto& m : got) {
    if (m.tag == Tag::bye) c.said_bye = true;
    ready_.push_back(Received{rank, std::move(m), 0});
  }
  if (!open) end(rank, why);
}

// Closes rank's connection; unless it said bye, its end is told as a bye
// with the reason.
void TcpHub::end(int rank, const std::string& why) {
  Conn& c = conns_[static_cast<std::size_t>(rank - first_)];
  c.stream.reset();
  if (c.said_bye) return;
  c.said_bye = true;
  ready_.push_back(Received{rank, Message{Tag::bye, {{"reason", "lost: " + why}}, {}}, 0});
}

// ---- TcpClient ----

TcpClient::TcpClient(const Endpoint& master, std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  std::string last;
  for (;;) {
    try {
      const sockaddr_in a = resolve(master);
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) throw Error(fmt::format("socket(): {}", std::strerror(errno)));
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) {  // NOLINT: sockets API
        no_delay(fd);
        stream_ = std::make_unique<StreamConnection>(fd);
        return;
      }
      last = std::strerror(errno);
      ::close(fd);
    } catch (const Error& e) {
      last = e.what();
    }
    if (clock_type::now() >= deadline) break;
    std::this_thread::sleep_for(std::min(left_until(deadline), std::chrono::milliseconds(500)));
  }
  throw Error(fmt::format("cannot connect to the master at {}:{} within {} s: {}", master.host, master.port,
                          timeout.count() / 1000.0, last));
}

void TcpClient::send(int dest, Message m) {
  if (dest != 0) throw ProtocolError(fmt::format("send to rank {}: a connected worker talks to the master only", dest));
  if (!stream_) return;
  stream_->queue(std::move(m));
  if (!stream_->write_some()) end();
}

std::optional<std::pair<int, Tag>> TcpClient::probe(int) {
  poll_once(std::chrono::milliseconds(0));
  if (ready_.empty()) return std::nullopt;
  return std::pair{0, ready_.front().tag};
}

std::optional<Received> TcpClient::recv(int, std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  while (ready_.empty() && stream_) {
    poll_once(left_until(deadline));
    if (clock_type::now() >= deadline) break;
  }
  if (ready_.empty()) {
    if (!stream_) std::this_thread::sleep_for(std::min(timeout, left_until(deadline)));
    return std::nullopt;
  }
  Received r{0, std::move(ready_.front()), 0};
  ready_.pop_front();
  return r;
}

bool TcpClient::flush(std::chrono::milliseconds timeout) {
  const auto deadline = clock_type::now() + timeout;
  while (stream_ && stream_->wants_write()) {
    if (clock_type::now() >= deadline) return false;
    poll_once(std::min(left_until(deadline), std::chrono::milliseconds(10)));
  }
  return stream_ != nullptr;
}

bool TcpClient::connected(int) const {
  return stream_ != nullptr;
}

void TcpClient::poll_once(std::chrono::milliseconds wait) {
  if (!stream_) return;
  pollfd p{stream_->fd(), static_cast<short>(POLLIN | (stream_->wants_write() ? POLLOUT : 0)), 0};
  if (::poll(&p, 1, static_cast<int>(std::min<long long>(wait.count(), 1'000'000))) <= 0) return;
  if ((p.revents & POLLOUT) && !stream_->write_some()) return end();
  if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
    bool open = true;
    try {
      open = stream_->read_some(ready_);
    } catch (const ProtocolError& e) {
      error_ = fmt::format("the master sent a frame that cannot be read: {}", e.what());
      stream_.reset();
      return;
    }
    if (!open) end();
  }
}

void TcpClient::end() {
  error_ = stream_ ? stream_->error() : error_;
  stream_.reset();
}

}  // namespace wstune::daemon
