// Sequential model-based search with a tree-ensemble surrogate and expected
// improvement (Bayesian optimisation after SMAC, Hutter et al., LION 2011;
// Willemsen et al., PMBS 2021, for GPU kernels). See strategies.hpp.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>

#include "search/forest.hpp"
#include "search/search.hpp"
#include "search/space_searcher.hpp"
#include "search/strategies.hpp"

namespace wstune {
namespace {

using strategy::Forest;

constexpr std::size_t kTrees = 16;
constexpr std::size_t kMinSplit = 2;
constexpr std::size_t kPool = 4096;  // candidates scored per proposal in larger spaces
constexpr std::size_t kRandomEvery = 10;

// Expected improvement below `best` of a normal (mean, sd) (minimisation).
double expected_improvement(double best, double mean, double sd) {
  const double gain = best - mean;
  if (sd <= 1e-12) return std::max(gain, 0.0);
  const double z = gain / sd;
  const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
  return gain * cdf + sd * pdf;
}

class BayesSearcher final : public strategy::SpaceSearcher {
 public:
  explicit BayesSearcher(std::uint64_t seed) : SpaceSearcher(seed) {}
  std::string_view name() const override { return "bayes"; }

  void restart() override {
    initial_ = std::min(std::max<std::size_t>(5, enc_->features() + 1), space_->size() / 100 + 5);
    proposals_ = 0;
  }

  std::optional<std::size_t> next() override {
    if (mem_.exhausted()) return std::nullopt;
    ++proposals_;
    if (proposals_ == 1) return strategy::start_point(*space_, target_, *enc_, mem_, rng_);
    if (mem_.count() < initial_) {
      if (mem_.count() % 2)
        if (const auto c = next_shape_of_fastest_set()) return c;
      return prior_shaped(mem_.random_unmeasured(rng_));
    }
    if (mem_.ranked().size() < 2 || proposals_ % kRandomEvery == 0) return mem_.random_unmeasured(rng_);
    fit();
    const double best = mem_.cost(mem_.ranked().front());
    std::optional<std::size_t> pick;
    double pick_ei = -1;
    auto pool = proposals_ % 2 ? candidates() : local_candidates();
    if (pool.empty()) pool = candidates();
    for (const std::size_t c : pool) {
      const auto p = forest_.predict(enc_->row(c));
      if (const double ei = expected_improvement(best, p.mean, p.sd); ei > pick_ei) pick_ei = ei, pick = c;
    }
    return pick ? pick : mem_.random_unmeasured(rng_);
  }

 private:
  // Half the initial design: configuration `c`'s parameter set at the open
  // shape prior_order() ranks first (the device model's guess, as the guided
  // search starts), so the surrogate sees the parameters vary at shapes the
  // model expects to be good; `c` itself when its set has no open shape.
  std::optional<std::size_t> prior_shaped(std::optional<std::size_t> c) const {
    if (!c) return c;
    const auto shape = first_open_shape(space_->parameter_set(*c));
    return shape ? shape : c;
  }

  // The other half: the next open shape in the parameter set of the fastest
  // configuration so far (the start point's set at first), in prior_order(), so
  // the surrogate sees the local size vary in the set most likely to hold
  // the optimum, and the device model's later shapes get their turn when its
  // first one misses (8x32 on stencil5-pocl is 2.6x slower than NULL; 32x8,
  // three shapes later, is within 2 % of the optimum;
  // docs/results/strategies_small.md). None when that set has no open shape.
  std::optional<std::size_t> next_shape_of_fastest_set() const {
    const auto ranked = mem_.ranked();
    if (ranked.empty()) return std::nullopt;
    return first_open_shape(space_->parameter_set(ranked.front()));
  }

  // Parameter set `set` at its unmeasured shape prior_order() ranks first;
  // none when every shape of the set is measured (or it has none).
  std::optional<std::size_t> first_open_shape(std::size_t set) const {
    const auto [first, last] = space_->entries_of_set(set);
    std::vector<Extent> open;
    for (std::size_t i = first; i < last; ++i)
      if (space_->local(i) && !mem_.measured(i)) open.push_back(*space_->local(i));
    if (open.empty()) return std::nullopt;
    return space_->find(Configuration{space_->params_of_set(set), prior_order(open, target_).front()});
  }

  // The surrogate of ln(time) over every measured configuration; failures
  // count as twice the slowest correct time.
  void fit() {
    const auto& measured = mem_.measured_list();
    const auto ranked = mem_.ranked();
    const double worst = mem_.cost(ranked.back()) + std::log(2.0);
    x_.clear();
    y_.clear();
    for (const std::size_t i : measured) {
      const auto r = enc_->row(i);
      x_.insert(x_.end(), r.begin(), r.end());
      y_.push_back(std::isfinite(mem_.cost(i)) ? mem_.cost(i) : worst);
    }
    forest_.fit(x_, enc_->features(), y_, kTrees, kMinSplit, rng_);
  }

  // The open neighbours of the three fastest: every other proposal refines
  // around the best found (as SMAC's local search from its incumbents).
  std::vector<std::size_t> local_candidates() const {
    std::set<std::size_t> out;
    const auto ranked = mem_.ranked();
    for (std::size_t k = 0; k < std::min<std::size_t>(3, ranked.size()); ++k)
      for (const std::size_t j : enc_->neighbourhood(ranked[k]))
        if (!mem_.measured(j)) out.insert(j);
    return {out.begin(), out.end()};
  }

  // Every unmeasured configuration in a space with at most kPool open ones;
  // else kPool random ones and the open neighbours of the five fastest.
  std::vector<std::size_t> candidates() {
    std::vector<std::size_t> out;
    const std::size_t open = space_->size() - mem_.count();
    if (open <= kPool) {
      for (std::size_t i = 0; i < space_->size(); ++i)
        if (!mem_.measured(i)) out.push_back(i);
      return out;
    }
    std::set<std::size_t> chosen;
    const auto ranked = mem_.ranked();
    for (std::size_t k = 0; k < std::min<std::size_t>(5, ranked.size()); ++k)
      for (const std::size_t j : mem_.open_neighbours(*space_, ranked[k])) chosen.insert(j);
    while (chosen.size() < kPool)
      if (const auto r = mem_.random_unmeasured(rng_)) chosen.insert(*r);
    return {chosen.begin(), chosen.end()};
  }

  Forest forest_;
  std::vector<float> x_;
  std::vector<double> y_;
  std::size_t initial_ = 10, proposals_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_bayes_searcher(std::uint64_t seed) {
  return std::make_unique<BayesSearcher>(seed);
}

}  // namespace wstune
