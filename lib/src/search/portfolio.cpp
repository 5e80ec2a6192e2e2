// Annealing with differential evolution taking over while it stalls: the
// strategy "auto" picks from 1,000 configurations. See strategies.hpp.
#include <limits>

#include "search/strategies.hpp"

namespace wstune {
namespace {

class PortfolioSearcher final : public Searcher {
 public:
  explicit PortfolioSearcher(std::uint64_t seed)
      : annealing_(make_annealing_searcher(seed)),
        evolution_(make_differential_searcher(seed ^ 0x9e3779b97f4a7c15ull, kPerGene)) {}
  std::string_view name() const override { return "portfolio"; }
  bool rule_first() const override { return false; }

  void initialize(const SearchSpace& space, const TuneTarget& target) override {
    annealing_->initialize(space, target);
    evolution_->initialize(space, target);
    size_ = space.size();
    proposals_ = 0;
    stalled_ = 0;
    best_ms_ = std::numeric_limits<double>::infinity();
  }

  std::optional<std::size_t> next() override {
    ++proposals_;
    if (evolving(proposals_)) return evolution_->next();
    ++stalled_;
    return annealing_->next();
  }

  // What the searcher in charge of the next proposal announces: while the
  // evolution proposes, the rest of its generation (until a trial improves
  // the fastest time); annealing announces nothing.
  std::vector<std::size_t> upcoming(std::size_t n) const override {
    return evolving(proposals_ + 1) ? evolution_->upcoming(n) : annealing_->upcoming(n);
  }

  // Both searchers hear of every trial: each skips what the other measured,
  // and the differential evolution's donors come from its own population.
  void report(std::size_t entry, const Trial& trial) override {
    if (trial.ok() && trial.kernel.size() && trial.median_ms() < best_ms_) {
      best_ms_ = trial.median_ms();
      stalled_ = 0;
    }
    annealing_->report(entry, trial);
    evolution_->report(entry, trial);
  }

 private:
  // Proposal `k` (from 1) goes to the evolution: past 1 % of the space, and
  // annealing has stalled.
  bool evolving(std::size_t k) const { return k * 100 > size_ && stalled_ >= kStall; }

  static constexpr std::size_t kStall = 60;   // annealing proposals without a new best before evolution takes over
  static constexpr std::size_t kPerGene = 4;  // evolution's population per gene
  std::unique_ptr<Searcher> annealing_, evolution_;
  std::size_t size_ = 0, proposals_ = 0, stalled_ = 0;
  double best_ms_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<Searcher> make_portfolio_searcher(std::uint64_t seed) {
  return std::make_unique<PortfolioSearcher>(seed);
}

}  // namespace wstune
