// SearchSpace's compact layouts (one list of local sizes for every set, with
// or without the baseline's hole; per-set lists; sets left out) against the
// plain list of configurations the old per-configuration layout held: same
// configurations at the same indices, each found at its index, sets and
// their entries consistent.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>

#include "space/search_space.hpp"

using namespace wstune;
using nlohmann::json;

namespace {

struct Case {
  std::vector<TuningParameter> params;
  std::vector<std::vector<std::uint32_t>> rows;  // odometer order
  std::vector<std::vector<LocalSize>> lists;     // per row
  Configuration baseline;
};

const std::vector<std::vector<LocalSize>> kPool{{std::nullopt, Extent{2, 1, 1}, Extent{4, 1, 1}},
                                                {Extent{8, 8, 1}},
                                                {std::nullopt},
                                                {},
                                                {Extent{1, 2, 1}, Extent{2, 1, 1}}};

rc::Gen<Case> random_case() {
  return rc::gen::exec([] {
    Case c;
    const auto n = *rc::gen::inRange<std::size_t>(1, 4);
    for (std::size_t k = 0; k < n; ++k) {
      TuningParameter p{"P" + std::to_string(k), "int", {}};
      const auto m = *rc::gen::inRange(1, 5);
      for (int v = 0; v < m; ++v) p.values.push_back(v * 3);
      c.params.push_back(p);
    }
    std::vector<std::uint32_t> idx(n, 0);
    const bool uniform = *rc::gen::arbitrary<bool>();
    const auto common = *rc::gen::inRange<std::size_t>(0, kPool.size());
    for (;;) {
      if (*rc::gen::inRange(0, 3) != 0) {
        c.rows.push_back(idx);
        c.lists.push_back(uniform ? kPool[common] : kPool[*rc::gen::inRange<std::size_t>(0, kPool.size())]);
      }
      std::size_t k = n;
      while (k > 0 && ++idx[k - 1] == c.params[k - 1].values.size()) idx[--k] = 0;
      if (k == 0) break;
    }
    json b = json::object();
    for (const auto& p : c.params) b[p.name] = p.values[*rc::gen::inRange<std::size_t>(0, p.values.size())];
    const auto& pick = kPool[*rc::gen::inRange<std::size_t>(0, kPool.size())];
    c.baseline = Configuration{b, pick.empty() ? LocalSize{} : pick.front()};
    return c;
  });
}

json params_of(const Case& c, const std::vector<std::uint32_t>& row) {
  json p = json::object();
  for (std::size_t k = 0; k < c.params.size(); ++k) p[c.params[k].name] = c.params[k].values[row[k]];
  return p;
}

// The old layout: one entry per configuration, in order, the baseline left
// out, a set without entries left out.
std::vector<Configuration> expected(const Case& c) {
  std::vector<Configuration> out;
  for (std::size_t r = 0; r < c.rows.size(); ++r)
    for (const LocalSize& l : c.lists[r]) {
      Configuration cfg{params_of(c, c.rows[r]), l};
      if (!(cfg == c.baseline)) out.push_back(cfg);
    }
  return out;
}

SearchSpace build(const Case& c) {
  std::vector<std::uint32_t> sizes;
  for (const auto& p : c.params) sizes.push_back(static_cast<std::uint32_t>(p.values.size()));
  ParameterSets sets(sizes);
  for (const auto& r : c.rows) sets.push_back(r);
  auto locals = [&](std::span<const std::uint32_t> idx, std::vector<LocalSize>& out) {
    const auto it = std::find(c.rows.begin(), c.rows.end(), std::vector<std::uint32_t>(idx.begin(), idx.end()));
    out = c.lists[static_cast<std::size_t>(it - c.rows.begin())];
  };
  return SearchSpace(c.params, std::move(sets), locals, c.baseline, std::nullopt);
}

// The same with one list for every set given once (every row's list is `every`).
SearchSpace build_uniform(const Case& c, const std::vector<LocalSize>& every) {
  std::vector<std::uint32_t> sizes;
  for (const auto& p : c.params) sizes.push_back(static_cast<std::uint32_t>(p.values.size()));
  ParameterSets sets(sizes);
  for (const auto& r : c.rows) sets.push_back(r);
  return SearchSpace(c.params, std::move(sets), every, c.baseline, std::nullopt);
}

}  // namespace

