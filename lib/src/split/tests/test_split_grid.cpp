// The grid oracle over the simplex of shares (split_grid.hpp), pure part:
// the enumeration covers every composition once, each split covers the whole
// range aligned to every device's granularity, and the finer grid stays
// within one coarse step of its center.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <numeric>
#include <set>

#include "split/split_grid.hpp"
#include "wstune/error.hpp"

using namespace wstune;

namespace {

std::size_t sum(const Shares& u) {
  return std::accumulate(u.begin(), u.end(), std::size_t{0});
}

std::size_t binomial(std::size_t n, std::size_t k) {
  std::size_t r = 1;
  for (std::size_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

}  // namespace

TEST(SimplexGrid, EveryCompositionOnceWithGranularityOne) {
  const SplitLattice l{100, {1, 1, 1}};
  const auto grid = simplex_grid(l, 10);
  EXPECT_EQ(grid.size(), binomial(12, 2));  // 66 splits in 10 % steps
  std::set<Shares> distinct(grid.begin(), grid.end());
  EXPECT_EQ(distinct.size(), grid.size());
  for (const auto& u : grid) {
    EXPECT_EQ(sum(u), 100u);
    for (auto v : u) EXPECT_EQ(v % 10, 0u);
  }
  EXPECT_EQ(grid.front(), (Shares{100, 0, 0}));  // first device's share descending
  EXPECT_EQ(grid.back(), (Shares{0, 0, 100}));
  EXPECT_TRUE(distinct.count({30, 30, 40}));
  EXPECT_TRUE(distinct.count({0, 50, 50}));
  // Four devices at 25 %: C(7, 3).
  EXPECT_EQ(simplex_grid(SplitLattice{100, {1, 1, 1, 1}}, 4).size(), binomial(7, 3));
  // Two devices: the sweep's 0 … 100 %.
  EXPECT_EQ(simplex_grid(SplitLattice{100, {1, 1}}, 20).size(), 21u);
}

TEST(SimplexGrid, SplitsAreAlignedToEachDevicesGranularity) {
  const SplitLattice l{1000, {16, 2, 1}};
  const auto grid = simplex_grid(l, 20);
  ASSERT_FALSE(grid.empty());
  for (const auto& u : grid) {
    EXPECT_TRUE(l.contains(u)) << u[0] << "/" << u[1] << "/" << u[2];
    EXPECT_EQ(sum(u), 1000u);
  }
  // A zero share stays zero: the subsets are part of the grid.
  EXPECT_NE(std::find(grid.begin(), grid.end(), Shares{0, 1000, 0}), grid.end());
  EXPECT_NE(std::find(grid.begin(), grid.end(), Shares{496, 0, 504}), grid.end());  // 50 % floored to 16s
}

TEST(SimplexGrid, FinerGridStaysWithinOneCoarseStep) {
  const SplitLattice l{200, {1, 1, 1}};
  const Shares center{60, 80, 60};                          // 30/40/30 %
  const auto fine = simplex_grid_around(l, center, 10, 2);  // 5 % steps within ±10 %
  EXPECT_NE(std::find(fine.begin(), fine.end(), center), fine.end());
  for (const auto& u : fine) {
    EXPECT_EQ(sum(u), 200u);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_LE(std::abs(static_cast<double>(u[i]) - static_cast<double>(center[i])), 20.0);
      EXPECT_EQ(u[i] % 10, 0u);
    }
  }
  // Compositions k with |k_i − c_i| ≤ 2 and Σ k = Σ c: 19 for three devices.
  EXPECT_EQ(fine.size(), 19u);
  // Near a corner the grid is cut by the simplex.
  const auto corner = simplex_grid_around(l, {200, 0, 0}, 10, 2);
  for (const auto& u : corner) EXPECT_GE(u[0], 160u);
  EXPECT_EQ(corner.size(), 6u);  // (20,0,0) (19,1,0) (19,0,1) (18,2,0) (18,1,1) (18,0,2)
}

TEST(SimplexGrid, BadInputIsAUsageError) {
  EXPECT_THROW((void)simplex_grid(SplitLattice{100, {}}, 10), UsageError);
  EXPECT_THROW((void)simplex_grid(SplitLattice{100, {1, 1}}, 0), UsageError);
  EXPECT_THROW((void)simplex_grid_around(SplitLattice{100, {1, 1}}, {50, 50}, 10, 0), UsageError);
  EXPECT_THROW((void)simplex_grid_around(SplitLattice{100, {1, 1}}, {50, 25, 25}, 10, 2), UsageError);
}

// For random lattices: every split sums to the range and is aligned; no
// split twice; with granularity 1 and a range divisible by the divisions,
// exactly C(d + N − 1, N − 1) splits.
RC_GTEST_PROP(SimplexGrid, CoversTheSimplexAligned, ()) {
  const auto n = *rc::gen::inRange<std::size_t>(1, 5);
  const auto d = *rc::gen::inRange<unsigned>(1, 12);
  SplitLattice l{*rc::gen::inRange<std::size_t>(1, 2000), {}};
  for (std::size_t i = 0; i < n; ++i) l.granularity.push_back(*rc::gen::element<std::size_t>(1, 2, 8, 16));
  const auto grid = simplex_grid(l, d);
  std::set<Shares> distinct;
  for (const auto& u : grid) {
    RC_ASSERT(l.contains(u));
    RC_ASSERT(distinct.insert(u).second);
  }
  const SplitLattice unit{std::size_t{d} * 7, std::vector<std::size_t>(n, 1)};
  RC_ASSERT(simplex_grid(unit, d).size() == binomial(d + n - 1, n - 1));
  if (!grid.empty()) {
    const auto m = *rc::gen::inRange<unsigned>(1, 4);
    for (const auto& u : simplex_grid_around(l, grid[grid.size() / 2], d, m)) RC_ASSERT(l.contains(u));
  }
}
