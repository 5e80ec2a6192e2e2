// The paper's §3.2.3 rules. Source: paper §3.2.3 (NOTES.md "Local work size
// and group shape").
#include "space/rules.hpp"

#include <algorithm>

namespace wstune {

LocalSize rule_1d(const std::vector<Extent>& space, std::size_t pe_per_cu) {
  LocalSize smallest_enough, largest;
  for (const auto& e : space) {
    if (e.y != 1) continue;
    if (!largest || e.x > largest->x) largest = Extent{e.x, 1, 1};
    if (e.x >= pe_per_cu && (!smallest_enough || e.x < smallest_enough->x)) smallest_enough = Extent{e.x, 1, 1};
  }
  return smallest_enough ? smallest_enough : largest;
}

LocalSize rule_2d(const std::vector<Extent>& space, Priority priority) {
  const bool ypri = priority == Priority::y;
  auto major = [&](const Extent& e) { return ypri ? e.y : e.x; };
  // Step 1.
  std::vector<Extent> kept;
  for (const auto& e : space) {
    const std::size_t n = e.count();
    if (n < rule_product_limit && n % rule_product_multiple == 0) kept.push_back(e);
  }
  if (kept.empty()) {
    // Fallback: (largest settable dx, 1) or (1, largest settable dy).
    LocalSize best;
    for (const auto& e : space) {
      if ((ypri ? e.x : e.y) != 1) continue;
      if (!best || major(e) > major(*best)) best = Extent{e.x, e.y, 2};
    }
    return best;
  }
  // Steps 2 and 3: the largest dx (dy), then the largest product.
  const auto it = std::max_element(kept.begin(), kept.end(), [&](const Extent& a, const Extent& b) {
    if (major(a) != major(b)) return major(a) < major(b);
    return a.count() < b.count();
  });
  return Extent{it->x, it->y, 2};
}

LocalSize paper_rule(const Extent& global, const std::vector<Extent>& space, Priority priority, std::size_t pe_per_cu) {
  if (global.dims == 3) return std::nullopt;  // the paper's rules are 1-D and 2-D
  return global.dims == 1 ? rule_1d(space, pe_per_cu) : rule_2d(space, priority);
}

}  // namespace wstune
