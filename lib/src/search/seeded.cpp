// Warm starts: a searcher whose first proposals are seeds (search.hpp, make_seeded_searcher).
#include <algorithm>
#include <set>

#include "search/search.hpp"

namespace wstune {

namespace {

class SeededSearcher final : public Searcher {
 public:
  SeededSearcher(std::unique_ptr<Searcher> inner, std::vector<Configuration> seeds)
      : inner_(std::move(inner)), seeds_(std::move(seeds)) {}
  [[nodiscard]] std::string_view name() const override { return inner_->name(); }
  void initialize(const SearchSpace& space, const TuneTarget& target) override {
    inner_->initialize(space, target);
    queue_.clear();
    std::set<std::size_t> seen;
    for (const Configuration& c : seeds_) {
      auto i = space.find(c);
      if (!i && !space.parameters().empty()) {  // its local size is not in this space: its parameter set's first shape
        if (auto s = space.find_set(c.params)) i = space.entries_of_set(*s).first;
      }
      if (i && *i < space.size() && seen.insert(*i).second) queue_.push_back(*i);
    }
    placed_ = queue_.size();
  }
  [[nodiscard]] bool rule_first() const override { return inner_->rule_first(); }
  std::optional<std::size_t> next() override {
    while (!queue_.empty()) {
      const std::size_t i = queue_.front();
      queue_.erase(queue_.begin());
      if (!reported_.count(i)) return i;
    }
    return inner_->next();
  }
  void report(std::size_t entry, const Trial& trial) override {
    reported_.insert(entry);
    inner_->report(entry, trial);
  }
  [[nodiscard]] std::vector<std::size_t> upcoming(std::size_t n) const override {
    std::vector<std::size_t> out;
    for (std::size_t i : queue_)
      if (out.size() < n && !reported_.count(i)) out.push_back(i);
    if (out.size() < n)
      for (std::size_t i : inner_->upcoming(n - out.size())) out.push_back(i);
    return out;
  }
  [[nodiscard]] std::size_t placed() const noexcept { return placed_; }

 private:
  std::unique_ptr<Searcher> inner_;
  std::vector<Configuration> seeds_;
  std::vector<std::size_t> queue_;  // seeds' indices not yet proposed
  std::set<std::size_t> reported_;
  std::size_t placed_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_seeded_searcher(std::unique_ptr<Searcher> inner, std::vector<Configuration> seeds) {
  if (seeds.empty()) return inner;
  return std::make_unique<SeededSearcher>(std::move(inner), std::move(seeds));
}

}  // namespace wstune
