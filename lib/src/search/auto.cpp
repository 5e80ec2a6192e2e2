// "auto": the strategy picked by the size of the space, and the default
// evaluation budgets of `wstune tune`. See strategies.hpp and docs/tuning.md.
#include <algorithm>
#include <string>

#include "search/strategies.hpp"

namespace wstune {
namespace {

constexpr std::size_t kTiny = 16;     // at most this many: measure them all
constexpr std::size_t kLarge = 1000;  // from this many: the portfolio; fewer with parameters: the model-based search

class AutoSearcher final : public Searcher {
 public:
  explicit AutoSearcher(std::uint64_t seed) : seed_(seed) {}
  std::string_view name() const override { return name_; }
  bool rule_first() const override { return inner_ ? inner_->rule_first() : true; }

  void initialize(const SearchSpace& space, const TuneTarget& target) override {
    const std::string_view pick = auto_strategy(space);
    inner_ = make_searcher(pick, seed_);
    name_ = "auto:" + std::string(pick);
    inner_->initialize(space, target);
  }
  std::optional<std::size_t> next() override { return inner_ ? inner_->next() : std::nullopt; }
  void report(std::size_t entry, const Trial& trial) override {
    if (inner_) inner_->report(entry, trial);
  }
  // The chosen strategy's announcement (tune() builds ahead, wstuned's
  // groups measure at once).
  std::vector<std::size_t> upcoming(std::size_t n) const override {
    return inner_ ? inner_->upcoming(n) : std::vector<std::size_t>{};
  }

 private:
  std::uint64_t seed_;
  std::string name_ = "auto";
  std::unique_ptr<Searcher> inner_;
};

}  // namespace

std::string_view auto_strategy(const SearchSpace& space) {
  if (space.size() <= kTiny) return "exhaustive";
  if (space.parameters().empty() && space.size() < kLarge) return "guided";
  if (space.size() >= kLarge) return "portfolio";
  return "bayes";
}

std::unique_ptr<Searcher> make_auto_searcher(std::uint64_t seed) {
  return std::make_unique<AutoSearcher>(seed);
}

unsigned default_evaluations(std::string_view strategy, const SearchSpace& space) {
  const auto n = static_cast<unsigned>(space.size() + 1);  // the baseline counts
  if (strategy == "auto") return default_evaluations(auto_strategy(space), space);
  if (strategy == "guided") return std::max(8u, n / 5);
  if (strategy == "genetic" || strategy == "annealing" || strategy == "bayes" || strategy == "differential" ||
      strategy == "portfolio")
    return std::max(20u, n / 20);
  return 0;
}

}  // namespace wstune
