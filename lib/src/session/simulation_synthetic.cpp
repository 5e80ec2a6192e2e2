// A synthetic table: a generated landscape with constraints, for tests and
// benchmarks of the strategies (simulation.hpp).
#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "session/simulation.hpp"
#include "wstune/error.hpp"

namespace wstune {
namespace {

struct Basin {
  std::vector<double> centre;  // value indices
  double depth = 0;
};

class Landscape {
 public:
  explicit Landscape(const SyntheticSpec& s) : s_(s), rng_(s.seed) {
    std::uniform_real_distribution<double> w(0.3, 1.5), depth(0.05, 0.35);
    for (std::size_t k = 0; k < s.parameters; ++k) weight_.push_back(w(rng_));
    interaction_ = w(rng_);
    for (unsigned b = 0; b < std::max(1u, s.basins); ++b)
      basins_.push_back(Basin{feasible_point(), b ? depth(rng_) : 0.0});
  }

  bool feasible(const std::vector<std::size_t>& idx) const { return idx[0] + idx[1] < s_.values; }

  // ln(time / 1 ms) of the configuration with value indices `idx`.
  double log_time(const std::vector<std::size_t>& idx) {
    const double span = static_cast<double>(s_.values - 1);
    double best = std::numeric_limits<double>::infinity();
    for (const auto& b : basins_) {
      double v = b.depth;
      for (std::size_t k = 0; k < idx.size(); ++k) {
        const double d = (static_cast<double>(idx[k]) - b.centre[k]) / span;
        v += 4.0 * weight_[k] * d * d;
      }
      const std::size_t last = idx.size() - 1;
      v += interaction_ *
           std::abs((static_cast<double>(idx[0]) - b.centre[0]) * (static_cast<double>(idx[last]) - b.centre[last])) /
           (span * span);
      best = std::min(best, v);
    }
    return best + s_.ruggedness * std::uniform_real_distribution<double>(-1, 1)(rng_);
  }

  bool fails() { return std::bernoulli_distribution(s_.failures)(rng_); }

 private:
  std::vector<double> feasible_point() {
    std::uniform_int_distribution<std::size_t> any(0, s_.values - 1);
    for (;;) {
      std::vector<std::size_t> idx(s_.parameters);
      for (auto& i : idx) i = any(rng_);
      if (feasible(idx)) return {idx.begin(), idx.end()};
    }
  }

  const SyntheticSpec& s_;
  std::mt19937_64 rng_;
  std::vector<double> weight_;
  double interaction_ = 0;
  std::vector<Basin> basins_;
};

Trial synthetic_trial(const std::vector<std::size_t>& idx, Landscape& land, bool may_fail) {
  Trial t;
  for (std::size_t k = 0; k < idx.size(); ++k) t.params[fmt::format("P{}", k)] = std::size_t{1} << idx[k];
  const double ms = std::exp(land.log_time(idx));
  if (may_fail && land.fails()) {
    t.status = TrialStatus::runtime;
    t.error = "synthetic failure";
    return t;
  }
  for (double f : {-0.01, -0.005, 0.0, 0.005, 0.01}) t.kernel.ms.push_back(ms * (1 + f));
  return t;
}

}  // namespace

RecordedTable synthetic_table(const SyntheticSpec& spec) {
  if (spec.parameters < 2 || spec.values < 2)
    throw UsageError("a synthetic table needs at least 2 parameters of at least 2 values each");
  Landscape land(spec);
  RecordedTable t;
  t.source = fmt::format("synthetic P{}V{}R{}S{}", spec.parameters, spec.values, spec.ruggedness, spec.seed);
  t.target.kernel = "synthetic";
  t.target.size = t.source.substr(t.source.find(' ') + 1);
  const std::vector<std::size_t> middle(spec.parameters, (spec.values - 1) / 2);
  t.trials.push_back(synthetic_trial(middle, land, false));  // the baseline
  std::vector<std::size_t> idx(spec.parameters, 0);
  for (;;) {
    if (land.feasible(idx) && idx != middle) t.trials.push_back(synthetic_trial(idx, land, true));
    std::size_t k = spec.parameters;  // odometer: the last parameter varies fastest
    while (k > 0 && ++idx[k - 1] == spec.values) idx[--k] = 0;
    if (k == 0) break;
  }
  TuningParameter p;
  for (std::size_t v = 0; v < spec.values; ++v) p.values.emplace_back(std::size_t{1} << v);
  for (std::size_t k = 0; k < spec.parameters; ++k) {
    p.name = fmt::format("P{}", k);
    t.parameters.push_back(p);
  }
  return t;
}

}  // namespace wstune
