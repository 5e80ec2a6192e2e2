// The online refinement of a two-device split (split_refine.hpp), as a pure
// search over synthetic makespan curves: the domain of aligned splits, the
// bracketing + golden-section search, its budget, the single-device
// endpoints it must beat, failures, noise, and the JSON form.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>

#include "wstune/error.hpp"
#include "wstune/split_refine.hpp"

using namespace wstune;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// A measuring step over a curve f(share of the first device), counting calls.
struct Curve {
  std::size_t total;
  std::function<double(double share)> f;
  std::vector<std::size_t> calls;
  std::function<double(std::size_t)> measure() {
    return [this](std::size_t u) {
      calls.push_back(u);
      return f(static_cast<double>(u) / static_cast<double>(total));
    };
  }
};

// The result is the best probe, or the better device alone when no split
// beats it by the margin.
void expect_best_of_probes(const RefineOutcome& o) {
  ASSERT_TRUE(o.found());
  const double margin = RefineOptions{}.alone_margin;
  for (const auto& p : o.probes) EXPECT_LE(o.makespan_ms * (1 - margin), p.makespan_ms) << p.units_first;
  if (o.best_alone_ms) {
    EXPECT_LE(o.makespan_ms, *o.best_alone_ms);
  }
  bool present = false;
  for (const auto& p : o.probes) present = present || (p.units_first == o.units_first && p.makespan_ms == o.makespan_ms);
  EXPECT_TRUE(present);
}

}  // namespace

TEST(RefineDomain, AlignedSplitsForBothDevices) {
  const RefineDomain d{100, 4, 6};  // u ≡ 0 (mod 4), 100 − u ≡ 0 (mod 6)
  EXPECT_EQ(d.step(), 12u);
  EXPECT_EQ(d.offset(), 4u);
  EXPECT_EQ(d.count(), 9u);  // 4, 16, …, 100
  for (std::size_t k = 0; k < d.count(); ++k) {
    EXPECT_EQ(d.units(k) % 4, 0u);
    EXPECT_EQ((100 - d.units(k)) % 6, 0u);
  }
  EXPECT_EQ(d.units(d.count() - 1), 100u);
  EXPECT_EQ(d.nearest(50), 4u);  // 52 is nearer than 40
  EXPECT_EQ(d.nearest(0), 0u);
  EXPECT_EQ(d.nearest(1000), 8u);
  EXPECT_EQ(d.nearest(46), 3u);  // tie between 40 and 52: the smaller

  const RefineDomain unit{10, 1, 1};
  EXPECT_EQ(unit.count(), 11u);
  EXPECT_EQ(unit.units(0), 0u);

  const RefineDomain none{5, 2, 2};  // an odd range cannot be cut into two even slices
  EXPECT_EQ(none.count(), 0u);
  EXPECT_THROW((void)none.nearest(2), UsageError);
  EXPECT_THROW((void)refine_split_search(none, 2, [](std::size_t) { return 1.0; }), UsageError);
}

// Issue #5's bilinear case: the model predicts 83 % for the first device,
// concurrent transfers share the host's memory bus, and the best split is
// 50/50. The search must get within 5 % of the optimum with 8 splits.
TEST(RefineSearch, FindsTheMinimumFarFromThePrediction) {
  Curve c{1024, [](double s) {
            const double first = 0.2 + 1.6 * s, second = 0.2 + 1.6 * (1 - s);
            const double bus = 0.3 * std::min(s, 1 - s);  // interference while both transfer
            return std::max(s > 0 ? first : 0.0, s < 1 ? second : 0.0) + bus;
          }, {}};
  const RefineOutcome o = refine_split_search(RefineDomain{1024, 1, 1}, 850, c.measure());
  expect_best_of_probes(o);
  const unsigned confirm = RefineOptions{}.confirm;
  EXPECT_LE(o.probes.size(), 8u + 2 * confirm);
  EXPECT_EQ(c.calls.size(), o.probes.size());
  EXPECT_EQ(o.probes.front().units_first, 850u);
  EXPECT_EQ(o.probes.front().role, "start");
  EXPECT_LE(o.makespan_ms, 1.05 * c.f(0.5));
  ASSERT_TRUE(o.best_alone_ms.has_value());
  EXPECT_DOUBLE_EQ(*o.best_alone_ms, 1.8);
  // Each split once, except the confirming re-measurements of the winner and
  // the better device alone.
  std::set<std::size_t> distinct;
  std::size_t confirms = 0;
  for (const auto& p : o.probes) {
    if (p.role == "confirm") {
      ++confirms;
      EXPECT_TRUE(p.units_first == o.units_first || p.units_first == 0 || p.units_first == 1024) << p.units_first;
    } else {
      EXPECT_TRUE(distinct.insert(p.units_first).second) << "measured twice: " << p.units_first;
    }
  }
  EXPECT_LE(distinct.size(), 8u);
  EXPECT_EQ(confirms, 2u * confirm);  // the 50/50 split beat both devices alone: confirmed
}

