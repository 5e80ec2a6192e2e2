// The in-memory Communicator of the daemon tests (in_memory_communicator.hpp).
#include "tests/support/in_memory_communicator.hpp"

#include <fmt/format.h>

namespace wstune::daemon {

class InMemoryCommunicator final : public Communicator {
 public:
  InMemoryCommunicator(InMemoryWorld& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }

  void send(int dest, Message m) override {
    if (dest < 0 || dest >= world_.size()) {
      throw ProtocolError(fmt::format("send to rank {}: the world has ranks 0..{}", dest, world_.size() - 1));
    }
    {
      std::lock_guard lock(world_.stats_mutex_);
      ++world_.sent_by_tag_.at(static_cast<std::size_t>(m.tag));
    }
    // Round-trip through the wire format so the tests exercise encode/decode.
    const Tag tag = m.tag;
    Message copy = decode(tag, encode(m));
    auto& box = *world_.boxes_[static_cast<std::size_t>(dest)];
    {
      std::lock_guard lock(box.mutex);
      box.queue.emplace_back(rank_, std::move(copy));
    }
    box.cv.notify_all();
  }

  std::optional<std::pair<int, Tag>> probe(int source) override {
    auto& box = mine();
    std::lock_guard lock(box.mutex);
    for (const auto& [from, msg] : box.queue)
      if (source == kAnySource || from == source) return std::pair{from, msg.tag};
    return std::nullopt;
  }

  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override {
    auto& box = mine();
    std::unique_lock lock(box.mutex);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      for (auto it = box.queue.begin(); it != box.queue.end(); ++it) {
        if (source == kAnySource || it->first == source) {
          Received r{it->first, std::move(it->second), 0};
          box.queue.erase(it);
          return r;
        }
      }
      if (box.cv.wait_until(lock, deadline) == std::cv_status::timeout) {
        // One last look after the deadline.
        for (auto it = box.queue.begin(); it != box.queue.end(); ++it) {
          if (source == kAnySource || it->first == source) {
            Received r{it->first, std::move(it->second), 0};
            box.queue.erase(it);
            return r;
          }
        }
        return std::nullopt;
      }
    }
  }

  bool flush(std::chrono::milliseconds) override { return true; }

 private:
  InMemoryWorld::Box& mine() { return *world_.boxes_[static_cast<std::size_t>(rank_)]; }
  InMemoryWorld& world_;
  int rank_;
};

InMemoryWorld::InMemoryWorld(int size) : sent_by_tag_(static_cast<std::size_t>(Tag::trial_result) + 1, 0) {
  if (size < 1) throw ProtocolError(fmt::format("an in-memory world needs at least 1 rank, not {}", size));
  for (int r = 0; r < size; ++r) boxes_.push_back(std::make_unique<Box>());
  for (int r = 0; r < size; ++r) comms_.push_back(std::make_unique<InMemoryCommunicator>(*this, r));
}

Communicator& InMemoryWorld::at(int rank) {
  return *comms_.at(static_cast<std::size_t>(rank));
}

std::size_t InMemoryWorld::sent_count(Tag tag) const {
  std::lock_guard lock(stats_mutex_);
  return sent_by_tag_.at(static_cast<std::size_t>(tag));
}

}  // namespace wstune::daemon
