// The space solver against brute force: on random small spaces with random
// constraints (truth tables over random parameter subsets, some entries
// throwing) it finds exactly the combinations the odometer loop over the
// Cartesian product keeps, in the same order, counts them, finds the first,
// and reports an error only where brute force meets one. Large spaces are
// solved without visiting their products. ParameterSets' rows, order and
// look-up.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <set>

#include "space/solver.hpp"
#include "wstune/error.hpp"

using namespace wstune;

namespace {

Constraint make(std::vector<std::uint32_t> params, std::function<bool(std::span<const std::uint32_t>)> holds) {
  Constraint c;
  c.params = std::move(params);
  c.holds = std::move(holds);
  return c;
}

// A random constraint: a truth table over its parameters' value indices;
// entries 'e' throw UsageError.
struct TableConstraint {
  std::vector<std::uint32_t> params;
  std::map<std::vector<std::uint32_t>, char> table;  // 't', 'f' or 'e'
};

struct RandomSpace {
  std::vector<std::uint32_t> sizes;
  std::vector<TableConstraint> constraints;
};

// Every combination of `sizes` in odometer order (the last varies fastest).
std::vector<std::vector<std::uint32_t>> product(const std::vector<std::uint32_t>& sizes) {
  std::vector<std::vector<std::uint32_t>> out;
  std::vector<std::uint32_t> idx(sizes.size(), 0);
  for (;;) {
    out.push_back(idx);
    std::size_t k = sizes.size();
    while (k > 0 && ++idx[k - 1] == sizes[k - 1]) idx[--k] = 0;
    if (k == 0) return out;
  }
}

char entry(const TableConstraint& c, const std::vector<std::uint32_t>& full) {
  std::vector<std::uint32_t> key;
  for (std::uint32_t p : c.params) key.push_back(full[p]);
  return c.table.at(key);
}

std::vector<Constraint> to_constraints(const RandomSpace& s) {
  std::vector<Constraint> out;
  for (const auto& c : s.constraints) {
    out.push_back(make(c.params, [table = c.table](std::span<const std::uint32_t> idx) {
      const char e = table.at(std::vector<std::uint32_t>(idx.begin(), idx.end()));
      if (e == 'e') throw UsageError("condition cannot be evaluated");
      return e == 't';
    }));
  }
  return out;
}

// Brute force as the old SearchSpace did it: each combination, each
// constraint in order until one is false; an error at the first throw.
struct Brute {
  std::vector<std::vector<std::uint32_t>> valid;
  bool error = false;
};
Brute brute_force(const RandomSpace& s) {
  Brute b;
  for (const auto& full : product(s.sizes)) {
    bool ok = true;
    for (const auto& c : s.constraints) {
      const char e = entry(c, full);
      if (e == 'e') {
        b.error = true;
        return b;
      }
      if (e == 'f') {
        ok = false;
        break;
      }
    }
    if (ok) b.valid.push_back(full);
  }
  return b;
}

rc::Gen<RandomSpace> random_space(bool errors) {
  return rc::gen::exec([errors] {
    RandomSpace s;
    const auto n = *rc::gen::inRange<std::size_t>(0, 6);
    for (std::size_t k = 0; k < n; ++k) s.sizes.push_back(*rc::gen::inRange<std::uint32_t>(1, 6));
    const auto m = *rc::gen::inRange<std::size_t>(0, 6);
    for (std::size_t c = 0; c < m; ++c) {
      TableConstraint t;
      for (std::uint32_t k = 0; k < n; ++k)
        if (*rc::gen::inRange(0, 3) == 0) t.params.push_back(k);
      std::vector<std::uint32_t> sub;
      for (std::uint32_t p : t.params) sub.push_back(s.sizes[p]);
      const int true_percent = *rc::gen::inRange(20, 95);
      for (const auto& key : product(sub)) {
        const int roll = *rc::gen::inRange(0, 100);
        t.table[key] = errors && roll < 4 ? 'e' : (roll < true_percent ? 't' : 'f');
      }
      s.constraints.push_back(std::move(t));
    }
    return s;
  });
}

std::vector<std::vector<std::uint32_t>> rows_of(const ParameterSets& p) {
  std::vector<std::vector<std::uint32_t>> out;
  for (std::size_t r = 0; r < p.size(); ++r) out.push_back(p.row(r));
  return out;
}

}  // namespace

