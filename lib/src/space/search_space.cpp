#include "space/search_space.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

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

namespace {

// A hash of a list of local sizes, for keeping each distinct list once.
struct ListHash {
  std::size_t operator()(const std::vector<LocalSize>& l) const noexcept {
    std::size_t h = l.size();
    for (const LocalSize& e : l) {
      const std::size_t v = e ? ((e->x * 31 + e->y) * 31 + e->z) * 4 + e->dims : 0x9e3779b9;
      h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
    return h;
  }
};

// The value indices of `params` over `parameters`, nullopt when a parameter is
// missing, a value is not among its Values, or params has other keys.
std::optional<std::vector<std::uint32_t>> indices_of(const std::vector<TuningParameter>& parameters,
                                                     const nlohmann::json& params) {
  if (!params.is_object() || params.size() != parameters.size()) return std::nullopt;
  std::vector<std::uint32_t> idx(parameters.size());
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    const auto it = params.find(parameters[k].name);
    if (it == params.end()) return std::nullopt;
    const auto& vs = parameters[k].values;
    const auto v = std::find(vs.begin(), vs.end(), *it);
    if (v == vs.end()) return std::nullopt;
    idx[k] = static_cast<std::uint32_t>(v - vs.begin());
  }
  return idx;
}

}  // namespace

SearchSpace::SearchSpace(const std::vector<Extent>& shapes, const LocalSize& rule)
    : sets_(std::vector<std::uint32_t>{}) {
  sets_.push_back({});
  lists_.emplace_back(shapes.begin(), shapes.end());
  lay_out({0}, std::nullopt);
  if (rule) rule_ = find(Configuration{nlohmann::json::object(), rule});
}

namespace {

// Keeps each distinct list of local sizes once in `lists`.
class ListInterner {
 public:
  explicit ListInterner(std::vector<std::vector<LocalSize>>& lists) : lists_(lists) {}
  // The index of `l` in the lists, added when new.
  std::uint32_t id(const std::vector<LocalSize>& l) {
    if (last_ && lists_[*last_] == l) return *last_;  // most often the set before's
    if (const auto it = index_.find(l); it != index_.end()) return *(last_ = it->second);
    const auto id = static_cast<std::uint32_t>(lists_.size());
    lists_.push_back(l);
    index_.emplace(l, id);
    return *(last_ = id);
  }

 private:
  std::vector<std::vector<LocalSize>>& lists_;
  std::unordered_map<std::vector<LocalSize>, std::uint32_t, ListHash> index_;
  std::optional<std::uint32_t> last_;
};

// Removes `x` from `l`; its position, nullopt when `l` does not hold it.
std::optional<std::size_t> remove_local(std::vector<LocalSize>& l, const LocalSize& x) {
  const auto it = std::find(l.begin(), l.end(), x);
  if (it == l.end()) return std::nullopt;
  const auto pos = static_cast<std::size_t>(it - l.begin());
  l.erase(it);
  return pos;
}

}  // namespace

SearchSpace::SearchSpace(std::vector<TuningParameter> parameters, ParameterSets sets, const LocalsOf& locals,
                         Configuration baseline, const std::optional<Configuration>& rule)
    : parameters_(std::move(parameters)), sets_(std::move(sets)), baseline_(std::move(baseline)) {
  check_sets();
  const std::optional<std::size_t> base_set = baseline_set();
  ListInterner interner(lists_);
  std::vector<std::uint32_t> ids;  // per set kept, its list
  std::vector<bool> keep(sets_.size(), true);
  std::optional<std::pair<std::size_t, std::size_t>> hole;  // (kept set, position) of the baseline
  std::vector<std::uint32_t> idx(parameters_.size());
  std::vector<LocalSize> l;
  for (std::size_t s = 0; s < sets_.size(); ++s) {
    sets_.row(s, idx);
    l.clear();
    locals(idx, l);
    // The baseline's set runs its list less the baseline's local size.
    const auto at = base_set == s ? remove_local(l, baseline_.local) : std::nullopt;
    keep[s] = !l.empty();
    if (!keep[s]) continue;
    if (at) hole = std::pair(ids.size(), *at);
    ids.push_back(interner.id(l));
  }
  sets_.retain(keep);
  sets_.shrink_to_fit();
  lay_out(std::move(ids), hole);
  if (rule) rule_ = find(*rule);
}

