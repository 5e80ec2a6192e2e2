// Feature rows of configurations and the measured set, shared by the
// strategies in lib/src/search.
#include "search/encoding.hpp"

#include <algorithm>
#include <cmath>

#include "search/search.hpp"

namespace wstune::strategy {

Encoding::Encoding(const SearchSpace& space) : n_(space.size()), params_(space.parameters().size()) {
  bool any_local = false;
  for (std::size_t i = 0; i < n_ && !any_local; ++i) any_local = space.local(i).has_value();
  f_ = params_ + (any_local ? 4 : 0);
  for (const auto& p : space.parameters()) values_.push_back(p.values.size());
  x_.resize(n_ * f_);
  for (std::size_t i = 0; i < n_; ++i) {
    float* r = x_.data() + i * f_;
    const auto idx = space.value_indices(space.parameter_set(i));
    for (std::size_t k = 0; k < params_; ++k) r[k] = static_cast<float>(idx[k]);
    if (!any_local) continue;
    const LocalSize& l = space.local(i);
    for (unsigned d = 0; d < 3; ++d)
      r[params_ + d] = l ? static_cast<float>(std::log2(static_cast<double>((*l)[d]))) : -1.f;
    r[params_ + 3] = l ? static_cast<float>(std::log2(static_cast<double>(l->count()))) : -1.f;
  }
  inv_range_.assign(f_, 1.f);
  lo_.assign(f_, 0.f);
  hi_.assign(f_, 0.f);
  for (std::size_t k = 0; k < f_; ++k) {
    float lo = 0, hi = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const float v = x_[i * f_ + k];
      lo = i ? std::min(lo, v) : v;
      hi = i ? std::max(hi, v) : v;
    }
    lo_[k] = lo;
    hi_[k] = hi;
    if (hi > lo) inv_range_[k] = 1.f / (hi - lo);
  }
}

std::vector<float> Encoding::encode(const Configuration& c, const SearchSpace& space) const {
  std::vector<float> r(f_, -1.f);
  const auto& ps = space.parameters();
  for (std::size_t k = 0; k < params_; ++k) {
    const auto& vs = ps[k].values;
    const auto it = c.params.find(ps[k].name);
    const auto v = it == c.params.end() ? vs.end() : std::find(vs.begin(), vs.end(), *it);
    r[k] = static_cast<float>(v == vs.end() ? (vs.size() - 1) / 2 : static_cast<std::size_t>(v - vs.begin()));
  }
  if (f_ > params_ && c.local) {
    for (unsigned d = 0; d < 3; ++d) r[params_ + d] = static_cast<float>(std::log2(static_cast<double>((*c.local)[d])));
    r[params_ + 3] = static_cast<float>(std::log2(static_cast<double>(c.local->count())));
  }
  return r;
}

std::vector<std::size_t> Encoding::neighbourhood(std::size_t i) const {
  std::vector<std::size_t> out;
  const float* a = x_.data() + i * f_;
  for (std::size_t j = 0; j < n_; ++j) {
    if (j == i) continue;
    const float* b = x_.data() + j * f_;
    std::size_t differ = 0;
    bool adjacent = true;
    for (std::size_t g = 0; g < genes(); ++g) {
      const auto [first, last] = gene(g);
      differ += !std::equal(a + first, a + last, b + first);
      for (std::size_t k = first; k < std::min(last, first + 3); ++k)
        adjacent = adjacent && std::abs(a[k] - b[k]) <= 1.f;
    }
    if (differ == 1 || adjacent) out.push_back(j);
  }
  return out;
}

