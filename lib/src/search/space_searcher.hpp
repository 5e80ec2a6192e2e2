// Internal to the strategies (lib/src/search): the state every strategy of
// this folder keeps. Not installed.
#pragma once

#include <cstdint>
#include <optional>

#include "search/encoding.hpp"
#include "search/search.hpp"

namespace wstune::strategy {

/// A Searcher over one SearchSpace with a seeded generator, the space's
/// Encoding and a Memory of what was measured (annealing, genetic,
/// differential evolution, Bayesian optimisation). These strategies propose
/// the paper's rule themselves when they want it (rule_first() is false).
class SpaceSearcher : public Searcher {
 public:
  [[nodiscard]] bool rule_first() const override { return false; }
  /// Sets the members below, then restart().
  void initialize(const SearchSpace& space, const TuneTarget& target) final {
    space_ = &space;
    target_ = target;
    enc_.emplace(space);
    mem_.reset(space.size());
    restart();
  }
  /// Records the trial in the memory; an override calls this first.
  void report(std::size_t entry, const Trial& trial) override { mem_.report(entry, trial); }

 protected:
  explicit SpaceSearcher(std::uint64_t seed) : rng_(seed) {}
  /// The strategy's own state for a new search (space_, target_, enc_ and
  /// mem_ are set).
  virtual void restart() = 0;

  Rng rng_;
  const SearchSpace* space_ = nullptr;  ///< outlives the search (Searcher::initialize)
  TuneTarget target_;
  std::optional<Encoding> enc_;
  Memory mem_;
};

}  // namespace wstune::strategy