RC_GTEST_PROP(SearchSpace, CompactLayoutsHoldTheOldListOfConfigurations, ()) {
  const Case c = *random_case();
  const auto want = expected(c);
  const SearchSpace s = build(c);
  RC_ASSERT(s.size() == want.size());
  std::set<std::size_t> sets;
  for (std::size_t i = 0; i < want.size(); ++i) {
    RC_ASSERT(s.at(i) == want[i]);
    RC_ASSERT(s.local(i) == want[i].local);
    RC_ASSERT(s.find(want[i]) == std::optional<std::size_t>(i));
    const std::size_t set = s.parameter_set(i);
    RC_ASSERT(s.params_of_set(set) == want[i].params);
    const auto [first, last] = s.entries_of_set(set);
    RC_ASSERT(first <= i && i < last);
    RC_ASSERT(s.find_set(want[i].params) == std::optional<std::size_t>(set));
    sets.insert(set);
    for (std::size_t n : s.neighbours(i)) RC_ASSERT(n < s.size() && n != i);
  }
  RC_ASSERT(s.parameter_sets() == sets.size());
  RC_ASSERT(!s.find(c.baseline));
  // The sets' entries tile [0, size()) in order.
  std::size_t next = 0;
  for (std::size_t set = 0; set < s.parameter_sets(); ++set) {
    const auto [first, last] = s.entries_of_set(set);
    RC_ASSERT(first == next && last > first);
    next = last;
  }
  RC_ASSERT(next == s.size());
  // One list for every set, given once: the same space.
  if (!c.lists.empty() && std::all_of(c.lists.begin(), c.lists.end(), [&](const auto& l) { return l == c.lists[0]; })) {
    const SearchSpace u = build_uniform(c, c.lists[0]);
    RC_ASSERT(u.size() == s.size());
    RC_ASSERT(u.parameter_sets() == s.parameter_sets());
    for (std::size_t i = 0; i < s.size(); ++i) RC_ASSERT(u.at(i) == s.at(i));
  }
}

TEST(SearchSpace, OneListForEverySetStoresNothingPerSet) {
  // 1000 sets, the same three local sizes each, the baseline's entry left out.
  Case c;
  c.params = {TuningParameter{"A", "int", {}}, TuningParameter{"B", "int", {}}};
  for (int v = 0; v < 100; ++v) c.params[0].values.push_back(v);
  for (int v = 0; v < 10; ++v) c.params[1].values.push_back(v);
  for (std::uint32_t a = 0; a < 100; ++a)
    for (std::uint32_t b = 0; b < 10; ++b) {
      c.rows.push_back({a, b});
      c.lists.push_back(kPool[0]);
    }
  c.baseline = Configuration{json{{"A", 50}, {"B", 5}}, Extent{2, 1, 1}};
  const SearchSpace s = build(c);
  EXPECT_EQ(s.size(), 2999u);
  EXPECT_LE(s.memory_bytes(), 2 * 1000 + 3 * sizeof(LocalSize) + 64) << "two bytes a set and one list";
  const auto want = expected(c);
  for (std::size_t i = 0; i < want.size(); i += 37) EXPECT_EQ(s.at(i), want[i]);
  EXPECT_EQ(s.at(2998), want.back());
  EXPECT_THROW((void)s.at(2999), std::out_of_range);
}

TEST(SearchSpace, SetsMustMatchTheParameters) {
  const std::vector<TuningParameter> ps{TuningParameter{"A", "int", {1, 2}}};
  auto none = [](std::span<const std::uint32_t>, std::vector<LocalSize>& out) { out.emplace_back(std::nullopt); };
  EXPECT_THROW(SearchSpace(ps, ParameterSets({3}), none, Configuration{}, std::nullopt), std::invalid_argument);
  ParameterSets unsorted({2});
  unsorted.push_back(std::vector<std::uint32_t>{1});
  unsorted.push_back(std::vector<std::uint32_t>{0});
  EXPECT_THROW(SearchSpace(ps, std::move(unsorted), none, Configuration{}, std::nullopt), std::invalid_argument);
}