std::optional<std::size_t> SearchSpace::baseline_set() const {
  const auto idx = indices_of(parameters_, baseline_.params);
  return idx ? sets_.find(*idx) : std::nullopt;
}

SearchSpace::SearchSpace(std::vector<TuningParameter> parameters, ParameterSets sets, std::vector<LocalSize> every_set,
                         Configuration baseline, const std::optional<Configuration>& rule)
    : parameters_(std::move(parameters)), sets_(std::move(sets)), baseline_(std::move(baseline)) {
  check_sets();
  if (every_set.empty()) sets_.retain(std::vector<bool>(sets_.size(), false));
  const std::optional<std::size_t> base_set = baseline_set();
  const auto b = std::find(every_set.begin(), every_set.end(), baseline_.local);
  std::optional<std::pair<std::size_t, std::size_t>> hole;
  if (base_set && b != every_set.end()) {
    if (every_set.size() == 1) {  // the baseline's set runs the baseline alone: left out
      std::vector<bool> keep(sets_.size(), true);
      keep[*base_set] = false;
      sets_.retain(keep);
    } else {
      hole = std::pair(*base_set, static_cast<std::size_t>(b - every_set.begin()));
    }
  }
  sets_.shrink_to_fit();
  lists_.push_back(std::move(every_set));
  per_set_ = lists_.front().size();
  if (hole) hole_ = hole->first * per_set_ + hole->second;
  size_ = sets_.size() * per_set_ - (hole_ ? 1 : 0);
  if (rule) rule_ = find(*rule);
}

void SearchSpace::check_sets() const {
  if (sets_.width() != parameters_.size()) throw std::invalid_argument("SearchSpace: sets over other parameters");
  for (std::size_t k = 0; k < parameters_.size(); ++k)
    if (sets_.sizes()[k] != parameters_[k].values.size())
      throw std::invalid_argument("SearchSpace: sets over other value counts");
  if (!sets_.sorted()) throw std::invalid_argument("SearchSpace: sets not in odometer order");
}

// The list every set runs, the baseline's set that list less the
// baseline's local size; nullopt when the sets run different lists.
std::optional<std::uint32_t> SearchSpace::one_list(const std::vector<std::uint32_t>& ids,
                                                   std::optional<std::pair<std::size_t, std::size_t>> hole) const {
  std::optional<std::uint32_t> common;
  for (std::size_t s = 0; s < ids.size(); ++s) {
    if (hole && hole->first == s) continue;
    if (common && ids[s] != *common) return std::nullopt;
    common = ids[s];
  }
  if (!hole || !common) return hole ? std::nullopt : common;  // the baseline's set alone: per-set tables
  std::vector<LocalSize> less = lists_[*common];
  if (hole->second >= less.size()) return std::nullopt;
  less.erase(less.begin() + static_cast<std::ptrdiff_t>(hole->second));
  return less == lists_[ids[hole->first]] ? common : std::nullopt;
}

// One list for all sets when they run one (nothing stored per set);
// otherwise the per-set tables.
void SearchSpace::lay_out(std::vector<std::uint32_t> ids, std::optional<std::pair<std::size_t, std::size_t>> hole) {
  const std::size_t n = ids.size();
  if (n == 0) return;  // no set, no configuration
  if (const auto common = one_list(ids, hole)) {
    lists_ = {std::move(lists_[*common])};
    per_set_ = lists_.front().size();
    if (hole) hole_ = hole->first * per_set_ + hole->second;
    size_ = n * per_set_ - (hole_ ? 1 : 0);
    return;
  }
  set_first_.resize(n + 1, 0);
  for (std::size_t s = 0; s < n; ++s) set_first_[s + 1] = set_first_[s] + lists_[ids[s]].size();
  size_ = set_first_[n];
  set_list_ = std::move(ids);
}