RC_GTEST_PROP(SpaceSolver, FindsExactlyWhatBruteForceKeepsInOdometerOrder, ()) {
  const RandomSpace s = *random_space(false);
  const Brute b = brute_force(s);
  SpaceSolver solver(s.sizes, to_constraints(s));
  const ParameterSets sets = solver.solve();
  RC_ASSERT(rows_of(sets) == b.valid);
  RC_ASSERT(solver.count() == b.valid.size());
  const auto first = solver.first();
  RC_ASSERT(first.has_value() == !b.valid.empty());
  if (first) RC_ASSERT(*first == b.valid.front());
  std::set<std::vector<std::uint32_t>> streamed;
  solver.for_each([&](std::span<const std::uint32_t> idx) {
    RC_ASSERT(streamed.emplace(idx.begin(), idx.end()).second);  // each once
    return true;
  });
  RC_ASSERT(streamed == std::set<std::vector<std::uint32_t>>(b.valid.begin(), b.valid.end()));
}

RC_GTEST_PROP(SpaceSolver, ReportsAnErrorOnlyWhereBruteForceMeetsOne, ()) {
  const RandomSpace s = *random_space(true);
  const Brute b = brute_force(s);
  SpaceSolver solver(s.sizes, to_constraints(s));
  try {
    const ParameterSets sets = solver.solve();
    // No error met: the combinations are brute force's whenever it had no error either.
    if (!b.error) RC_ASSERT(rows_of(sets) == b.valid);
  } catch (const UsageError&) {
    RC_ASSERT(b.error);
  }
}

RC_GTEST_PROP(SpaceSolver, FixedValuesGiveTheCombinationsWithThem, ()) {
  const RandomSpace s = *random_space(false);
  RC_PRE(!s.sizes.empty());
  const auto k = *rc::gen::inRange<std::uint32_t>(0, static_cast<std::uint32_t>(s.sizes.size()));
  const auto v = *rc::gen::inRange<std::uint32_t>(0, s.sizes[k]);
  std::vector<std::vector<std::uint32_t>> want;
  for (const auto& r : brute_force(s).valid)
    if (r[k] == v) want.push_back(r);
  SpaceSolver solver(s.sizes, to_constraints(s));
  solver.fix(k, v);
  RC_ASSERT(rows_of(solver.solve()) == want);
}

TEST(SpaceSolver, AnErrorThatEarlierConditionsRuleOutIsNoError) {
  // B != 0 guards A % B: brute force never evaluates the second with B == 0.
  const Constraint guard = make({1}, [](std::span<const std::uint32_t> i) { return i[0] != 0; });
  const Constraint mod = make({0, 1}, [](std::span<const std::uint32_t> i) {
    if (i[1] == 0) throw UsageError("modulo by zero");
    return i[0] % i[1] == 0;
  });
  SpaceSolver ok({4, 3}, {guard, mod});
  EXPECT_EQ(ok.solve().size(), 6u);  // B = 1: A in 0..3; B = 2: A in {0, 2}
  // Without the guard brute force meets the error on (0, 0): so does the solver.
  SpaceSolver bad({4, 3}, {mod});
  EXPECT_THROW((void)bad.solve(), UsageError);
  // A guard after the condition: brute force meets the error first; the
  // solver applies the one-parameter guard before the search and need not.
  SpaceSolver late({4, 3}, {mod, guard});
  try {
    EXPECT_EQ(late.solve().size(), 6u);
  } catch (const UsageError&) {
  }
}

