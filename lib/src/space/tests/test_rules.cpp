// The paper's §3.2.3 rules and the search space: hand-worked cases and
// rapidcheck properties against brute force.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include "space/rules.hpp"
#include "space/search_space.hpp"

using namespace wstune;

namespace {

SpaceLimits device_limits(std::size_t max_wg, std::size_t max_item = 1024) {
  SpaceLimits l;
  l.max_work_group_size = max_wg;
  l.max_work_item_sizes = {max_item, max_item, max_item};
  return l;
}

Extent g2(std::size_t x, std::size_t y) {
  return Extent{x, y, 2};
}
Extent g1(std::size_t x) {
  return Extent{x, 1, 1};
}

LocalSize rule2(Extent g, const SpaceLimits& l, Priority p) {
  return rule_2d(enumerate_local_sizes(g, l), p);
}
LocalSize rule1(std::size_t g, const SpaceLimits& l, std::size_t pe) {
  return rule_1d(enumerate_local_sizes(g1(g), l), pe);
}

}  // namespace

TEST(Divisors, SmallNumbers) {
  EXPECT_EQ(divisors(1), (std::vector<std::size_t>{1}));
  EXPECT_EQ(divisors(12), (std::vector<std::size_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(divisors(13), (std::vector<std::size_t>{1, 13}));
  EXPECT_EQ(divisors(36), (std::vector<std::size_t>{1, 2, 3, 4, 6, 9, 12, 18, 36}));
  EXPECT_TRUE(divisors(0).empty());
  EXPECT_EQ(divisors(720720).size(), 240u);  // highly composite
}

TEST(SearchSpace, ShapesOfLocalSizeEight) {  // paper §2.3
  const auto space = enumerate_local_sizes(g2(64, 64), device_limits(1024));
  const auto s = shapes_of(8, space);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], g2(1, 8));
  EXPECT_EQ(s[1], g2(2, 4));
  EXPECT_EQ(s[2], g2(4, 2));
  EXPECT_EQ(s[3], g2(8, 1));
}

TEST(SearchSpace, RespectsKernelWorkGroupSizeAndItemSizes) {
  SpaceLimits l = device_limits(1024, 64);
  l.kernel_work_group_size = 128;
  const auto space = enumerate_local_sizes(g2(256, 256), l);
  for (const auto& e : space) {
    EXPECT_LE(e.count(), 128u);
    EXPECT_LE(e.x, 64u);
    EXPECT_LE(e.y, 64u);
  }
  EXPECT_NE(std::find(space.begin(), space.end(), g2(64, 2)), space.end());
  EXPECT_EQ(std::find(space.begin(), space.end(), g2(128, 1)), space.end());
}

TEST(SearchSpace, LocalMemoryMustFit) {
  SpaceLimits l = device_limits(1024);
  l.local_mem_bytes = 4096;
  l.kernel_local_mem_bytes = 1024;
  l.local_mem_per_item_bytes = 16;  // 1024 + 16·n ≤ 4096 → n ≤ 192
  const auto space = enumerate_local_sizes(g1(1024), l);
  ASSERT_FALSE(space.empty());
  EXPECT_EQ(space.back(), g1(128));
}

TEST(SearchSpace, ThreeDimensionsAgainstBruteForce) {  // OpenCL 1.2 §3.2: up to three dimensions
  SpaceLimits l = device_limits(64, 16);
  l.max_work_item_sizes = {16, 8, 4};
  const Extent g{12, 8, 6, 3};
  const auto space = enumerate_local_sizes(g, l);
  std::set<std::tuple<std::size_t, std::size_t, std::size_t>> want;
  for (std::size_t z = 1; z <= 6; ++z)
    for (std::size_t y = 1; y <= 8; ++y)
      for (std::size_t x = 1; x <= 12; ++x)
        if (12 % x == 0 && 8 % y == 0 && 6 % z == 0 && x <= 16 && y <= 8 && z <= 4 && x * y * z <= 64)
          want.emplace(x, y, z);
  std::set<std::tuple<std::size_t, std::size_t, std::size_t>> got;
  for (const auto& e : space) {
    EXPECT_EQ(e.dims, 3u);
    EXPECT_TRUE(fits(e, g, l));
    got.emplace(e.x, e.y, e.z);
  }
  EXPECT_EQ(got, want);
  EXPECT_FALSE(fits(Extent{4, 2, 1}, g, l));     // a 2-D shape cannot run a 3-D NDRange
  EXPECT_FALSE(fits(Extent{4, 2, 5, 3}, g, l));  // 5 does not divide 6
}

