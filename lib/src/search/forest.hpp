// Internal to the strategies (lib/src/search): an ensemble of extremely
// randomized regression trees (Geurts, Ernst and Wehenkel, "Extremely
// randomized trees", Machine Learning 63, 2006), the surrogate of the
// "bayes" strategy. Not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "search/encoding.hpp"

namespace wstune::strategy {

/// Mean and spread of the trees' predictions at one point.
struct Prediction {
  double mean = 0;  ///< mean over the trees
  double sd = 0;    ///< standard deviation over the trees
};

/// Regression trees fitted to (rows of features, targets). Each node splits
/// at the best of one random cut per feature (uniform between the node's
/// smallest and largest value of that feature), by variance reduction, until
/// a node holds fewer than `min_split` samples or cannot be split.
class Forest {
 public:
  /// Fits `trees` trees to rows `x` (n × features, row-major) and targets `y` (n).
  void fit(std::span<const float> x, std::size_t features, std::span<const double> y, std::size_t trees,
           std::size_t min_split, Rng& rng);
  /// The prediction at `row` (features long); {0, 0} before fit().
  [[nodiscard]] Prediction predict(std::span<const float> row) const;

 private:
  struct Node {
    std::int32_t feature = -1;  // -1: a leaf
    float cut = 0;
    std::int32_t left = 0, right = 0;  // children (node indices)
    double value = 0;                  // leaf mean
  };
  std::int32_t build(std::vector<std::size_t>& idx, std::size_t begin, std::size_t end, Rng& rng);
  std::vector<std::vector<Node>> trees_;
  std::span<const float> x_;
  std::span<const double> y_;
  std::size_t f_ = 0, min_split_ = 2;
  std::vector<Node>* cur_ = nullptr;
};

}  // namespace wstune::strategy