// The measured H100 curve of bilinear: the model's 83 % sits on a hill worse
// than either device alone, the valley is at 50 %. Golden-section narrowing
// next to the leading endpoint would miss it; while a device alone leads,
// the widest gap is bisected.
TEST(RefineSearch, ExploresBeyondAHillWhenADeviceAloneLeads) {
  Curve c{1024, [](double s) {
            if (s <= 0 || s >= 1) return 1.8;
            return 1.2 + 2.4 * (s - 0.5) * (s - 0.5) + 0.5 * std::exp(-std::pow((s - 0.85) / 0.06, 2));
          }, {}};
  ASSERT_GT(c.f(850.0 / 1024), 1.8);
  const RefineOutcome o = refine_split_search(RefineDomain{1024, 1, 1}, 850, c.measure(), {},
                                              std::make_pair(1.7, 1.8));
  expect_best_of_probes(o);
  EXPECT_LE(o.makespan_ms, 1.05 * 1.2);
  EXPECT_NE(std::find_if(o.probes.begin(), o.probes.end(), [](const RefineProbe& p) { return p.role == "explore"; }),
            o.probes.end());
}

// matmul on the H100: the GPU alone is best and the model says so; the
// search must keep 100 % and never measure the hopeless CPU alone.
TEST(RefineSearch, KeepsTheBetterDeviceAloneAndSkipsAHopelessEndpoint) {
  Curve c{1024, [](double s) { return s >= 1 ? 2.5 : std::max(2.5 * s, 320.0 * (1 - s)) + 0.4; }, {}};
  const RefineOutcome o = refine_split_search(RefineDomain{1024, 1, 1}, 1024, c.measure(), {},
                                              std::make_pair(2.5, 320.0));
  expect_best_of_probes(o);
  EXPECT_EQ(o.units_first, 1024u);
  EXPECT_DOUBLE_EQ(o.makespan_ms, 2.5);
  ASSERT_TRUE(o.best_alone_ms.has_value());
  EXPECT_DOUBLE_EQ(*o.best_alone_ms, 2.5);
  for (auto u : c.calls) EXPECT_NE(u, 0u) << "measured the second device alone although it is predicted 128x slower";
  // Without predictions both endpoints are measured.
  Curve c2 = c;
  c2.calls.clear();
  (void)refine_split_search(RefineDomain{1024, 1, 1}, 1024, c2.measure());
  EXPECT_NE(std::find(c2.calls.begin(), c2.calls.end(), 0u), c2.calls.end());
  // Within the margin (1.5x < 2x) both are measured, the predicted better one first.
  Curve c3 = c;
  c3.calls.clear();
  (void)refine_split_search(RefineDomain{1024, 1, 1}, 512, c3.measure(), {}, std::make_pair(3.0, 2.0));
  ASSERT_GE(c3.calls.size(), 3u);
  EXPECT_EQ(c3.calls[1], 0u);
  EXPECT_EQ(c3.calls[2], 1024u);
}

// Every split is worse than one device alone (e.g. the per-split overhead
// dominates): the result is that device alone, never a split measured worse.
TEST(RefineSearch, NeverWorseThanTheBestMeasuredSingleDevice) {
  Curve c{1000, [](double s) { return s <= 0 ? 1.0 : s >= 1 ? 3.0 : 1.5 + std::abs(s - 0.4); }, {}};
  const RefineOutcome o = refine_split_search(RefineDomain{1000, 1, 1}, 500, c.measure());
  expect_best_of_probes(o);
  EXPECT_EQ(o.units_first, 0u);
  ASSERT_TRUE(o.best_alone_ms.has_value());
  EXPECT_LE(o.makespan_ms, *o.best_alone_ms);
}

