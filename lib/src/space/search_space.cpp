#include "space/search_space.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

std::size_t SpaceLimits::max_items() const noexcept {
  std::size_t m = std::numeric_limits<std::size_t>::max();
  if (max_work_group_size) m = std::min(m, max_work_group_size);
  if (kernel_work_group_size) m = std::min(m, kernel_work_group_size);
  return m;
}

std::vector<std::size_t> divisors(std::size_t n) {
  std::vector<std::size_t> low, high;
  for (std::size_t d = 1; d <= n / d; ++d) {
    if (n % d) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

namespace {
bool within_item_size(std::size_t v, unsigned d, const SpaceLimits& l) noexcept {
  return d >= l.max_work_item_sizes.size() || v <= l.max_work_item_sizes[d];
}
bool lmem_fits(std::size_t items, const SpaceLimits& l) noexcept {
  if (l.local_mem_bytes == 0) return true;
  const std::uint64_t need = l.kernel_local_mem_bytes + l.local_mem_per_item_bytes * items;
  return need <= l.local_mem_bytes;
}
}  // namespace

bool fits(const Extent& local, const Extent& global, const SpaceLimits& limits) noexcept {
  if (local.dims < global.dims) return false;
  for (unsigned d = global.dims; d < 3; ++d)
    if (local[d] != 1) return false;  // e.g. a 2-D shape (x, 1) runs a 1-D NDRange
  for (unsigned d = 0; d < global.dims; ++d) {
    if (local[d] == 0 || global[d] == 0 || (!limits.any_shape && global[d] % local[d] != 0)) return false;
    if (!within_item_size(local[d], d, limits)) return false;
  }
  const std::size_t n = local.count();
  return n <= limits.max_items() && lmem_fits(n, limits);
}

std::vector<Extent> enumerate_local_sizes(const Extent& global, const SpaceLimits& limits) {
  std::vector<Extent> out;
  if (global.count() == 0) return out;
  auto divisors_along = [&](unsigned d) {
    if (global.dims <= d) return std::vector<std::size_t>{1};
    std::vector<std::size_t> c = divisors(global[d]);
    if (limits.any_shape) {
      for (std::size_t p = 1; p < 2 * global[d]; p *= 2) c.push_back(p);
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
    }
    return c;
  };
  const auto xs = divisors_along(0), ys = divisors_along(1), zs = divisors_along(2);
  const std::size_t cap = limits.max_items();
  for (std::size_t z : zs) {
    if (!within_item_size(z, 2, limits) || z > cap) break;  // divisors ascend
    for (std::size_t y : ys) {
      if (!within_item_size(y, 1, limits) || y > cap / z) break;
      for (std::size_t x : xs) {
        if (!within_item_size(x, 0, limits) || x > cap / (y * z)) break;
        if (!lmem_fits(x * y * z, limits)) break;
        out.push_back(Extent{x, y, z, global.dims});
      }
    }
  }
  return out;
}

Extent round_up(const Extent& global, const Extent& local) {
  Extent r = global;
  for (unsigned d = 0; d < global.dims; ++d) {
    const std::size_t l = std::max<std::size_t>(1, local[d]);
    r.at(d) = (global[d] + l - 1) / l * l;
  }
  return r;
}

std::vector<Extent> shapes_of(std::size_t items, const std::vector<Extent>& space) {
  std::vector<Extent> out;
  for (const auto& e : space)
    if (e.count() == items) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const Extent& a, const Extent& b) { return a.x < b.x; });
  return out;
}

}  // namespace wstune

// ---- SearchSpace -------------------------------------------------------------