TEST(Rule2D, PaperSizeOnA1024Device) {  // NOTES.md: 512×1 (x), 1×512 (y) on the H100
  EXPECT_EQ(rule2(g2(1024, 1024), device_limits(1024), Priority::x), g2(512, 1));
  EXPECT_EQ(rule2(g2(1024, 1024), device_limits(1024), Priority::y), g2(1, 512));
}

TEST(Rule2D, DeviceWithMaxWorkGroupSize256) {
  EXPECT_EQ(rule2(g2(1024, 1024), device_limits(256), Priority::x), g2(256, 1));
  EXPECT_EQ(rule2(g2(1024, 1024), device_limits(256), Priority::y), g2(1, 256));
  // dy = 48 is the largest y; 48·dx ≤ 256 leaves dx ∈ {1, 2, 4}; the largest product is 192.
  EXPECT_EQ(rule2(g2(4096, 48), device_limits(256), Priority::y), g2(4, 48));
}

TEST(Rule2D, LargestProductAmongLargestDx) {
  // dx = 48 is the largest x; of 48·dy < 1024 the largest is 48·16 = 768.
  EXPECT_EQ(rule2(g2(48, 48), device_limits(1024), Priority::x), g2(48, 16));
  EXPECT_EQ(rule2(g2(48, 48), device_limits(1024), Priority::y), g2(16, 48));
  // Priority none on a 2-D range reads as x.
  EXPECT_EQ(rule2(g2(48, 48), device_limits(1024), Priority::none), g2(48, 16));
}

TEST(Rule2D, NoMultipleOf16FallsBack) {
  // 15 × 9: every divisor product is odd.
  EXPECT_EQ(rule2(g2(15, 9), device_limits(1024), Priority::x), g2(15, 1));
  EXPECT_EQ(rule2(g2(15, 9), device_limits(1024), Priority::y), g2(1, 9));
  // 6 × 6: products have at most 2^2.
  EXPECT_EQ(rule2(g2(6, 6), device_limits(1024), Priority::x), g2(6, 1));
  EXPECT_EQ(rule2(g2(6, 6), device_limits(1024), Priority::y), g2(1, 6));
}

TEST(Rule2D, MultipleOf16ExistsButNotAtLargestX) {
  // 1000 = 2^3·5^3 and 3: no product has 2^4, so fallback: largest dx ≤ 256 is 250.
  EXPECT_EQ(rule2(g2(1000, 3), device_limits(256), Priority::x), g2(250, 1));
  // 1000 × 2: only dx ∈ {8, 40, 200, 1000} with dy = 2 reach 2^4; 1000·2 ≥ 1024, so (200, 2).
  EXPECT_EQ(rule2(g2(1000, 2), device_limits(1024), Priority::x), g2(200, 2));
}

TEST(Rule2D, PrimeGlobalSizes) {
  EXPECT_EQ(rule2(g2(13, 17), device_limits(1024), Priority::x), g2(13, 1));
  EXPECT_EQ(rule2(g2(13, 17), device_limits(1024), Priority::y), g2(1, 17));
  EXPECT_EQ(rule2(g2(1009, 1013), device_limits(1024), Priority::x), g2(1009, 1));
  EXPECT_EQ(rule2(g2(1009, 1013), device_limits(256), Priority::x), g2(1, 1));
}

TEST(Rule1D, SmallestSettableAtLeastPePerCu) {
  EXPECT_EQ(rule1(1 << 18, device_limits(1024), 8), g1(8));
  EXPECT_EQ(rule1(1 << 18, device_limits(1024), 48), g1(64));  // Quadro 2000D: 48 PEs per CU
  EXPECT_EQ(rule1(1000, device_limits(1024), 48), g1(50));
  EXPECT_EQ(rule1(1000, device_limits(1024), 128), g1(200));
}

TEST(Rule1D, PrimeGlobalSizes) {
  EXPECT_EQ(rule1(1009, device_limits(1024), 8), g1(1009));
  // 1009 is above the limit 256: only 1 is settable, and it is the fallback.
  EXPECT_EQ(rule1(1009, device_limits(256), 8), g1(1));
  EXPECT_EQ(rule1(2, device_limits(256), 8), g1(2));
  EXPECT_EQ(rule1(1, device_limits(256), 8), g1(1));
}