TEST(RefineSearch, BudgetIsAHardLimit) {
  Curve c{1000, [](double s) { return 1 + std::abs(s - 0.3); }, {}};
  RefineOptions opt;
  for (unsigned confirm : {0u, 2u}) {
    for (unsigned budget : {0u, 1u, 2u, 3u, 5u, 8u, 12u}) {
      c.calls.clear();
      opt.max_points = budget;
      opt.confirm = confirm;
      const RefineOutcome o = refine_split_search(RefineDomain{1000, 1, 1}, 700, c.measure(), opt);
      EXPECT_LE(o.probes.size(), budget + 2 * confirm);
      if (confirm == 0) {
        EXPECT_LE(o.probes.size(), budget);
      }
      EXPECT_EQ(c.calls.size(), o.probes.size());
      EXPECT_EQ(o.found(), budget > 0);
      if (budget == 1) {
        EXPECT_EQ(o.units_first, 700u);
        EXPECT_EQ(o.probes.size(), 1u);  // no endpoint measured: nothing to confirm against
      }
    }
  }
  // A large budget stops when no untried split is left next to the best,
  // which on a V-shaped curve is its exact minimum.
  opt.max_points = 40;
  opt.confirm = 0;
  Curve small{20, [](double s) { return 1 + std::abs(s - 0.3); }, {}};
  const RefineOutcome o = refine_split_search(RefineDomain{20, 1, 1}, 14, small.measure(), opt);
  EXPECT_LT(o.probes.size(), 21u);
  EXPECT_EQ(o.units_first, 6u);
}

// One lucky sample must not beat the better device alone: the winner is
// measured again against it and the medians decide.
TEST(RefineSearch, ConfirmationUndoesALuckySample) {
  int calls_at_half = 0;
  auto measure = [&](std::size_t u) {
    if (u == 0) return 1.0;              // the second device alone
    if (u == 500) return ++calls_at_half == 1 ? 0.5 : 1.2;  // lucky once, really 1.2
    return 1.5;
  };
  RefineOptions opt;
  opt.max_points = 3;
  const RefineOutcome o = refine_split_search(RefineDomain{1000, 1, 1}, 500, measure, opt);
  EXPECT_EQ(calls_at_half, 1 + static_cast<int>(opt.confirm));
  EXPECT_EQ(o.units_first, 0u);
  EXPECT_DOUBLE_EQ(o.makespan_ms, 1.0);
  ASSERT_TRUE(o.best_alone_ms.has_value());
  EXPECT_DOUBLE_EQ(*o.best_alone_ms, 1.0);
  EXPECT_EQ(o.probes.back().role, "confirm");
  // Without confirmation the lucky sample wins.
  calls_at_half = 0;
  opt.confirm = 0;
  EXPECT_EQ(refine_split_search(RefineDomain{1000, 1, 1}, 500, measure, opt).units_first, 500u);
}

TEST(RefineSearch, FailedSplitsAreNeverChosen) {
  // Splits below 30 % fail (NaN), the first device alone throws a wstune
  // error (e.g. a local size it cannot run): both are skipped, not fatal.
  Curve c{1000, [](double s) {
            if (s >= 1) throw Error("constraints");
            return s < 0.3 ? std::nan("") : 1 + std::abs(s - 0.45);
          }, {}};
  const RefineOutcome o = refine_split_search(RefineDomain{1000, 1, 1}, 800, c.measure());
  expect_best_of_probes(o);
  EXPECT_GE(o.units_first, 300u);
  EXPECT_LE(o.makespan_ms, 1.1);
  bool saw_failure = false;
  for (const auto& p : o.probes) saw_failure = saw_failure || std::isinf(p.makespan_ms);
  EXPECT_TRUE(saw_failure);
  // Only the endpoints that ran count as "alone": the second device alone failed (NaN).
  EXPECT_FALSE(o.best_alone_ms.has_value());
  // Other exceptions are bugs and propagate.
  EXPECT_THROW((void)refine_split_search(RefineDomain{10, 1, 1}, 5,
                                         [](std::size_t) -> double { throw std::logic_error("bug"); }),
               std::logic_error);
  // Nothing runs: nothing found.
  EXPECT_FALSE(refine_split_search(RefineDomain{10, 1, 1}, 5, [](std::size_t) { return -1.0; }).found());
}

TEST(RefineSearch, ProbesAreAlignedToBothGranularities) {
  Curve c{100, [](double s) { return 1 + std::abs(s - 0.37); }, {}};
  const RefineDomain d{100, 4, 6};
  const RefineOutcome o = refine_split_search(d, 77, c.measure());
  expect_best_of_probes(o);
  for (auto u : c.calls) {
    EXPECT_EQ(u % 4, 0u) << u;
    EXPECT_EQ((100 - u) % 6, 0u) << u;
  }
  EXPECT_EQ(o.probes.front().units_first, 76u);  // 77 snapped to the nearest aligned split
  EXPECT_NEAR(static_cast<double>(o.units_first), 37.0, 12.0);
}

