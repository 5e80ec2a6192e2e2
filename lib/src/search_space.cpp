#include "wstune/search_space.hpp"

#include <algorithm>
#include <limits>

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
    if (local[d] == 0 || global[d] == 0 || global[d] % local[d] != 0) return false;
    if (!within_item_size(local[d], d, limits)) return false;
  }
  const std::size_t n = local.count();
  return n <= limits.max_items() && lmem_fits(n, limits);
}

std::vector<Extent> enumerate_local_sizes(const Extent& global, const SpaceLimits& limits) {
  std::vector<Extent> out;
  if (global.count() == 0) return out;
  auto divisors_along = [&](unsigned d) {
    return global.dims > d ? divisors(global[d]) : std::vector<std::size_t>{1};
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

std::vector<Extent> shapes_of(std::size_t items, const std::vector<Extent>& space) {
  std::vector<Extent> out;
  for (const auto& e : space)
    if (e.count() == items) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const Extent& a, const Extent& b) { return a.x < b.x; });
  return out;
}

}  // namespace wstune