TEST(SpaceSolver, ABillionCombinationsAreNeverVisited) {
  // Nine parameters of ten values, each a multiple of the one before it:
  // 10^9 combinations, a few hundred valid; the search visits far fewer
  // nodes than the product (no combination is enumerated to be rejected).
  std::vector<std::uint32_t> sizes(9, 10);
  std::vector<Constraint> cs;
  for (std::uint32_t k = 1; k < 9; ++k)
    cs.push_back(make({k - 1, k}, [](std::span<const std::uint32_t> i) { return (i[1] + 1) % (i[0] + 1) == 0; }));
  SpaceSolver solver(sizes, cs);
  const ParameterSets sets = solver.solve();
  // Divisor chains of length 9 in 1..10, counted by dynamic programming.
  std::vector<std::uint64_t> chains(11, 1);
  for (int step = 1; step < 9; ++step) {
    std::vector<std::uint64_t> next(11, 0);
    for (int a = 1; a <= 10; ++a)
      for (int b = a; b <= 10; b += a) next[b] += chains[a];
    chains = next;
  }
  const std::uint64_t want = std::accumulate(chains.begin() + 1, chains.end(), std::uint64_t{0});
  EXPECT_EQ(sets.size(), want);
  EXPECT_EQ(solver.count(), want);
  EXPECT_LT(solver.stats().nodes, 100'000u);
  EXPECT_LE(solver.stats().evaluations, 8u * 100u) << "each pair of values is evaluated once";
  for (std::size_t r = 0; r < sets.size(); ++r)
    for (std::size_t k = 1; k < 9; ++k) ASSERT_EQ((sets.at(r, k) + 1) % (sets.at(r, k - 1) + 1), 0u);
}

TEST(SpaceSolver, ASearchOutOfTheParametersOrderStillGivesOdometerOrder) {
  // A == Y == Z with five free parameters between them: binding Y and Z
  // right after A prunes earlier (the solver's greedy order, estimated at
  // less than half the tree), and the rows found out of order are sorted.
  std::vector<std::uint32_t> sizes{10, 4, 4, 4, 4, 4, 10, 10};
  const std::vector<Constraint> cs{make({0, 6}, [](std::span<const std::uint32_t> i) { return i[0] == i[1]; }),
                                   make({6, 7}, [](std::span<const std::uint32_t> i) { return i[0] == i[1]; })};
  SpaceSolver solver(sizes, cs);
  const ParameterSets sets = solver.solve();
  std::vector<std::vector<std::uint32_t>> want;
  for (const auto& r : product(sizes))
    if (r[0] == r[6] && r[6] == r[7]) want.push_back(r);
  EXPECT_EQ(rows_of(sets), want);
  EXPECT_LT(solver.stats().nodes, 20'000u);
}

TEST(SpaceSolver, CountsWithoutHoldingAndSaturates) {
  // 20 unconstrained parameters of 10 values: 10^20 > 2^64 combinations.
  SpaceSolver huge(std::vector<std::uint32_t>(20, 10), {});
  EXPECT_EQ(huge.count(), ~std::uint64_t{0});
  // 12 parameters, one constraint on the first two: counted by multiplying the free tail.
  SpaceSolver tail(std::vector<std::uint32_t>(12, 10),
                   {make({0, 1}, [](std::span<const std::uint32_t> i) { return i[0] < i[1]; })});
  EXPECT_EQ(tail.count(), 45u * 10'000'000'000ull);
  EXPECT_LT(tail.stats().nodes, 100u);
}

TEST(SpaceSolver, ConstraintsOfNoParameterDecideOnce) {
  int calls = 0;
  const Constraint never = make({}, [&](std::span<const std::uint32_t>) {
    ++calls;
    return false;
  });
  SpaceSolver s({3, 3}, {never});
  EXPECT_TRUE(s.solve().empty());
  EXPECT_EQ(s.count(), 0u);
  EXPECT_FALSE(s.first());
  EXPECT_EQ(calls, 1);
  SpaceSolver none({}, {});
  EXPECT_EQ(none.solve().size(), 1u) << "no parameters: the one empty combination";
}

TEST(SpaceSolver, RefusesMalformedInput) {
  EXPECT_THROW(SpaceSolver({3, 0}, {}), std::invalid_argument);
  EXPECT_THROW(SpaceSolver({3, 3}, {make({1, 0}, {})}), std::invalid_argument);
  EXPECT_THROW(SpaceSolver({3, 3}, {make({2}, {})}), std::invalid_argument);
  SpaceSolver s({3}, {});
  EXPECT_THROW(s.fix(0, 3), std::invalid_argument);
}

// ---- ParameterSets ------------------------------------------------------------

TEST(ParameterSets, RowsOfOneTwoOrFourBytesSortAndFind) {
  for (std::uint32_t big : {7u, 300u, 70'000u}) {
    ParameterSets p({big, 3, big});
    EXPECT_EQ(p.index_bytes(), big <= 256 ? 1u : (big <= 65536 ? 2u : 4u));
    const std::vector<std::vector<std::uint32_t>> rows{{big - 1, 0, 5}, {0, 2, big - 1}, {0, 2, 1}, {3, 1, 0}};
    for (const auto& r : rows) p.push_back(r);
    EXPECT_FALSE(p.sorted());
    p.sort();
    ASSERT_TRUE(p.sorted());
    std::vector<std::vector<std::uint32_t>> want = rows;
    std::sort(want.begin(), want.end());
    for (std::size_t r = 0; r < want.size(); ++r) {
      EXPECT_EQ(p.row(r), want[r]);
      EXPECT_EQ(p.find(want[r]), std::optional<std::size_t>(r));
    }
    EXPECT_FALSE(p.find(std::vector<std::uint32_t>{1, 1, 1}));
    EXPECT_FALSE(p.find(std::vector<std::uint32_t>{1, 1})) << "wrong width";
    p.retain({true, false, true, false});
    EXPECT_EQ(p.size(), 2u);
    EXPECT_EQ(p.row(1), want[2]);
  }
}

TEST(ParameterSets, SortsBeyondTwoToTheSixtyFour) {
  ParameterSets p(std::vector<std::uint32_t>(21, 10));  // 10^21 combinations: rows sorted without ranks
  std::vector<std::uint32_t> a(21, 9), b(21, 0), c(21, 0);
  c[20] = 1;
  p.push_back(a);
  p.push_back(c);
  p.push_back(b);
  p.sort();
  EXPECT_EQ(p.row(0), b);
  EXPECT_EQ(p.row(1), c);
  EXPECT_EQ(p.row(2), a);
}

RC_GTEST_PROP(ParameterSets, SortIsTheOdometerOrder, ()) {
  const auto n = *rc::gen::inRange<std::size_t>(1, 5);
  std::vector<std::uint32_t> sizes;
  for (std::size_t k = 0; k < n; ++k) sizes.push_back(*rc::gen::inRange<std::uint32_t>(1, 400));
  std::set<std::vector<std::uint32_t>> rows;
  const auto m = *rc::gen::inRange<std::size_t>(0, 60);
  for (std::size_t r = 0; r < m; ++r) {
    std::vector<std::uint32_t> row;
    for (std::uint32_t s : sizes) row.push_back(*rc::gen::inRange<std::uint32_t>(0, s));
    rows.insert(row);
  }
  std::vector<std::vector<std::uint32_t>> shuffled(rows.begin(), rows.end());
  std::mt19937 rng(*rc::gen::arbitrary<std::uint32_t>());
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  ParameterSets p(sizes);
  for (const auto& r : shuffled) p.push_back(r);
  p.sort();
  RC_ASSERT(rows_of(p) == std::vector<std::vector<std::uint32_t>>(rows.begin(), rows.end()));
}