namespace wstune {

SearchSpace::SearchSpace(const std::vector<Extent>& shapes, const LocalSize& rule) {
  set_first_.push_back(0);
  set_index_.emplace(std::string(), 0);
  entries_.reserve(shapes.size());
  for (const auto& e : shapes) entries_.push_back(Entry{0, e});
  if (rule) rule_ = find(Configuration{nlohmann::json::object(), rule});
}

SearchSpace::SearchSpace(std::vector<TuningParameter> parameters, const LocalSizes& locals, Configuration baseline,
                         const std::optional<Configuration>& rule, std::size_t max_size)
    : parameters_(std::move(parameters)), baseline_(std::move(baseline)) {
  const std::size_t n = parameters_.size();
  for (const auto& p : parameters_)
    if (p.values.empty()) throw UsageError(fmt::format("tuning parameter {} has no values", p.name));
  std::vector<std::uint32_t> idx(n, 0);
  nlohmann::json params = nlohmann::json::object();
  for (;;) {
    for (std::size_t k = 0; k < n; ++k) params[parameters_[k].name] = parameters_[k].values[idx[k]];
    const auto ls = locals(params);
    if (!ls.empty()) {
      const auto set = static_cast<std::uint32_t>(set_first_.size());
      bool any = false;
      for (const auto& l : ls) {
        if (Configuration{params, l} == baseline_) continue;
        if (!any) {
          set_first_.push_back(entries_.size());
          set_values_.insert(set_values_.end(), idx.begin(), idx.end());
          set_index_.emplace(set_key(idx), set);
          any = true;
        }
        entries_.push_back(Entry{set, l});
      }
      if (entries_.size() > max_size) {
        throw UsageError(
            fmt::format("the search space has more than {} configurations; narrow the parameters' "
                        "values or add constraints (Conditions)",
                        max_size));
      }
    }
    std::size_t k = n;  // odometer: the last parameter varies fastest
    while (k > 0 && ++idx[k - 1] == parameters_[k - 1].values.size()) idx[--k] = 0;
    if (k == 0) break;
  }
  if (rule) rule_ = find(*rule);
}

std::string SearchSpace::set_key(std::span<const std::uint32_t> idx) const {
  return std::string(reinterpret_cast<const char*>(idx.data()), idx.size_bytes());
}

std::span<const std::uint32_t> SearchSpace::value_indices(std::size_t s) const {
  const std::size_t n = parameters_.size();
  return {set_values_.data() + s * n, n};
}

nlohmann::json SearchSpace::params_of_set(std::size_t s) const {
  nlohmann::json p = nlohmann::json::object();
  const auto idx = value_indices(s);
  for (std::size_t k = 0; k < parameters_.size(); ++k) p[parameters_[k].name] = parameters_[k].values[idx[k]];
  return p;
}

std::pair<std::size_t, std::size_t> SearchSpace::entries_of_set(std::size_t s) const {
  return {set_first_.at(s), s + 1 < set_first_.size() ? set_first_[s + 1] : entries_.size()};
}

Configuration SearchSpace::at(std::size_t i) const {
  const Entry& e = entries_.at(i);
  return Configuration{params_of_set(e.set), e.local};
}

std::optional<std::size_t> SearchSpace::find_set(const nlohmann::json& params) const {
  std::vector<std::uint32_t> idx(parameters_.size());
  for (std::size_t k = 0; k < parameters_.size(); ++k) {
    const auto it = params.find(parameters_[k].name);
    if (it == params.end()) return std::nullopt;
    const auto& vs = parameters_[k].values;
    const auto v = std::find(vs.begin(), vs.end(), *it);
    if (v == vs.end()) return std::nullopt;
    idx[k] = static_cast<std::uint32_t>(v - vs.begin());
  }
  if (params.size() != parameters_.size()) return std::nullopt;
  const auto s = set_index_.find(set_key(idx));
  if (s == set_index_.end()) return std::nullopt;
  return s->second;
}

std::optional<std::size_t> SearchSpace::find(const Configuration& c) const {
  const auto s = find_set(c.params);
  if (!s) return std::nullopt;
  const auto [first, last] = entries_of_set(*s);
  for (std::size_t i = first; i < last; ++i)
    if (entries_[i].local == c.local) return i;
  return std::nullopt;
}

std::vector<Extent> SearchSpace::shapes_of_set(std::size_t s) const {
  std::vector<Extent> out;
  const auto [first, last] = entries_of_set(s);
  for (std::size_t i = first; i < last; ++i)
    if (entries_[i].local) out.push_back(*entries_[i].local);
  return out;
}

namespace {

// The next smaller (-1) or larger (+1) value of `v` in the sorted `vs`.
std::optional<std::size_t> step(const std::vector<std::size_t>& vs, std::size_t v, int dir) {
  const auto it = std::lower_bound(vs.begin(), vs.end(), v);
  if (dir < 0) return it == vs.begin() ? std::nullopt : std::optional(*(it - 1));
  if (it == vs.end() || it + 1 == vs.end()) return std::nullopt;
  return *(it + 1);
}

// A parameter set's local-size lattice: each dimension's extents, ascending.
using Lattice = std::array<std::vector<std::size_t>, 3>;

// The lattice of the local sizes among configurations [first, last) (one parameter set).
Lattice lattice_axes(const SearchSpace& space, std::size_t first, std::size_t last) {
  Lattice axis;
  for (std::size_t j = first; j < last; ++j)
    if (const LocalSize& l = space.local(j))
      for (unsigned d = 0; d < 3; ++d) axis[d].push_back((*l)[d]);
  for (auto& a : axis) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  return axis;
}

// The configuration among [first, last) with local size `x`, nullopt when none has it.
std::optional<std::size_t> index_of(const SearchSpace& space, std::size_t first, std::size_t last, const Extent& x) {
  for (std::size_t j = first; j < last; ++j)
    if (space.local(j) == x) return j;
  return std::nullopt;
}

// `l` moved one lattice step in each dimension whose direction in `dirs` is
// -1 or +1 (0: kept); nullopt when a step leaves the lattice.
std::optional<Extent> lattice_step(const Lattice& axis, const Extent& l, const std::array<int, 3>& dirs) {
  Extent c = l;
  for (unsigned d = 0; d < 3; ++d) {
    if (!dirs[d]) continue;
    const auto v = step(axis[d], l[d], dirs[d]);
    if (!v) return std::nullopt;
    c.at(d) = *v;
  }
  return c;
}

// Configuration i's neighbours on its parameter set's local-size lattice: the
// next smaller or larger extent in each dimension and their combinations.
void lattice_neighbours(const SearchSpace& space, std::size_t i, std::vector<std::size_t>& out) {
  const auto [first, last] = space.entries_of_set(space.parameter_set(i));
  const auto axis = lattice_axes(space, first, last);
  const Extent& l = *space.local(i);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (!dx && !dy && !dz) continue;
        const auto c = lattice_step(axis, l, {dx, dy, dz});
        if (!c) continue;
        if (const auto j = index_of(space, first, last, *c)) out.push_back(*j);
      }
}

// Configuration i's same-size reshapes next to it in its parameter set, the
// shapes ordered by x, then y (e.g. 8x4 -> 16x2, 4x8).
void reshape_neighbours(const SearchSpace& space, std::size_t i, std::vector<std::size_t>& out) {
  const auto [first, last] = space.entries_of_set(space.parameter_set(i));
  const std::size_t items = space.local(i)->count();
  std::vector<std::size_t> same;
  for (std::size_t j = first; j < last; ++j)
    if (space.local(j) && space.local(j)->count() == items) same.push_back(j);
  std::sort(same.begin(), same.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(space.local(a)->x, space.local(a)->y) < std::tie(space.local(b)->x, space.local(b)->y);
  });
  const auto pos = static_cast<std::size_t>(std::find(same.begin(), same.end(), i) - same.begin());
  if (pos > 0) out.push_back(same[pos - 1]);
  if (pos + 1 < same.size()) out.push_back(same[pos + 1]);
}