TEST(Rules, EmptySpaceHasNoRule) {
  EXPECT_FALSE(rule_1d({}, 8));
  EXPECT_FALSE(rule_2d({}, Priority::x));
  EXPECT_EQ(paper_rule(g1(64), enumerate_local_sizes(g1(64), device_limits(1024)), Priority::none, 16), g1(16));
}

// ---- properties against brute force --------------------------------------------

namespace {

rc::Gen<std::size_t> interesting_size() {
  return rc::gen::oneOf(rc::gen::just<std::size_t>(1), rc::gen::element<std::size_t>(2, 3, 13, 127, 251, 509, 997),
                        rc::gen::element<std::size_t>(12, 60, 120, 360, 720, 840),
                        rc::gen::element<std::size_t>(64, 256, 512, 1024), rc::gen::inRange<std::size_t>(1, 1200));
}

std::vector<Extent> brute_force(const Extent& g, const SpaceLimits& l) {
  std::vector<Extent> out;
  const std::size_t ymax = g.dims == 2 ? g.y : 1;
  for (std::size_t y = 1; y <= ymax; ++y)
    for (std::size_t x = 1; x <= g.x; ++x) {
      if (g.x % x || (g.dims == 2 && g.y % y)) continue;
      if (x > l.max_work_item_sizes[0] || (g.dims == 2 && y > l.max_work_item_sizes[1])) continue;
      if (x * y > std::min(l.max_work_group_size, l.kernel_work_group_size)) continue;
      if (l.kernel_local_mem_bytes + l.local_mem_per_item_bytes * x * y > l.local_mem_bytes) continue;
      out.push_back(Extent{x, y, g.dims});
    }
  return out;
}

SpaceLimits random_limits() {
  SpaceLimits l;
  l.max_work_group_size = *rc::gen::element<std::size_t>(64, 256, 1000, 1024, 4096);
  l.kernel_work_group_size = *rc::gen::inRange<std::size_t>(1, 5000);
  l.max_work_item_sizes = {*rc::gen::inRange<std::size_t>(1, 2048), *rc::gen::inRange<std::size_t>(1, 2048), 64};
  l.local_mem_bytes = 65536;
  l.kernel_local_mem_bytes = *rc::gen::inRange<std::uint64_t>(0, 4096);
  l.local_mem_per_item_bytes = *rc::gen::element<std::uint64_t>(0, 4, 64);
  return l;
}

}  // namespace

RC_GTEST_PROP(SearchSpaceProperty, TwoDMatchesBruteForce, ()) {
  const Extent g{*interesting_size(), *interesting_size(), 2};
  const SpaceLimits l = random_limits();
  auto got = enumerate_local_sizes(g, l);
  auto want = brute_force(g, l);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  RC_ASSERT(got == want);
  for (const auto& e : got) RC_ASSERT(fits(e, g, l));
}

RC_GTEST_PROP(SearchSpaceProperty, OneDMatchesBruteForce, ()) {
  const Extent g{*interesting_size(), 1, 1};
  const SpaceLimits l = random_limits();
  auto got = enumerate_local_sizes(g, l);
  auto want = brute_force(g, l);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  RC_ASSERT(got == want);
}

RC_GTEST_PROP(RuleProperty, RuleShapeIsInTheSpaceAndFollowsStepOne, ()) {
  const Extent g{*interesting_size(), *interesting_size(), 2};
  const SpaceLimits l = random_limits();
  const auto space = enumerate_local_sizes(g, l);
  const Priority p = *rc::gen::element(Priority::x, Priority::y);
  const LocalSize r = rule_2d(space, p);
  RC_ASSERT(r.has_value() == !space.empty());
  if (!r) return;
  RC_ASSERT(std::find(space.begin(), space.end(), *r) != space.end());
  const bool any16 = std::any_of(space.begin(), space.end(), [](const Extent& e) {
    return e.count() < rule_product_limit && e.count() % rule_product_multiple == 0;
  });
  if (any16) {
    RC_ASSERT(r->count() < rule_product_limit && r->count() % rule_product_multiple == 0);
  } else {
    RC_ASSERT((p == Priority::x ? r->y : r->x) == 1u);
  }
}