SearchSpace::Place SearchSpace::place(std::size_t i) const {
  if (i >= size_) throw std::out_of_range(fmt::format("configuration {} of a space of {}", i, size_));
  if (set_first_.empty()) {
    const std::size_t v = hole_ && i >= *hole_ ? i + 1 : i;
    return Place{v / per_set_, v % per_set_};
  }
  const auto it = std::upper_bound(set_first_.begin(), set_first_.end(), static_cast<std::uint64_t>(i));
  const auto s = static_cast<std::size_t>(it - set_first_.begin()) - 1;
  return Place{s, i - set_first_[s]};
}

const std::vector<LocalSize>& SearchSpace::list_of(std::size_t s) const {
  return set_first_.empty() ? lists_.front() : lists_[set_list_[s]];
}

const LocalSize& SearchSpace::local(std::size_t i) const {
  const Place p = place(i);
  return list_of(p.set)[p.pos];
}

std::size_t SearchSpace::parameter_set(std::size_t i) const {
  return place(i).set;
}

std::vector<std::uint32_t> SearchSpace::value_indices(std::size_t s) const {
  return sets_.row(s);
}

nlohmann::json SearchSpace::params_of_set(std::size_t s) const {
  nlohmann::json p = nlohmann::json::object();
  for (std::size_t k = 0; k < parameters_.size(); ++k) p[parameters_[k].name] = parameters_[k].values[sets_.at(s, k)];
  return p;
}

std::pair<std::size_t, std::size_t> SearchSpace::entries_of_set(std::size_t s) const {
  if (s >= sets_.size()) throw std::out_of_range(fmt::format("parameter set {} of {}", s, sets_.size()));
  if (!set_first_.empty()) return {set_first_[s], set_first_[s + 1]};
  auto real = [&](std::size_t v) { return hole_ && v > *hole_ ? v - 1 : v; };
  return {real(s * per_set_), real((s + 1) * per_set_)};
}

Configuration SearchSpace::at(std::size_t i) const {
  const Place p = place(i);
  return Configuration{params_of_set(p.set), list_of(p.set)[p.pos]};
}

std::optional<std::size_t> SearchSpace::find_set(const nlohmann::json& params) const {
  const auto idx = indices_of(parameters_, params);
  if (!idx) return std::nullopt;
  return sets_.find(*idx);
}

std::optional<std::size_t> SearchSpace::find(const Configuration& c) const {
  const auto s = find_set(c.params);
  if (!s) return std::nullopt;
  const auto [first, last] = entries_of_set(*s);
  for (std::size_t i = first; i < last; ++i)
    if (local(i) == c.local) return i;
  return std::nullopt;
}

std::size_t SearchSpace::memory_bytes() const noexcept {
  std::size_t b = sets_.memory_bytes() + set_first_.capacity() * sizeof(std::uint64_t) +
                  set_list_.capacity() * sizeof(std::uint32_t);
  for (const auto& l : lists_) b += l.capacity() * sizeof(LocalSize);
  return b;
}

std::vector<Extent> SearchSpace::shapes_of_set(std::size_t s) const {
  std::vector<Extent> out;
  const auto [first, last] = entries_of_set(s);
  for (std::size_t i = first; i < last; ++i)
    if (const LocalSize& l = local(i)) out.push_back(*l);
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
  const std::size_t set = parameter_set(i);
  const LocalSize& l = local(i);
  const std::vector<std::uint32_t> idx = sets_.row(set);
  std::vector<std::uint32_t> other = idx;
  for (std::size_t k = 0; k < parameters_.size(); ++k) {
    for (int dir : {-1, 1}) {
      if ((dir < 0 && idx[k] == 0) || (dir > 0 && idx[k] + 1 >= parameters_[k].values.size())) continue;
      other[k] = static_cast<std::uint32_t>(static_cast<int>(idx[k]) + dir);
      const auto s = sets_.find(other);
      other[k] = idx[k];
      if (s) out.push_back(with_local(*this, *s, l));
    }
  }
}

std::vector<std::size_t> SearchSpace::neighbours(std::size_t i) const {
  std::vector<std::size_t> out;
  if (local(i)) {
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
