// Several searches on one master, one communicator (router.hpp).
#include "master/router.hpp"

#include <algorithm>

namespace wstune::daemon {

void Channel::send(int dest, Message m) {
  router_.queue(dest, std::move(m));
}

std::optional<std::pair<int, Tag>> Channel::probe(int) {
  return std::nullopt;
}

std::optional<Received> Channel::recv(int source, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  std::optional<Received> out;
  arrived_.wait_for(lock, timeout, [&] {
    auto it = std::find_if(inbox_.begin(), inbox_.end(),
                           [&](const Received& r) { return source == kAnySource || r.source == source; });
    if (it == inbox_.end()) return false;
    out = std::move(*it);
    inbox_.erase(it);
    return true;
  });
  return out;
}

bool Channel::flush(std::chrono::milliseconds) {
  return true;
}

void Channel::deliver(Received r) {
  {
    const std::lock_guard lock(mutex_);
    inbox_.push_back(std::move(r));
  }
  arrived_.notify_one();
}

Channel& Router::channel(const std::vector<int>& ranks) {
  channels_.push_back(std::make_unique<Channel>(*this, comm_.rank(), comm_.size()));
  for (int r : ranks) by_rank_[r] = channels_.back().get();
  return *channels_.back();
}

void Router::adopt(Channel& channel, int rank) {
  const std::lock_guard lock(mutex_);
  by_rank_[rank] = &channel;
}

void Router::queue(int dest, Message m) {
  const std::lock_guard lock(mutex_);
  outbox_.emplace_back(dest, std::move(m));
}

void Router::pump(std::chrono::milliseconds slice) {
  std::vector<std::pair<int, Message>> out;
  {
    const std::lock_guard lock(mutex_);
    out.swap(outbox_);
  }
  for (auto& [dest, m] : out) comm_.send(dest, std::move(m));
  auto got = comm_.recv(kAnySource, slice);
  if (!got) return;
  Channel* to = nullptr;
  {
    const std::lock_guard lock(mutex_);
    auto it = by_rank_.find(got->source);
    if (it != by_rank_.end()) to = it->second;
  }
  if (to) to->deliver(std::move(*got));
}

}  // namespace wstune::daemon
