// Differential evolution over the feature rows of a SearchSpace (Storn and
// Price, J. Global Optimization 11, 1997; DE/best/1/bin), each trial vector
// repaired to the nearest configuration of the space. See strategies.hpp.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/space_searcher.hpp"
#include "search/strategies.hpp"

namespace wstune {
namespace {

class DifferentialSearcher final : public strategy::SpaceSearcher {
 public:
  DifferentialSearcher(std::uint64_t seed, std::size_t per_gene)
      : SpaceSearcher(seed), per_gene_(std::max<std::size_t>(per_gene, 1)) {}
  std::string_view name() const override { return "differential"; }

  void restart() override {
    const std::size_t genes = std::max<std::size_t>(enc_->genes(), 1);
    population_ = std::clamp<std::size_t>(per_gene_ * genes, 8, std::max<std::size_t>(8, space_->size() / 20));
    members_.clear();
    trials_.clear();
    next_trial_ = 0;
    stale_ = 0;
  }

  std::optional<std::size_t> next() override {
    if (mem_.exhausted()) return std::nullopt;
    for (std::size_t round = 0; round <= kStale + 1; ++round) {  // by then a new sample
      // A trial already measured (by this search, or meanwhile by another
      // searcher of a portfolio) is not proposed again: its time is known.
      while (next_trial_ < trials_.size() && mem_.measured(trials_[next_trial_])) ++next_trial_;
      if (next_trial_ < trials_.size()) return trials_[next_trial_++];
      start_generation();
    }
    return mem_.random_unmeasured(rng_);
  }

  // The rest of this generation's trials, in the order next() proposes
  // them (the next generation needs their reports).
  std::vector<std::size_t> upcoming(std::size_t n) const override {
    std::vector<std::size_t> out;
    for (std::size_t i = next_trial_; i < trials_.size() && out.size() < n; ++i)
      if (!mem_.measured(trials_[i])) out.push_back(trials_[i]);
    return out;
  }

 private:
  static constexpr double kF = 0.7, kCR = 0.6;  // differential weight and crossover rate (Kernel Tuner's defaults)
  static constexpr std::size_t kStale = 3;      // generations without a replacement before a new sample

  // Ends the generation just proposed (selection) and draws the next one.
  void start_generation() {
    if (members_.empty()) {
      first_population();
      return;
    }
    select();
    const bool resample = stale_ >= kStale;
    if (resample) stale_ = 0;
    // A trial vector is repaired to the nearest configuration of the space,
    // measured or not (as Kernel Tuner's diff_evo): one already measured
    // costs no evaluation (next() skips it, its time known), so a converged
    // population goes stale and is drawn again. A new sample is repaired to
    // unmeasured configurations only. No configuration twice in a generation.
    std::vector<std::size_t> next;
    std::vector<bool> taken = resample ? mem_.taken() : std::vector<bool>(mem_.taken().size(), false);
    for (std::size_t i = 0; i < members_.size(); ++i) {
      const auto e = enc_->nearest(resample ? cube_[i] : trial_vector(i), taken, rng_);
      if (!e) break;
      taken[*e] = true;
      next.push_back(*e);
    }
    trials_ = std::move(next);
    next_trial_ = 0;
  }

  // The start point, then a Latin hypercube sample, each repaired to the
  // nearest unmeasured configuration.
  void first_population() {
    trials_.clear();
    next_trial_ = 0;
    cube_ = latin_hypercube();
    std::vector<bool> taken = mem_.taken();
    auto add = [&](std::optional<std::size_t> e) {
      if (!e) return;
      taken[*e] = true;
      trials_.push_back(*e);
      members_.push_back(*e);
    };
    add(strategy::start_point(*space_, target_, *enc_, mem_, rng_));
    for (std::size_t i = 1; i < cube_.size(); ++i) add(enc_->nearest(cube_[i], taken, rng_));
  }

