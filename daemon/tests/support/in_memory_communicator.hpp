#pragma once
/// @file in_memory_communicator.hpp
/// A test double of wstuned's Communicator (transport/communicator.hpp): an
/// in-memory "world" with one mailbox per rank, so the protocol, the master
/// and the workers are tested with threads and without MPI. Every message is
/// encoded and decoded on its way (the wire format is exercised too).

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "transport/communicator.hpp"

namespace wstune::daemon {

/// Shared mailboxes of an in-memory "world" of `size` ranks.
class InMemoryWorld {
 public:
  /// A world of `size` ranks (at least 1; throws ProtocolError otherwise).
  explicit InMemoryWorld(int size);
  /// The communicator for `rank` (owned by the world, valid while it lives).
  /// Its send() throws ProtocolError for a rank outside the world.
  Communicator& at(int rank);
  /// Number of ranks.
  [[nodiscard]] int size() const noexcept { return static_cast<int>(boxes_.size()); }
  /// Messages sent so far from any rank, by tag.
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
