#pragma once
/// @file rules.hpp
/// The paper's fixed rules for the local work size (1-D) and the group shape
/// (2-D), as pure functions over a search space (see search_space.hpp).
/// Source: paper §3.2.3; English reading in shared/paper/NOTES.md.

#include <cstddef>
#include <vector>

#include "wstune/types.hpp"

namespace wstune {

/// The 2-D rule keeps products strictly below this (paper §3.2.3, step 1).
inline constexpr std::size_t rule_product_limit = 1024;
/// The 2-D rule keeps products that are multiples of this (paper §3.2.3, step 1).
inline constexpr std::size_t rule_product_multiple = 16;

/// 1-D rule (paper §3.2.3): of the settable local sizes (`space`, 1-D
/// extents, e.g. from enumerate_local_sizes()) the smallest x ≥ pe_per_cu.
/// When none is that large the paper says nothing; wstune then takes the
/// largest settable x. std::nullopt only when `space` is empty.
LocalSize rule_1d(const std::vector<Extent>& space, std::size_t pe_per_cu);

/// 2-D rule (paper §3.2.3) over the settable shapes `space` (2-D extents):
/// 1. keep (dx, dy) with dx·dy < 1024 and a multiple of 16;
/// 2. x-priority: keep the largest dx; y-priority: the largest dy;
/// 3. take the largest product dx·dy.
/// If step 1 leaves nothing: x-priority → (largest settable dx, 1),
/// y-priority → (1, largest settable dy). Priority::none is read as x.
/// std::nullopt only when `space` has no shape to fall back to.
LocalSize rule_2d(const std::vector<Extent>& space, Priority priority);

/// rule_1d() for a 1-D `global`, rule_2d() for a 2-D one; nullopt for a 3-D
/// one (the paper has no 3-D rule).
LocalSize paper_rule(const Extent& global, const std::vector<Extent>& space, Priority priority, std::size_t pe_per_cu);

}  // namespace wstune
