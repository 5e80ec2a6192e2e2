#pragma once
/// @file communicator.hpp
/// The abstract Communicator through which wstuned's master and workers
/// exchange typed messages (send, receive with a timeout, probe). The MPI
/// implementation is in mpi_communicator.hpp, the TCP one (workers that
/// connect to a listening master) in tcp_communicator.hpp; the tests' in-memory one in
/// daemon/tests/support/in_memory_communicator.hpp. After Pegasus MPI
/// Cluster's injected Communicator.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/protocol.hpp"

namespace wstune::daemon {

/// Matches any source rank in probe() and recv().
inline constexpr int kAnySource = -1;

/// A received message and its sender.
struct Received {
  int source = 0;      ///< sender's rank
  Message message;     ///< the message
  double recv_ms = 0;  ///< time spent moving the bytes in (ms), not waiting for them
};

/// Point-to-point typed messaging between ranks 0..size()−1.
class Communicator {
 public:
  virtual ~Communicator() = default;
  /// This process's rank.
  [[nodiscard]] virtual int rank() const = 0;
  /// Number of ranks.
  [[nodiscard]] virtual int size() const = 0;
  /// Queues `m` for rank `dest` and returns without waiting for the
  /// receiver (non-blocking). Throws ProtocolError for a bad rank.
  virtual void send(int dest, Message m) = 0;
  /// The sender and tag of the next message from `source` (or any), if one
  /// has arrived; never blocks.
  virtual std::optional<std::pair<int, Tag>> probe(int source = kAnySource) = 0;
  /// Receives the next message from `source` (or any source), waiting at most
  /// `timeout`; std::nullopt when nothing arrived in time. Throws
  /// ProtocolError for undecodable bytes.
  virtual std::optional<Received> recv(int source, std::chrono::milliseconds timeout) = 0;
  /// Waits up to `timeout` for queued sends to complete; false if some did not.
  virtual bool flush(std::chrono::milliseconds timeout) = 0;
  /// How `rank` is reached, for reports: "tcp ADDRESS:PORT" for a worker
  /// connected over TCP (tcp_communicator.hpp), "" for an MPI rank.
  [[nodiscard]] virtual std::string peer(int /*rank*/) const { return {}; }
  /// False once the link to `rank` is known to be gone (a TCP connection
  /// that ended); MPI ranks are always true (a dead one is found by timeouts).
  [[nodiscard]] virtual bool connected(int /*rank*/) const { return true; }
};

/// A Communicator that passes every call to another one (which must outlive
/// it); a subclass overrides what it changes, e.g. recv() to inject a fault
/// into what its rank receives.
class ForwardingCommunicator : public Communicator {
 public:
  explicit ForwardingCommunicator(Communicator& inner) : inner_(inner) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void send(int dest, Message m) override { inner_.send(dest, std::move(m)); }
  std::optional<std::pair<int, Tag>> probe(int source = kAnySource) override { return inner_.probe(source); }
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override {
    return inner_.recv(source, timeout);
  }
  bool flush(std::chrono::milliseconds timeout) override { return inner_.flush(timeout); }
  std::string peer(int rank) const override { return inner_.peer(rank); }
  bool connected(int rank) const override { return inner_.connected(rank); }

 private:
  Communicator& inner_;
};

}  // namespace wstune::daemon
