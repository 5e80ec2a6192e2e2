#pragma once
/// @file tcp_communicator.hpp
/// wstuned's master and workers over TCP (issue 40, docs/cluster.md): the
/// master listens (`--listen HOST:PORT`, TcpHub) and takes workers that
/// connect at any time (`wstuned worker --connect HOST:PORT`, TcpClient),
/// beside the MPI ranks of its own launch. Each connection is a rank after
/// the launch's (the first connection is rank N of an N-rank launch); the
/// messages are the protocol's, framed over the stream (stream_connection.hpp).
/// Why not MPI: Debian 12's MPICH (ch4:ucx) has no MPI ports
/// (MPI_Open_port is unsupported by its ucx netmod) and ends the whole
/// launch when one rank dies; a TCP connection that breaks ends only itself.
/// A connection that closes or resets before its worker said bye is
/// reported as a Tag::bye from that rank whose body says
/// {"reason": "lost: ..."}: the master learns of it where it reads its
/// workers' answers and drops that worker only.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transport/communicator.hpp"
#include "transport/stream_connection.hpp"

namespace wstune::daemon {

/// A host and a TCP port ("HOST:PORT"; HOST a name or an IPv4 address).
struct Endpoint {
  std::string host;        ///< name or address ("0.0.0.0": every address, for --listen)
  std::uint16_t port = 0;  ///< 0 for --listen: any free port (printed)
};
/// Parses "HOST:PORT" given as `option`; throws UsageError naming the option
/// and the form.
Endpoint parse_endpoint(std::string_view text, std::string_view option);

/// The master's side: the ranks of `inner` (its MPI launch; none: rank 0
/// alone) and, after them, one rank per accepted connection.
class TcpHub final : public Communicator {
 public:
  /// Listens on `at` (SO_REUSEADDR); throws Error naming the address when it
  /// cannot. `inner` (may be null) must outlive the hub and have rank 0.
  TcpHub(const Endpoint& at, Communicator* inner);
  ~TcpHub() override;
  TcpHub(const TcpHub&) = delete;
  TcpHub& operator=(const TcpHub&) = delete;
  /// The port it listens on (the one chosen for port 0).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  int rank() const override { return 0; }
  /// The launch's ranks plus every connection accepted so far.
  int size() const override { return first_ + static_cast<int>(conns_.size()); }
  /// A connection's rank: queued, written as the socket takes it; a closed
  /// connection's messages are dropped. Throws ProtocolError for a bad rank.
  void send(int dest, Message m) override;
  std::optional<std::pair<int, Tag>> probe(int source) override;
  /// Waits for the next message; meanwhile accepts connections and moves
  /// every connection's bytes. A connection that ends without a bye yields
  /// a bye whose body says {"reason": "lost: ..."}.
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override;
  bool flush(std::chrono::milliseconds timeout) override;
  /// "tcp ADDRESS:PORT" of a connection's peer; "" for the launch's ranks.
  std::string peer(int rank) const override;
  bool connected(int rank) const override;

 private:
  struct Conn {
    std::unique_ptr<StreamConnection> stream;  // null once ended
    std::string peer;
    bool said_bye = false;
  };
  void poll_once(std::chrono::milliseconds wait);
  void accept_all();
  void read(int rank);
  void end(int rank, const std::string& why);
  std::optional<Received> take_ready(int source);
  Communicator* inner_;
  int first_ = 1;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::vector<Conn> conns_;  // rank first_ + i
  std::deque<Received> ready_;
};

/// A worker's side: one connection to the master (rank 0).
class TcpClient final : public Communicator {
 public:
  /// Connects to `master`, trying again every 0.5 s until `timeout` (the
  /// master may not listen yet); throws Error naming the address and the
  /// last failure.
  TcpClient(const Endpoint& master, std::chrono::milliseconds timeout);
  /// Unknown until the master's welcome names it (−1).
  int rank() const override { return -1; }
  /// The master and this worker.
  int size() const override { return 2; }
  /// Only to the master (rank 0); throws ProtocolError for another rank.
  void send(int dest, Message m) override;
  std::optional<std::pair<int, Tag>> probe(int source) override;
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override;
  bool flush(std::chrono::milliseconds timeout) override;
  /// False once the connection to the master ended.
  bool connected(int rank) const override;
  /// Why the connection ended ("" while it works).
  [[nodiscard]] std::string error() const { return stream_ ? stream_->error() : error_; }

 private:
  void poll_once(std::chrono::milliseconds wait);
  void end();
  std::unique_ptr<StreamConnection> stream_;
  std::string error_;
  std::deque<Message> ready_;
};

}  // namespace wstune::daemon
