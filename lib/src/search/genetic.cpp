// A steady-state genetic algorithm over a SearchSpace whose children are
// repaired to the nearest unmeasured configuration (constraint-aware, after
// the genetic algorithm that Schoonhoven et al., IEEE TEVC 2022, found among
// the strongest on GPU kernel spaces). See strategies.hpp.
#include <algorithm>

#include "search/space_searcher.hpp"
#include "search/strategies.hpp"

namespace wstune {
namespace {

class GeneticSearcher final : public strategy::SpaceSearcher {
 public:
  GeneticSearcher(std::uint64_t seed, std::size_t population) : SpaceSearcher(seed), requested_(population) {}
  std::string_view name() const override { return "genetic"; }

  void restart() override {
    population_ = requested_ ? requested_ : std::clamp<std::size_t>(space_->size() / 50, 8, 24);
    proposals_ = 0;
  }

  std::optional<std::size_t> next() override {
    if (mem_.exhausted()) return std::nullopt;
    if (++proposals_ == 1) return strategy::start_point(*space_, target_, *enc_, mem_, rng_);
    const auto ranked = mem_.ranked();
    if (ranked.size() < std::min<std::size_t>(population_, 2) || mem_.count() < population_)
      return mem_.random_unmeasured(rng_);
    if (proposals_ % 8 == 0) {  // exploit: a step from the best
      if (const auto open = mem_.open_neighbours(*space_, ranked.front()); !open.empty())
        return strategy::pick(open, rng_);
    }
    const std::size_t pool = std::min(population_, ranked.size());
    const std::vector<float> child = mutate(crossover(ranked[tournament(pool)], ranked[tournament(pool)]));
    return enc_->nearest(child, mem_.taken(), rng_);
  }

 private:
  // Binary tournament among the `pool` fastest: the better rank of two draws.
  std::size_t tournament(std::size_t pool) {
    std::uniform_int_distribution<std::size_t> any(0, pool - 1);
    return std::min(any(rng_), any(rng_));
  }

  // Uniform crossover: each gene from either parent.
  std::vector<float> crossover(std::size_t a, std::size_t b) {
    const auto ra = enc_->row(a), rb = enc_->row(b);
    std::vector<float> child(ra.begin(), ra.end());
    std::bernoulli_distribution coin(0.5);
    for (std::size_t g = 0; g < enc_->genes(); ++g) {
      if (!coin(rng_)) continue;
      const auto [first, last] = enc_->gene(g);
      std::copy(rb.begin() + static_cast<std::ptrdiff_t>(first), rb.begin() + static_cast<std::ptrdiff_t>(last),
                child.begin() + static_cast<std::ptrdiff_t>(first));
    }
    return child;
  }

  // Each gene with probability 1/genes: a parameter moves one value index (two in three) or takes any
  // value; the local size moves one power of two in x, y or z.
  std::vector<float> mutate(std::vector<float> child) {
    const std::size_t genes = enc_->genes();
    std::bernoulli_distribution hit(1.0 / static_cast<double>(genes));
    for (std::size_t g = 0; g < genes; ++g) {
      if (!hit(rng_)) continue;
      const auto [first, last] = enc_->gene(g);
      if (last - first == 1) {
        const auto n = static_cast<int>(enc_->values(g));
        if (std::uniform_int_distribution<int>(0, 2)(rng_) < 2)
          child[first] = static_cast<float>(std::clamp(static_cast<int>(child[first]) + (coin() ? 1 : -1), 0, n - 1));
        else
          child[first] = static_cast<float>(std::uniform_int_distribution<int>(0, n - 1)(rng_));
      } else {
        const std::size_t d = first + std::uniform_int_distribution<std::size_t>(0, 2)(rng_);
        const float step = coin() ? 1.f : -1.f;
        child[d] += step;
        child[last - 1] += step;  // the work-items follow
      }
    }
    return child;
  }

  bool coin() { return std::bernoulli_distribution(0.5)(rng_); }

  std::size_t requested_, population_ = 0;
  std::size_t proposals_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_genetic_searcher(std::uint64_t seed, std::size_t population) {
  return std::make_unique<GeneticSearcher>(seed, population);
}

}  // namespace wstune
