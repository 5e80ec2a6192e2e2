#pragma once
/// @file communicator.hpp
/// The abstract Communicator through which wstuned's master and workers
/// exchange typed messages (send, receive with a timeout, probe), and an
/// in-memory implementation with one mailbox per rank so the protocol is
/// tested with threads and without MPI. The MPI implementation is in
/// mpi_communicator.hpp. After Pegasus MPI Cluster's injected Communicator.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
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

 private:
  Communicator& inner_;
};

/// Shared mailboxes of an in-memory "world" of `size` ranks.
class InMemoryWorld {
 public:
  /// A world of `size` ranks.
  explicit InMemoryWorld(int size);
  /// The communicator for `rank` (owned by the world, valid while it lives).
  Communicator& at(int rank);
  /// Number of ranks.
  [[nodiscard]] int size() const noexcept { return static_cast<int>(boxes_.size()); }
  /// Messages sent so far from any rank, by tag (for tests).
  [[nodiscard]] std::size_t sent_count(Tag tag) const;

 private:
  friend class InMemoryCommunicator;
  struct Box {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::pair<int, Message>> queue;
  };
  std::vector<std::unique_ptr<Box>> boxes_;
  std::vector<std::unique_ptr<Communicator>> comms_;
  mutable std::mutex stats_mutex_;
  std::vector<std::size_t> sent_by_tag_;
};

}  // namespace wstune::daemon
