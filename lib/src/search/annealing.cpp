// Simulated annealing over SearchSpace::neighbours() (Kirkpatrick, Gelatt
// and Vecchi, Science 220, 1983; among the strongest strategies on GPU
// kernel spaces in Schoonhoven et al., IEEE TEVC 2022). See strategies.hpp.
#include <algorithm>
#include <cmath>

#include "search/space_searcher.hpp"
#include "search/strategies.hpp"

namespace wstune {
namespace {

class AnnealingSearcher final : public strategy::SpaceSearcher {
 public:
  explicit AnnealingSearcher(std::uint64_t seed) : SpaceSearcher(seed) {}
  std::string_view name() const override { return "annealing"; }

  void restart() override {
    current_.reset();
    temperature_ = kStart;
    polish_left_ = kPolish;
    scouts_left_ = kScouts + 1;  // the last step hands the fastest to the descent
  }

  std::optional<std::size_t> next() override {
    if (mem_.exhausted()) return std::nullopt;
    temperature_ = std::max(kFloor, temperature_ * kCooling);
    if (const auto scout = next_scout()) return scout;
    if (current_)
      if (const auto open = mem_.open_neighbours(*space_, *current_); !open.empty())
        return enc_->pick_by_gene(*current_, open, rng_);
    // Stuck: restart next to the best measured configuration, else anywhere.
    const auto ranked = mem_.ranked();
    for (std::size_t k = 0; k < std::min<std::size_t>(3, ranked.size()); ++k) {
      if (const auto open = mem_.open_neighbours(*space_, ranked[k]); !open.empty()) {
        current_ = ranked[k];
        return enc_->pick_by_gene(ranked[k], open, rng_);
      }
    }
    // Every near neighbour is measured: up to kPolish wider moves (one
    // parameter to any value, or every parameter one value index) around the
    // fastest, then a new descent from a random configuration (another basin).
    if (polish_left_ == 0) {
      polish_left_ = kPolish;
      current_.reset();
      if (const auto r = mem_.random_unmeasured(rng_)) return r;
    }
    --polish_left_;
    for (std::size_t k = 0; k < std::min<std::size_t>(3, ranked.size()); ++k) {
      std::vector<std::size_t> open;
      for (const std::size_t j : enc_->neighbourhood(ranked[k]))
        if (!mem_.measured(j)) open.push_back(j);
      if (!open.empty()) {
        current_ = ranked[k];
        return strategy::pick(open, rng_);
      }
    }
    current_.reset();
    if (mem_.count() == 0) return strategy::start_point(*space_, target_, *enc_, mem_, rng_);
    return mem_.random_unmeasured(rng_);
  }

  void report(std::size_t entry, const Trial& trial) override {
    SpaceSearcher::report(entry, trial);
    const double c = mem_.cost(entry);
    if (!std::isfinite(c)) return;
    if (!current_ || !std::isfinite(mem_.cost(*current_))) {
      current_ = entry;
      return;
    }
    const double delta = c - mem_.cost(*current_);
    if (delta <= 0 || std::uniform_real_distribution<double>(0, 1)(rng_) < std::exp(-delta / temperature_))
      current_ = entry;
  }

 private:
  // After the start point, kScouts random configurations; the descent then
  // starts from the fastest of them all (a start point in a poor region, as
  // a baseline can be, no longer costs a small budget its first descent).
  std::optional<std::size_t> next_scout() {
    if (scouts_left_ == 0 || mem_.count() == 0) return std::nullopt;  // done, or the start point first
    if (scouts_left_ > 1) {
      --scouts_left_;
      if (const auto r = mem_.random_unmeasured(rng_)) return r;
    }
    scouts_left_ = 0;
    if (const auto ranked = mem_.ranked(); !ranked.empty()) current_ = ranked.front();
    return std::nullopt;
  }

  static constexpr double kStart = 0.5, kCooling = 0.97, kFloor = 1e-3;
  static constexpr std::size_t kPolish = 32;  // wider moves per descent before a random restart
  static constexpr std::size_t kScouts = 4;   // random configurations before the first descent
  std::optional<std::size_t> current_;
  double temperature_ = kStart;
  std::size_t polish_left_ = 0;
  std::size_t scouts_left_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_annealing_searcher(std::uint64_t seed) {
  return std::make_unique<AnnealingSearcher>(seed);
}

}  // namespace wstune