// The configuration of parameter set `set` with local size `local`, else the set's first.
std::size_t with_local(const SearchSpace& space, std::size_t set, const LocalSize& local) {
  const auto [first, last] = space.entries_of_set(set);
  std::size_t pick = first;
  for (std::size_t j = first; j < last; ++j)
    if (space.local(j) == local) pick = j;
  return pick;
}

}  // namespace

// In each parameter set one value index away: its configuration with i's local size, else its first.
void SearchSpace::parameter_neighbours(std::size_t i, std::vector<std::size_t>& out) const {
  const Entry& e = entries_[i];
  const auto idx = value_indices(e.set);
  std::vector<std::uint32_t> other(idx.begin(), idx.end());
  for (std::size_t k = 0; k < parameters_.size(); ++k) {
    for (int dir : {-1, 1}) {
      if ((dir < 0 && idx[k] == 0) || (dir > 0 && idx[k] + 1 >= parameters_[k].values.size())) continue;
      other[k] = static_cast<std::uint32_t>(static_cast<int>(idx[k]) + dir);
      const auto s = set_index_.find(set_key(other));
      other[k] = idx[k];
      if (s != set_index_.end()) out.push_back(with_local(*this, s->second, e.local));
    }
  }
}

std::vector<std::size_t> SearchSpace::neighbours(std::size_t i) const {
  std::vector<std::size_t> out;
  if (entries_.at(i).local) {
    lattice_neighbours(*this, i, out);
    reshape_neighbours(*this, i, out);
  }
  parameter_neighbours(i, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  out.erase(std::remove(out.begin(), out.end(), i), out.end());
  return out;
}

}  // namespace wstune