  // Member i gives way to its trial when the trial is correct (a finite
  // cost: measured, by this search or another of a portfolio, and ok), not
  // slower and not a member already.
  void select() {
    bool changed = false;
    for (std::size_t i = 0; i < trials_.size() && i < members_.size(); ++i) {
      const std::size_t e = trials_[i];
      if (!std::isfinite(mem_.cost(e))) continue;
      if (mem_.cost(e) > mem_.cost(members_[i]) && std::isfinite(mem_.cost(members_[i]))) continue;
      if (std::find(members_.begin(), members_.end(), e) != members_.end()) continue;
      members_[i] = e;
      changed = true;
    }
    stale_ = changed ? 0 : stale_ + 1;
    if (stale_ >= kStale) cube_ = latin_hypercube();
  }

  // The fastest member (its own best: in a portfolio, another searcher's
  // best would pull every donor into that searcher's basin).
  std::size_t best_member() const {
    return *std::min_element(members_.begin(), members_.end(),
                             [&](std::size_t a, std::size_t b) { return mem_.cost(a) < mem_.cost(b); });
  }

  // population_ points, each feature's range cut into population_ strata
  // and every stratum used once per feature (McKay, Beckman and Conover,
  // Technometrics 21, 1979).
  std::vector<std::vector<float>> latin_hypercube() {
    const std::size_t n = population_, f = enc_->features();
    std::vector<std::vector<float>> pts(n, std::vector<float>(f));
    std::vector<std::size_t> order(n);
    for (std::size_t k = 0; k < f; ++k) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng_);
      const auto [lo, hi] = enc_->bounds(k);
      for (std::size_t i = 0; i < n; ++i) {
        const double u = (static_cast<double>(order[i]) + std::uniform_real_distribution<double>(0, 1)(rng_)) /
                         static_cast<double>(n);
        pts[i][k] =
            std::min(hi, static_cast<float>(lo + std::floor(u * (hi - lo + 1))));  // every integer equally likely
      }
    }
    return pts;
  }

  // DE/best/1/bin: the donor best + F·(b − c) over two other members,
  // rounded and clipped to each feature's range; each gene from the donor
  // with probability CR (one at least), else from member `slot`.
  std::vector<float> trial_vector(std::size_t slot) {
    const auto best = enc_->row(best_member());
    const std::size_t m = members_.size();
    std::uniform_int_distribution<std::size_t> any(0, m - 1);
    std::size_t b = any(rng_), c = any(rng_);
    for (int t = 0; t < 16 && m > 2 && (b == slot || b == c || c == slot); ++t) b = any(rng_), c = any(rng_);
    const auto rb = enc_->row(members_[b]), rc = enc_->row(members_[c]), rt = enc_->row(members_[slot]);
    const std::size_t genes = enc_->genes();
    const std::size_t forced = std::uniform_int_distribution<std::size_t>(0, genes - 1)(rng_);
    std::vector<float> out(rt.begin(), rt.end());
    for (std::size_t g = 0; g < genes; ++g) {
      if (g != forced && !std::bernoulli_distribution(kCR)(rng_)) continue;
      const auto [first, last] = enc_->gene(g);
      for (std::size_t k = first; k < last; ++k) {
        const auto [lo, hi] = enc_->bounds(k);
        out[k] = std::clamp(static_cast<float>(std::round(best[k] + kF * (rb[k] - rc[k]))), lo, hi);
      }
    }
    return out;
  }

  std::size_t per_gene_, population_ = 0;
  std::vector<std::size_t> members_;  // the population (entries; a failed one keeps its slot until replaced)
  std::vector<std::size_t> trials_;   // this generation's trial entries, trial i for member i
  std::size_t next_trial_ = 0;
  std::vector<std::vector<float>> cube_;  // the Latin hypercube sample of a new population
  std::size_t stale_ = 0;
};

}  // namespace

std::unique_ptr<Searcher> make_differential_searcher(std::uint64_t seed, std::size_t per_gene) {
  return std::make_unique<DifferentialSearcher>(seed, per_gene);
}

}  // namespace wstune
