#pragma once
/// @file router.hpp
/// Several tune searches at once on one master (device groups of different
/// fingerprints, shared_search.hpp): each search runs in its own thread and
/// talks to its workers through a Channel; only the thread that owns the
/// real Communicator calls it (Router::pump), so MPI needs no thread support
/// beyond MPI_THREAD_FUNNELED.

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/communicator.hpp"

namespace wstune::daemon {

class Router;

/// One search's view of the workers: send() queues for the router,
/// recv() waits for what the router delivered from the channel's ranks.
class Channel final : public Communicator {
 public:
  Channel(Router& router, int rank, int size) : router_(router), rank_(rank), size_(size) {}
  /// Called by the router: a message from one of this channel's ranks.
  void deliver(Received r);
  /// The first delivered message from `source` (or any), waiting up to `timeout`.
  std::optional<Received> recv(int source, std::chrono::milliseconds timeout) override;
  /// Queued for the router's next pump.
  void send(int dest, Message m) override;
  /// Sends go out with the router's next pump: always true.
  bool flush(std::chrono::milliseconds timeout) override;
  /// Nothing is probed through a channel: always std::nullopt.
  std::optional<std::pair<int, Tag>> probe(int source) override;
  int size() const override { return size_; }
  int rank() const override { return rank_; }

 private:
  Router& router_;
  int rank_ = 0;
  int size_ = 0;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Received> inbox_;
};

/// Routes between the real communicator and the channels.
class Router {
 public:
  /// `comm` must outlive the router.
  explicit Router(Communicator& comm) : comm_(comm) {}
  /// A channel for `ranks` (disjoint from the other channels' ranks); it
  /// lives as long as the router.
  Channel& channel(const std::vector<int>& ranks);
  /// Sends what the channels queued, then receives for up to `slice` and
  /// delivers what came to the channel of its source rank (messages from
  /// other ranks are dropped). Call it from the communicator's thread only.
  void pump(std::chrono::milliseconds slice);
  /// Queues a message for pump() (Channel::send).
  void queue(int dest, Message m);
  /// Routes `rank` (a worker that joined during the searches) to `channel`
  /// from now on; any thread.
  void adopt(Channel& channel, int rank);

 private:
  Communicator& comm_;
  std::mutex mutex_;
  std::vector<std::pair<int, Message>> outbox_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::map<int, Channel*> by_rank_;
};

}  // namespace wstune::daemon
