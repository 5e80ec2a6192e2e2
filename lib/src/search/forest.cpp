// Extremely randomized regression trees (Geurts et al. 2006), the
// surrogate of the "bayes" strategy.
#include "search/forest.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace wstune::strategy {

void Forest::fit(std::span<const float> x, std::size_t features, std::span<const double> y, std::size_t trees,
                 std::size_t min_split, Rng& rng) {
  x_ = x;
  y_ = y;
  f_ = features;
  min_split_ = std::max<std::size_t>(2, min_split);
  trees_.assign(trees, {});
  std::vector<std::size_t> idx(y.size());
  for (auto& t : trees_) {
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    cur_ = &t;
    if (!idx.empty()) build(idx, 0, idx.size(), rng);
  }
  cur_ = nullptr;
}

std::int32_t Forest::build(std::vector<std::size_t>& idx, std::size_t begin, std::size_t end, Rng& rng) {
  const auto self = static_cast<std::int32_t>(cur_->size());
  cur_->push_back(Node{});
  double sum = 0, sq = 0;
  for (std::size_t k = begin; k < end; ++k) sum += y_[idx[k]], sq += y_[idx[k]] * y_[idx[k]];
  const auto n = static_cast<double>(end - begin);
  (*cur_)[static_cast<std::size_t>(self)].value = sum / n;
  if (end - begin < min_split_ || sq - sum * sum / n <= 1e-12) return self;
  // One random cut per feature; keep the one with the smallest child SSE.
  double best_sse = std::numeric_limits<double>::infinity();
  std::int32_t best_f = -1;
  float best_cut = 0;
  for (std::size_t f = 0; f < f_; ++f) {
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    for (std::size_t k = begin; k < end; ++k) {
      const float v = x_[idx[k] * f_ + f];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (!(hi > lo)) continue;
    const float cut = std::uniform_real_distribution<float>(lo, hi)(rng);
    double ls = 0, lq = 0, rs = 0, rq = 0, ln = 0;
    for (std::size_t k = begin; k < end; ++k) {
      const double v = y_[idx[k]];
      if (x_[idx[k] * f_ + f] < cut)
        ls += v, lq += v * v, ln += 1;
      else
        rs += v, rq += v * v;
    }
    if (ln == 0 || ln == n) continue;
    const double sse = (lq - ls * ls / ln) + (rq - rs * rs / (n - ln));
    if (sse < best_sse) best_sse = sse, best_f = static_cast<std::int32_t>(f), best_cut = cut;
  }
  if (best_f < 0) return self;
  const auto mid =
      std::partition(idx.begin() + static_cast<std::ptrdiff_t>(begin), idx.begin() + static_cast<std::ptrdiff_t>(end),
                     [&](std::size_t i) { return x_[i * f_ + static_cast<std::size_t>(best_f)] < best_cut; });
  const auto m = static_cast<std::size_t>(mid - idx.begin());
  const std::int32_t left = build(idx, begin, m, rng);
  const std::int32_t right = build(idx, m, end, rng);
  Node& node = (*cur_)[static_cast<std::size_t>(self)];
  node.feature = best_f;
  node.cut = best_cut;
  node.left = left;
  node.right = right;
  return self;
}

Prediction Forest::predict(std::span<const float> row) const {
  if (trees_.empty()) return {};
  double sum = 0, sq = 0;
  for (const auto& t : trees_) {
    std::size_t i = 0;
    while (t[i].feature >= 0)
      i = static_cast<std::size_t>(row[static_cast<std::size_t>(t[i].feature)] < t[i].cut ? t[i].left : t[i].right);
    sum += t[i].value;
    sq += t[i].value * t[i].value;
  }
  const auto n = static_cast<double>(trees_.size());
  const double mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sq / n - mean * mean))};
}

}  // namespace wstune::strategy