std::optional<std::size_t> Encoding::nearest(std::span<const float> target, const std::vector<bool>& taken,
                                             Rng& rng) const {
  std::optional<std::size_t> best;
  float best_d = std::numeric_limits<float>::infinity();
  std::size_t ties = 0;
  for (std::size_t i = 0; i < n_; ++i) {
    if (taken[i]) continue;
    const float* r = x_.data() + i * f_;
    float d = 0;
    for (std::size_t k = 0; k < f_ && d <= best_d; ++k) d += std::abs(r[k] - target[k]) * inv_range_[k];
    if (d < best_d) {
      best_d = d;
      best = i;
      ties = 1;
    } else if (d == best_d && std::uniform_int_distribution<std::size_t>(0, ties++)(rng) == 0) {
      best = i;  // reservoir sampling among equally near ones
    }
  }
  return best;
}

void Memory::reset(std::size_t n) {
  taken_.assign(n, false);
  cost_.assign(n, std::numeric_limits<double>::infinity());
  measured_.clear();
}

void Memory::report(std::size_t i, const Trial& t) {
  if (i >= taken_.size() || taken_[i]) return;
  taken_[i] = true;
  measured_.push_back(i);
  if (t.ok() && t.kernel.size() && t.median_ms() > 0) cost_[i] = std::log(t.median_ms());
}

std::vector<std::size_t> Memory::ranked() const {
  std::vector<std::size_t> ok;
  for (std::size_t i : measured_)
    if (std::isfinite(cost_[i])) ok.push_back(i);
  std::stable_sort(ok.begin(), ok.end(), [&](std::size_t a, std::size_t b) { return cost_[a] < cost_[b]; });
  return ok;
}

std::optional<std::size_t> Memory::random_unmeasured(Rng& rng) const {
  if (exhausted()) return std::nullopt;
  std::uniform_int_distribution<std::size_t> any(0, taken_.size() - 1);
  for (int tries = 0; tries < 64; ++tries)
    if (const std::size_t i = any(rng); !taken_[i]) return i;
  std::vector<std::size_t> open;  // a nearly full space: pick among the rest
  for (std::size_t i = 0; i < taken_.size(); ++i)
    if (!taken_[i]) open.push_back(i);
  return pick(open, rng);
}

std::vector<std::size_t> Memory::open_neighbours(const SearchSpace& space, std::size_t i) const {
  std::vector<std::size_t> out;
  for (std::size_t j : space.neighbours(i))
    if (!taken_[j]) out.push_back(j);
  return out;
}

std::size_t Encoding::moved_gene(std::size_t i, std::size_t j) const {
  const auto a = row(i), b = row(j);
  for (std::size_t g = 0; g < params_; ++g)
    if (a[g] != b[g]) return g;
  return genes() - 1;
}

std::size_t Encoding::pick_by_gene(std::size_t from, const std::vector<std::size_t>& moves, Rng& rng) const {
  std::vector<std::size_t> gene_of(moves.size()), count(genes(), 0);
  for (std::size_t k = 0; k < moves.size(); ++k) ++count[gene_of[k] = moved_gene(from, moves[k])];
  std::vector<std::size_t> live;
  for (std::size_t g = 0; g < count.size(); ++g)
    if (count[g]) live.push_back(g);
  const std::size_t g = pick(live, rng);
  // The n-th move of gene g, n uniform over its moves (as pick() over them).
  std::size_t n = std::uniform_int_distribution<std::size_t>(0, count[g] - 1)(rng);
  for (std::size_t k = 0;; ++k)
    if (gene_of[k] == g && n-- == 0) return moves[k];
}

std::optional<std::size_t> start_point(const SearchSpace& space, const TuneTarget& target, const Encoding& enc,
                                       const Memory& mem, Rng& rng) {
  const Configuration& base = space.baseline();
  if (const auto set = space.find_set(base.params); set && !base.local) {
    const auto shapes = space.shapes_of_set(*set);
    if (!shapes.empty())
      if (const auto i = space.find(Configuration{base.params, prior_order(shapes, target).front()});
          i && !mem.measured(*i))
        return i;
  }
  return enc.nearest(enc.encode(base, space), mem.taken(), rng);
}

}  // namespace wstune::strategy
