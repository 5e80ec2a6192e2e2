// Warm starts (make_seeded_searcher): the seeds come first, in order, once;
// seeds outside the space are skipped; then the inner strategy's proposals;
// the name stays the inner strategy's.
#include <gtest/gtest.h>

#include <set>

#include "search/search.hpp"
#include "space/rules.hpp"
#include "space/search_space.hpp"

using namespace wstune;

namespace {

SearchSpace space_of(const Extent& global) {
  SpaceLimits limits;
  limits.max_work_group_size = 256;
  limits.max_work_item_sizes = {256, 256, 256};
  return SearchSpace(enumerate_local_sizes(global, limits), std::nullopt);
}

TEST(SeededSearcher, ProposesTheValidSeedsFirstThenTheStrategy) {
  const Extent g{64, 64, 1, 2};
  const SearchSpace space = space_of(g);
  const auto none = nlohmann::json::object();
  const Configuration a{none, Extent{16, 4, 1, 2}}, b{none, Extent{8, 8, 1, 2}};
  const Configuration outside{none, Extent{3, 5, 1, 2}};  // 3 does not divide 64: not in the space
  auto s = make_seeded_searcher(make_random_searcher(7), {a, outside, b, a});
  EXPECT_EQ(s->name(), "random");
  TuneTarget target;
  target.global = g;
  s->initialize(space, target);
  const auto up = s->upcoming(2);
  ASSERT_EQ(up.size(), 2u);
  EXPECT_EQ(space.at(up[0]), a);
  auto first = s->next();
  ASSERT_TRUE(first);
  EXPECT_EQ(space.at(*first), a);
  Trial t;
  t.local = a.local;
  t.kernel.ms = {1.0};
  s->report(*first, t);
  auto second = s->next();
  ASSERT_TRUE(second);
  EXPECT_EQ(space.at(*second), b);
  s->report(*second, t);
  // Then the strategy's own order, over the whole space (as tune() does, an
  // entry proposed again is reported again without a measurement).
  std::set<std::size_t> seen{*first, *second};
  std::size_t repeats = 0;
  while (auto n = s->next()) {
    if (!seen.insert(*n).second) ++repeats;
    s->report(*n, t);
    ASSERT_LE(seen.size() + repeats, space.size() + 2);
  }
  EXPECT_EQ(seen.size(), space.size());
  EXPECT_LE(repeats, 2u);  // at most the two seeds, which the random order meets again
}

TEST(SeededSearcher, NoSeedsIsTheStrategyItself) {
  auto inner = make_random_searcher(7);
  Searcher* raw = inner.get();
  auto s = make_seeded_searcher(std::move(inner), {});
  EXPECT_EQ(s.get(), raw);
}

}  // namespace