// Measurement noise of ±4 % (deterministic pseudo-random): the true makespan
// of the chosen split stays within 10 % of the optimum for every seed.
TEST(RefineSearch, RobustToModerateNoise) {
  auto truth = [](double s) { return 1 + 1.5 * std::abs(s - 0.62); };
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    std::uint64_t state = seed * 0x9E3779B97F4A7C15ull;
    auto noise = [&] {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5) * 0.08;
    };
    const RefineOutcome o = refine_split_search(RefineDomain{4096, 2, 2}, 1200, [&](std::size_t u) {
      return truth(static_cast<double>(u) / 4096) * (1 + noise());
    });
    ASSERT_TRUE(o.found());
    EXPECT_LE(truth(static_cast<double>(o.units_first) / 4096), 1.10 * truth(0.62)) << "seed " << seed;
  }
}

TEST(RefineSearch, OptionsOutOfRangeAreUsageErrors) {
  RefineOptions bad;
  bad.initial_step = 0;
  EXPECT_THROW((void)refine_split_search(RefineDomain{10, 1, 1}, 5, [](std::size_t) { return 1.0; }, bad), UsageError);
  bad = {};
  bad.endpoint_margin = 0.5;
  EXPECT_THROW((void)refine_split_search(RefineDomain{10, 1, 1}, 5, [](std::size_t) { return 1.0; }, bad), UsageError);
}

TEST(RefineSearch, JsonRoundTrip) {
  RefineOutcome o;
  o.units_first = 12;
  o.makespan_ms = 1.25;
  o.best_alone_ms = 2.0;
  o.probes = {{12, 1.25, "start"}, {0, inf, "alone"}, {40, 2.0, "alone"}};
  const RefineOutcome back = refine_outcome_from_json(to_json(o));
  EXPECT_EQ(back.units_first, 12u);
  EXPECT_DOUBLE_EQ(back.makespan_ms, 1.25);
  EXPECT_EQ(back.best_alone_ms, 2.0);
  EXPECT_EQ(back.probes, o.probes);
  EXPECT_TRUE(to_json(o)["probes"][1]["makespan_ms"].is_null());
  RefineOutcome none;
  none.makespan_ms = inf;
  EXPECT_FALSE(refine_outcome_from_json(to_json(none)).found());
  EXPECT_FALSE(refine_outcome_from_json(to_json(none)).best_alone_ms.has_value());
}

// Invariants over random curves (unimodal or not), granularities and budgets.
RC_GTEST_PROP(RefineSearch, InvariantsHoldOnRandomCurves, ()) {
  const auto total = *rc::gen::inRange<std::size_t>(1, 5000);
  const auto g0 = *rc::gen::element<std::size_t>(1, 2, 8, 16);
  const auto g1 = *rc::gen::element<std::size_t>(1, 2, 4, 32);
  const RefineDomain d{total, g0, g1};
  RC_PRE(d.count() > 0);
  const auto budget = *rc::gen::inRange<unsigned>(0, 16);
  const auto coeffs = *rc::gen::container<std::vector<int>>(4, rc::gen::inRange(-100, 100));
  auto f = [&](double s) {  // a positive curve with up to three bumps
    return 5 + coeffs[0] / 50.0 * s + coeffs[1] / 100.0 * std::sin(coeffs[2] / 10.0 * s) +
           std::abs(s - (coeffs[3] + 100) / 200.0);
  };
  std::vector<std::size_t> calls;
  RefineOptions opt;
  opt.max_points = budget;
  const auto start = *rc::gen::inRange<std::size_t>(0, total + 1);
  const RefineOutcome o = refine_split_search(d, start, [&](std::size_t u) {
    calls.push_back(u);
    return f(static_cast<double>(u) / static_cast<double>(total));
  }, opt);
  RC_ASSERT(o.probes.size() <= budget + 2 * opt.confirm);
  RC_ASSERT(calls.size() == o.probes.size());
  std::set<std::size_t> distinct;
  for (const auto& p : o.probes) {
    if (p.role != "confirm") RC_ASSERT(distinct.insert(p.units_first).second);
  }
  RC_ASSERT(distinct.size() <= budget);
  for (auto u : calls) RC_ASSERT(u % g0 == 0 && (total - u) % g1 == 0 && u <= total);
  if (budget == 0) {
    RC_ASSERT(!o.found());
    return;
  }
  RC_ASSERT(o.found());
  // The best probe, or the better device alone within the margin of it.
  for (const auto& p : o.probes) RC_ASSERT(o.makespan_ms * (1 - opt.alone_margin) <= p.makespan_ms);
  if (o.best_alone_ms) {
    RC_ASSERT(o.makespan_ms <= *o.best_alone_ms);
    const bool alone = o.units_first == 0 || o.units_first == total;
    if (!alone) RC_ASSERT(o.makespan_ms < (1 - opt.alone_margin) * *o.best_alone_ms);
  }
}
