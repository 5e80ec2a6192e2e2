// Internal to the strategies (lib/src/search): configurations as numeric
// feature rows (for distances, genes and surrogates) and what a searcher
// has measured. Not installed.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "evaluate/trial.hpp"
#include "space/search_space.hpp"

namespace wstune::strategy {

using Rng = std::mt19937_64;

/// Every configuration of a space as a row of features: each tuning
/// parameter's value index, then (when the space has local sizes) log2 of
/// the local x, y, z and of the work-items, −1 each for NULL.
class Encoding {
 public:
  explicit Encoding(const SearchSpace& space);
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] std::size_t features() const noexcept { return f_; }
  /// Genes: one per parameter, one for the local size (its four features).
  [[nodiscard]] std::size_t genes() const noexcept { return params_ + (f_ > params_ ? 1 : 0); }
  /// The features [first, last) of gene `g`.
  [[nodiscard]] std::pair<std::size_t, std::size_t> gene(std::size_t g) const noexcept {
    return g < params_ ? std::pair{g, g + 1} : std::pair{params_, f_};
  }
  /// Number of values of parameter gene `g` (< the number of parameters).
  [[nodiscard]] std::size_t values(std::size_t g) const { return values_[g]; }
  /// The smallest and largest value of feature `k` over the space.
  [[nodiscard]] std::pair<float, float> bounds(std::size_t k) const { return {lo_[k], hi_[k]}; }
  /// Configuration `i`'s features.
  [[nodiscard]] std::span<const float> row(std::size_t i) const { return {x_.data() + i * f_, f_}; }
  /// The features of `c` (also one outside the space, e.g. the baseline; a
  /// value not among a parameter's values counts as its middle one).
  [[nodiscard]] std::vector<float> encode(const Configuration& c, const SearchSpace& space) const;
  /// The configurations one move from `i`: differing in exactly one gene (one
  /// parameter's value, any other value, or the local size: the Hamming
  /// neighbourhood), or at most one value index in every parameter and one
  /// power of two in every local dimension (the adjacent neighbourhood).
  [[nodiscard]] std::vector<std::size_t> neighbourhood(std::size_t i) const;
  /// The gene in which neighbour `j` of `i` differs from it: the first
  /// parameter whose value differs, else the local size (genes() − 1).
  [[nodiscard]] std::size_t moved_gene(std::size_t i, std::size_t j) const;
  /// A random element of `moves` (neighbours of `from`, non-empty) that is
  /// fair to the genes: a gene is drawn uniformly among those some move
  /// changes, then one of its moves. The local size's lattice offers up to
  /// 28 moves against two per parameter, so a uniform draw over the moves
  /// would seldom change a parameter.
  [[nodiscard]] std::size_t pick_by_gene(std::size_t from, const std::vector<std::size_t>& moves, Rng& rng) const;
  /// The configuration closest to `target` (L1 over features scaled by
  /// their range) among those with !taken[i]; ties broken at random.
  /// nullopt when every configuration is taken.
  [[nodiscard]] std::optional<std::size_t> nearest(std::span<const float> target, const std::vector<bool>& taken,
                                                   Rng& rng) const;

 private:
  std::size_t n_ = 0, f_ = 0, params_ = 0;
  std::vector<std::size_t> values_;
  std::vector<float> x_, inv_range_, lo_, hi_;
};

/// What a searcher has measured: per configuration, ln(median ms), +inf
/// for a failed trial.
class Memory {
 public:
  /// Forgets everything; `n` configurations.
  void reset(std::size_t n);
  /// Records configuration `i`'s trial.
  void report(std::size_t i, const Trial& t);
  [[nodiscard]] bool measured(std::size_t i) const { return taken_[i]; }
  [[nodiscard]] const std::vector<bool>& taken() const noexcept { return taken_; }
  [[nodiscard]] std::size_t count() const noexcept { return measured_.size(); }
  [[nodiscard]] bool exhausted() const noexcept { return measured_.size() >= taken_.size(); }
  /// ln(median ms) of configuration `i` (+inf: failed).
  [[nodiscard]] double cost(std::size_t i) const { return cost_[i]; }
  /// Every measured configuration, in measured order.
  [[nodiscard]] const std::vector<std::size_t>& measured_list() const noexcept { return measured_; }
  /// Correct measured configurations, fastest first.
  [[nodiscard]] std::vector<std::size_t> ranked() const;
  /// A random unmeasured configuration; nullopt when none is left.
  [[nodiscard]] std::optional<std::size_t> random_unmeasured(Rng& rng) const;
  /// The unmeasured neighbours (SearchSpace::neighbours) of `i`.
  [[nodiscard]] std::vector<std::size_t> open_neighbours(const SearchSpace& space, std::size_t i) const;

 private:
  std::vector<bool> taken_;
  std::vector<double> cost_;
  std::vector<std::size_t> measured_;
};

/// Where a search starts: when the baseline runs the driver's choice (NULL)
/// and its parameter set has shapes, the shape prior_order() (search.hpp)
/// ranks first in that set; else the configuration nearest to the baseline.
/// nullopt when every configuration is measured.
std::optional<std::size_t> start_point(const SearchSpace& space, const TuneTarget& target, const Encoding& enc,
                                       const Memory& mem, Rng& rng);

/// A uniformly random element of `v` (non-empty).
template <class T>
const T& pick(const std::vector<T>& v, Rng& rng) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

}  // namespace wstune::strategy
