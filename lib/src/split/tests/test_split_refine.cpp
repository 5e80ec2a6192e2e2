// The online refinement of a split (split_refine.hpp), as a pure search
// over synthetic makespan functions. Two devices: the domain of aligned
// splits, the bracketing + golden-section search, its budget, the
// single-device endpoints it must beat, failures, noise (the behaviour of
// issue #5's two-device search, kept). Three and four devices: the lattice,
// balancing, lines, the choice of the device set, and the distance to the
// true optimum (brute force) of convex and piecewise makespans under noise.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>

#include "split/split_refine.hpp"
#include "wstune/error.hpp"

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

// The search on two devices, by the first device's slice.
RefineOutcome search2(const RefineDomain& d, std::size_t start_first, const std::function<double(std::size_t)>& f,
                      const RefineOptions& o = {}, std::optional<std::pair<double, double>> predicted = std::nullopt) {
  std::optional<std::vector<double>> p;
  if (predicted) p = std::vector<double>{predicted->first, predicted->second};
  return refine_split_search(
      SplitLattice{d.total_units, {d.granularity_first, d.granularity_second}},
      {start_first, d.total_units - std::min(start_first, d.total_units)},
      [&](const Shares& u) { return SplitMeasurement{f(u.at(0))}; }, o, p);
}

std::size_t first(const RefineOutcome& o) {
  return o.units.empty() ? 0 : o.units[0];
}

// The result is the best probe, or the better device alone when no split
// beats it by the margin.
void expect_best_of_probes(const RefineOutcome& o) {
  ASSERT_TRUE(o.found());
  const double margin = RefineOptions{}.alone_margin;
  for (const auto& p : o.probes) EXPECT_LE(o.makespan_ms * (1 - margin), p.makespan_ms) << p.units[0];
  if (o.best_alone_ms) {
    EXPECT_LE(o.makespan_ms, *o.best_alone_ms);
  }
  bool present = false;
  for (const auto& p : o.probes) present = present || (p.units == o.units && p.makespan_ms == o.makespan_ms);
  EXPECT_TRUE(present);
}

// Deterministic noise: a factor uniform in [1 − amp, 1 + amp].
struct Noise {
  std::uint64_t state;
  double amp;
  double operator()() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return 1 + (static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5) * 2 * amp;
  }
};

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
  EXPECT_THROW((void)search2(none, 2, [](std::size_t) { return 1.0; }), UsageError);
}

// Issue #5's bilinear case: the model predicts 83 % for the first device,
// concurrent transfers share the host's memory bus, and the best split is
// 50/50. The search must get within 5 % of the optimum with 8 splits.
TEST(RefineSearch, FindsTheMinimumFarFromThePrediction) {
  Curve c{1024,
          [](double s) {
            const double first = 0.2 + 1.6 * s, second = 0.2 + 1.6 * (1 - s);
            const double bus = 0.3 * std::min(s, 1 - s);  // interference while both transfer
            return std::max(s > 0 ? first : 0.0, s < 1 ? second : 0.0) + bus;
          },
          {}};
  const RefineOutcome o = search2(RefineDomain{1024, 1, 1}, 850, c.measure());
  expect_best_of_probes(o);
  const unsigned confirm = RefineOptions{}.confirm, candidates = RefineOptions{}.rivals + 1;
  EXPECT_LE(o.probes.size(), 8u + 2 * RefineOptions{}.rivals * confirm);
  EXPECT_EQ(c.calls.size(), o.probes.size());
  EXPECT_EQ(o.probes.front().units[0], 850u);
  EXPECT_EQ(o.probes.front().role, "start");
  EXPECT_LE(o.makespan_ms, 1.05 * c.f(0.5));
  ASSERT_TRUE(o.best_alone_ms.has_value());
  EXPECT_DOUBLE_EQ(*o.best_alone_ms, 1.8);
  // Each split once, except the confirming re-measurements of the best
  // splits (rivals) and the better device alone.
  std::set<std::size_t> distinct;
  std::size_t confirms = 0;
  for (const auto& p : o.probes) {
    if (p.role == "confirm") {
      ++confirms;
      EXPECT_TRUE(distinct.count(p.units[0])) << "confirmed a split never probed: " << p.units[0];
    } else {
      EXPECT_TRUE(distinct.insert(p.units[0]).second) << "measured twice: " << p.units[0];
    }
  }
  EXPECT_LE(distinct.size(), 8u);
  EXPECT_EQ(confirms, candidates * confirm);  // the 50/50 split beat both devices alone: confirmed
}

// The measured H100 curve of bilinear: the model's 83 % sits on a hill worse
// than either device alone, the valley is at 50 %. Golden-section narrowing
// next to the leading endpoint would miss it; while a device alone leads,
// the widest gap is bisected.
TEST(RefineSearch, ExploresBeyondAHillWhenADeviceAloneLeads) {
  Curve c{1024,
          [](double s) {
            if (s <= 0 || s >= 1) return 1.8;
            return 1.2 + 2.4 * (s - 0.5) * (s - 0.5) + 0.5 * std::exp(-std::pow((s - 0.85) / 0.06, 2));
          },
          {}};
  ASSERT_GT(c.f(850.0 / 1024), 1.8);
  const RefineOutcome o = search2(RefineDomain{1024, 1, 1}, 850, c.measure(), {}, std::make_pair(1.7, 1.8));
  expect_best_of_probes(o);
  EXPECT_LE(o.makespan_ms, 1.05 * 1.2);
  EXPECT_NE(std::find_if(o.probes.begin(), o.probes.end(), [](const RefineProbe& p) { return p.role == "explore"; }),
            o.probes.end());
}

// matmul on the H100: the GPU alone is best and the model says so; the
// search must keep 100 % and never measure the hopeless CPU alone.
TEST(RefineSearch, KeepsTheBetterDeviceAloneAndSkipsAHopelessEndpoint) {
  Curve c{1024, [](double s) { return s >= 1 ? 2.5 : std::max(2.5 * s, 320.0 * (1 - s)) + 0.4; }, {}};
  const RefineOutcome o = search2(RefineDomain{1024, 1, 1}, 1024, c.measure(), {}, std::make_pair(2.5, 320.0));
  expect_best_of_probes(o);
  EXPECT_EQ(first(o), 1024u);
  EXPECT_DOUBLE_EQ(o.makespan_ms, 2.5);
  ASSERT_TRUE(o.best_alone_ms.has_value());
  EXPECT_DOUBLE_EQ(*o.best_alone_ms, 2.5);
  for (auto u : c.calls) EXPECT_NE(u, 0u) << "measured the second device alone although it is predicted 128x slower";
  // Without predictions both endpoints are measured.
  Curve c2 = c;
  c2.calls.clear();
  (void)search2(RefineDomain{1024, 1, 1}, 1024, c2.measure());
  EXPECT_NE(std::find(c2.calls.begin(), c2.calls.end(), 0u), c2.calls.end());
  // Within the margin (1.5x < 2x) both are measured, the predicted better one first.
  Curve c3 = c;
  c3.calls.clear();
  (void)search2(RefineDomain{1024, 1, 1}, 512, c3.measure(), {}, std::make_pair(3.0, 2.0));
  ASSERT_GE(c3.calls.size(), 3u);
  EXPECT_EQ(c3.calls[1], 0u);
  EXPECT_EQ(c3.calls[2], 1024u);
}

// Every split is worse than one device alone (e.g. the per-split overhead
// dominates): the result is that device alone, never a split measured worse.
TEST(RefineSearch, NeverWorseThanTheBestMeasuredSingleDevice) {
  Curve c{1000, [](double s) { return s <= 0 ? 1.0 : s >= 1 ? 3.0 : 1.5 + std::abs(s - 0.4); }, {}};
  const RefineOutcome o = search2(RefineDomain{1000, 1, 1}, 500, c.measure());
  expect_best_of_probes(o);
  EXPECT_EQ(first(o), 0u);
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
      const RefineOutcome o = search2(RefineDomain{1000, 1, 1}, 700, c.measure(), opt);
      EXPECT_LE(o.probes.size(), budget + 2 * opt.rivals * confirm);
      if (confirm == 0) {
        EXPECT_LE(o.probes.size(), budget);
      }
      EXPECT_EQ(c.calls.size(), o.probes.size());
      EXPECT_EQ(o.found(), budget > 0);
      if (budget == 1) {
        EXPECT_EQ(first(o), 700u);
        EXPECT_EQ(o.probes.size(), 1u);  // no endpoint measured: nothing to confirm against
      }
    }
  }
  // A large budget stops when no untried split is left next to the best,
  // which on a V-shaped curve is its exact minimum.
  opt.max_points = 40;
  opt.confirm = 0;
  Curve small{20, [](double s) { return 1 + std::abs(s - 0.3); }, {}};
  const RefineOutcome o = search2(RefineDomain{20, 1, 1}, 14, small.measure(), opt);
  EXPECT_LT(o.probes.size(), 21u);
  EXPECT_EQ(first(o), 6u);
}

// One lucky sample must not beat the better device alone: the winner is
// measured again against it and the medians decide.
TEST(RefineSearch, ConfirmationUndoesALuckySample) {
  int calls_at_half = 0;
  auto measure = [&](std::size_t u) {
    if (u == 0) return 1.0;                                 // the second device alone
    if (u == 500) return ++calls_at_half == 1 ? 0.5 : 1.2;  // lucky once, really 1.2
    return 1.5;
  };
  RefineOptions opt;
  opt.max_points = 3;
  const RefineOutcome o = search2(RefineDomain{1000, 1, 1}, 500, measure, opt);
  EXPECT_EQ(calls_at_half, 1 + static_cast<int>(opt.confirm));
  EXPECT_EQ(first(o), 0u);
  EXPECT_DOUBLE_EQ(o.makespan_ms, 1.0);
  ASSERT_TRUE(o.best_alone_ms.has_value());
  EXPECT_DOUBLE_EQ(*o.best_alone_ms, 1.0);
  EXPECT_EQ(o.probes.back().role, "confirm");
  // Without confirmation the lucky sample wins.
  calls_at_half = 0;
  opt.confirm = 0;
  EXPECT_EQ(first(search2(RefineDomain{1000, 1, 1}, 500, measure, opt)), 500u);
}

TEST(RefineSearch, FailedSplitsAreNeverChosen) {
  // Splits below 30 % fail (NaN), the first device alone throws a wstune
  // error (e.g. a local size it cannot run): both are skipped, not fatal.
  Curve c{1000,
          [](double s) {
            if (s >= 1) throw Error("constraints");
            return s < 0.3 ? std::nan("") : 1 + std::abs(s - 0.45);
          },
          {}};
  const RefineOutcome o = search2(RefineDomain{1000, 1, 1}, 800, c.measure());
  expect_best_of_probes(o);
  EXPECT_GE(first(o), 300u);
  EXPECT_LE(o.makespan_ms, 1.1);
  bool saw_failure = false;
  for (const auto& p : o.probes) saw_failure = saw_failure || std::isinf(p.makespan_ms);
  EXPECT_TRUE(saw_failure);
  // Only the endpoints that ran count as "alone": the second device alone failed (NaN).
  EXPECT_FALSE(o.best_alone_ms.has_value());
  // Other exceptions are bugs and propagate.
  EXPECT_THROW((void)search2(RefineDomain{10, 1, 1}, 5, [](std::size_t) -> double { throw std::logic_error("bug"); }),
               std::logic_error);
  // Nothing runs: nothing found.
  EXPECT_FALSE(search2(RefineDomain{10, 1, 1}, 5, [](std::size_t) { return -1.0; }).found());
}

TEST(RefineSearch, ProbesAreAlignedToBothGranularities) {
  Curve c{100, [](double s) { return 1 + std::abs(s - 0.37); }, {}};
  const RefineDomain d{100, 4, 6};
  const RefineOutcome o = search2(d, 77, c.measure());
  expect_best_of_probes(o);
  for (auto u : c.calls) {
    EXPECT_EQ(u % 4, 0u) << u;
    EXPECT_EQ((100 - u) % 6, 0u) << u;
  }
  EXPECT_EQ(o.probes.front().units[0], 76u);  // 77 snapped to the nearest aligned split
  EXPECT_NEAR(static_cast<double>(first(o)), 37.0, 12.0);
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
    const RefineOutcome o = search2(RefineDomain{4096, 2, 2}, 1200, [&](std::size_t u) {
      return truth(static_cast<double>(u) / 4096) * (1 + noise());
    });
    ASSERT_TRUE(o.found());
    EXPECT_LE(truth(static_cast<double>(first(o)) / 4096), 1.10 * truth(0.62)) << "seed " << seed;
  }
}

TEST(RefineSearch, OptionsOutOfRangeAreUsageErrors) {
  RefineOptions bad;
  bad.initial_step = 0;
  EXPECT_THROW((void)search2(
                   RefineDomain{10, 1, 1}, 5, [](std::size_t) { return 1.0; }, bad),
               UsageError);
  bad = {};
  bad.endpoint_margin = 0.5;
  EXPECT_THROW((void)search2(
                   RefineDomain{10, 1, 1}, 5, [](std::size_t) { return 1.0; }, bad),
               UsageError);
}

TEST(RefineSearch, JsonRoundTrip) {
  RefineOutcome o;
  o.units = {12, 28, 0};
  o.makespan_ms = 1.25;
  o.best_alone_ms = 2.0;
  o.best_alone_device = 2;
  o.probes = {{{12, 28, 0}, 1.25, "start"}, {{40, 0, 0}, inf, "alone"}, {{0, 0, 40}, 2.0, "alone"}};
  const RefineOutcome back = refine_outcome_from_json(to_json(o));
  EXPECT_EQ(back.units, o.units);
  EXPECT_EQ(back.devices(), (std::vector<std::size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(back.makespan_ms, 1.25);
  EXPECT_EQ(back.best_alone_ms, 2.0);
  EXPECT_EQ(back.best_alone_device, 2u);
  EXPECT_EQ(back.probes, o.probes);
  EXPECT_TRUE(to_json(o)["probes"][1]["makespan_ms"].is_null());
  RefineOutcome none;
  none.makespan_ms = inf;
  EXPECT_FALSE(refine_outcome_from_json(to_json(none)).found());
  EXPECT_FALSE(refine_outcome_from_json(to_json(none)).best_alone_ms.has_value());
  EXPECT_FALSE(refine_outcome_from_json(to_json(none)).best_alone_device.has_value());
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
  const RefineOutcome o = search2(
      d, start,
      [&](std::size_t u) {
        calls.push_back(u);
        return f(static_cast<double>(u) / static_cast<double>(total));
      },
      opt);
  RC_ASSERT(o.probes.size() <= budget + 2 * opt.rivals * opt.confirm);
  RC_ASSERT(calls.size() == o.probes.size());
  std::set<std::size_t> distinct;
  for (const auto& p : o.probes) {
    if (p.role != "confirm") RC_ASSERT(distinct.insert(p.units[0]).second);
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
    const bool alone = first(o) == 0 || first(o) == total;
    if (!alone) RC_ASSERT(o.makespan_ms < (1 - opt.alone_margin) * *o.best_alone_ms);
  }
}

// ---- three and four devices ------------------------------------------------------------

TEST(SplitLattice, ContainsSnapsAndAlone) {
  const SplitLattice l{100, {1, 4, 6}};
  EXPECT_EQ(l.size(), 3u);
  EXPECT_TRUE(l.contains({10, 48, 42}));
  EXPECT_FALSE(l.contains({10, 47, 43}));  // 47 is no multiple of 4
  EXPECT_FALSE(l.contains({10, 48, 36}));  // sums to 94
  EXPECT_FALSE(l.contains({52, 48}));      // two slices for three devices
  EXPECT_EQ(l.alone(2), (Shares{0, 0, 100}));
  EXPECT_TRUE(l.contains(l.alone(1)));   // 100 is a multiple of 4 ...
  EXPECT_FALSE(l.contains(l.alone(2)));  // ... but not of 6
  EXPECT_TRUE(SplitLattice({100, {1, 4}}).contains({0, 100}));
  const Shares s = l.snap({33, 33, 34});
  EXPECT_TRUE(l.contains(s));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(static_cast<double>(s[i]), 33.3, 6.0);
  // align_blocks gives the first device 80 and cannot place the last 2 units;
  // the pair fallback finds 76 + 24.
  EXPECT_EQ(SplitLattice({100, {4, 6}}).snap({77, 23}), (Shares{76, 24}));
  EXPECT_THROW((void)SplitLattice({5, {2, 2}}).snap({2, 3}), UsageError);  // odd range, even slices
  EXPECT_THROW((void)l.snap({50, 50}), UsageError);                        // wrong size
  EXPECT_EQ(device_set({0, 5, 0, 7}), (std::vector<std::size_t>{1, 3}));
  const auto blocks = shares_blocks(1, {3, 0, 7});
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[1], (Block{1, 3, 3}));
  EXPECT_EQ(blocks[2], (Block{1, 3, 10}));
  EXPECT_EQ(block_units(blocks), (Shares{3, 0, 7}));
  EXPECT_EQ(percent_text({3, 0, 7}, 10), "30.0/0.0/70.0");
  EXPECT_EQ(percent_text({0, 0}, 0), "0.0/0.0");
  EXPECT_EQ(refine_points(2), 8u);
  EXPECT_EQ(refine_points(3), 18u);
  EXPECT_EQ(refine_points(4), 28u);
}

namespace {

// A synthetic machine: device i needs time(i, share) for its slice (0 when
// unused); every further device used slows all by `interference`; the host
// adds `host(units)` after the slowest device. Brute force gives the truth.
struct Machine {
  std::size_t total = 0;
  std::vector<std::function<double(double share)>> time;
  double interference = 0;
  std::function<double(const Shares&)> host;

  std::vector<double> times(const Shares& u) const {
    const double slow = 1 + interference * static_cast<double>(device_set(u).size() - 1);
    std::vector<double> t;
    for (std::size_t i = 0; i < u.size(); ++i) {
      t.push_back(u[i] ? time[i](static_cast<double>(u[i]) / static_cast<double>(total)) * slow : 0.0);
    }
    return t;
  }
  double makespan(const Shares& u) const {
    const auto t = times(u);
    return *std::max_element(t.begin(), t.end()) + (host ? host(u) : 0.0);
  }
  // The smallest makespan over every split (granularity 1).
  double optimum() const {
    double best = inf;
    Shares u(time.size(), 0);
    std::function<void(std::size_t, std::size_t)> place = [&](std::size_t i, std::size_t left) {
      if (i + 1 == u.size()) {
        u[i] = left;
        best = std::min(best, makespan(u));
        return;
      }
      for (std::size_t v = 0; v <= left; ++v) {
        u[i] = v;
        place(i + 1, left - v);
      }
    };
    place(0, total);
    return best;
  }
  double best_alone() const {
    double best = inf;
    for (std::size_t i = 0; i < time.size(); ++i) {
      best = std::min(best, makespan(SplitLattice{total, std::vector<std::size_t>(time.size(), 1)}.alone(i)));
    }
    return best;
  }
  // The search from equal shares (a poor model), noisy measurements: each
  // device's time and the makespan get their own factor in [1 − amp, 1 + amp].
  RefineOutcome search(std::uint64_t seed, double amp, const RefineOptions& o, bool with_times = true) const {
    Noise noise{seed * 0x9E3779B97F4A7C15ull, amp};
    const std::size_t n = time.size();
    Shares start(n, total / n);
    start[0] += total - start[0] * n;
    return refine_split_search(
        SplitLattice{total, std::vector<std::size_t>(n, 1)}, start,
        [&](const Shares& u) {
          auto t = times(u);
          for (auto& v : t) v *= noise();
          const double m = makespan(u) * noise();
          return with_times ? SplitMeasurement{m, t} : SplitMeasurement{m};
        },
        o);
  }
};

std::function<double(double)> linear(double fixed_ms, double ms_for_all) {
  return [=](double s) { return fixed_ms + ms_for_all * s; };
}

// Sort-like: the slice is padded to a power of two (of 1/256 of the range).
std::function<double(double)> padded(double fixed_ms, double ms_for_all) {
  return [=](double s) { return fixed_ms + ms_for_all * std::exp2(std::ceil(std::log2(s * 256))) / 256; };
}

// A cliff: beyond `knee` of the range the slice no longer fits the cache.
std::function<double(double)> kinked(double ms_for_all, double knee) {
  return [=](double s) { return 0.05 + ms_for_all * (s <= knee ? s : knee + 3 * (s - knee)); };
}

// Over `seeds` noisy searches: the worst and mean ratio of the chosen split's
// true makespan to the optimum; the budget of distinct splits holds.
std::pair<double, double> ratios_to_optimum(const Machine& m, double amp, int seeds) {
  const double opt = m.optimum();
  const RefineOptions o{.max_points = refine_points(m.time.size())};
  double worst = 0, sum = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const RefineOutcome out = m.search(static_cast<std::uint64_t>(seed), amp, o);
    EXPECT_TRUE(out.found());
    std::set<Shares> distinct;
    for (const auto& p : out.probes) {
      if (p.role != "confirm") {
        EXPECT_TRUE(distinct.insert(p.units).second);
      }
    }
    EXPECT_LE(distinct.size(), o.max_points);
    const double r = m.makespan(out.units) / opt;
    worst = std::max(worst, r);
    sum += r;
  }
  return {worst, sum / seeds};
}

}  // namespace

// Convex makespans (the max of linear device times, interference between
// devices) of two, three and four devices, from equal shares, with ±3 %
// noise on every measured time: the chosen split's true makespan is within
// 6 % of the brute-force optimum for every seed and within 2 % on average,
// within the default budget (8 splits for two, 18 for three, 28 for four).
TEST(RefineSearchN, ConvexMakespansOfTwoToFourDevicesUnderNoise) {
  const std::vector<Machine> machines{
      {300, {linear(0.1, 3), linear(0.2, 1)}, 0.1, {}},
      {300, {linear(0.1, 4), linear(0.1, 2), linear(0.1, 1)}, 0, {}},
      {300, {linear(0.1, 3), linear(0.2, 2), linear(0.3, 1.5)}, 0.1, {}},
      {300, {linear(0.1, 1), linear(0.1, 1), linear(0.5, 20)}, 0, {}},  // a hopeless third device
      {96, {linear(0.1, 1), linear(0.1, 1.3), linear(0.2, 2), linear(0.3, 5)}, 0.05, {}}};
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const auto [worst, mean] = ratios_to_optimum(machines[i], 0.03, 30);
    EXPECT_LE(worst, 1.06) << "machine " << i;
    EXPECT_LE(mean, 1.02) << "machine " << i;
  }
}

// Piecewise makespans: sort-like padding to powers of two (three devices)
// and a cache cliff (four devices).
TEST(RefineSearchN, PiecewiseMakespansUnderNoise) {
  const Machine pow2{256, {padded(0.1, 1), padded(0.1, 1.5), padded(0.1, 3)}, 0, {}};
  const Machine cliff{96, {kinked(1, 0.3), kinked(1.2, 0.25), kinked(2, 0.4), kinked(3, 0.5)}, 0.05, {}};
  for (const Machine* m : {&pow2, &cliff}) {
    const auto [worst, mean] = ratios_to_optimum(*m, 0.03, 30);
    EXPECT_LE(worst, 1.06);
    EXPECT_LE(mean, 1.02);
  }
}

// Without each device's time the search still improves on equal shares by
// lines alone; with them, balancing reaches the optimum of a separable
// makespan without noise.
TEST(RefineSearchN, BalancesDeviceTimes) {
  const Machine m{300, {linear(0.1, 4), linear(0.1, 2), linear(0.1, 1)}, 0, {}};
  const RefineOptions o{.max_points = refine_points(3)};
  const RefineOutcome with = m.search(1, 0, o);
  EXPECT_LE(m.makespan(with.units), 1.01 * m.optimum());
  EXPECT_NE(std::find_if(with.probes.begin(), with.probes.end(), [](const auto& p) { return p.role == "balance"; }),
            with.probes.end());
  const RefineOutcome without = m.search(1, 0, o, false);
  EXPECT_LT(m.makespan(without.units), m.makespan({100, 100, 100}));
  for (const auto& p : without.probes) EXPECT_NE(p.role, "balance");
}

// The choice of the device set: a third device that slows the others on the
// host's bus (its shares' interference outweighs its work) is dropped.
TEST(RefineSearchN, DropsADeviceThatSlowsTheOthers) {
  const Machine m{300, {linear(0.05, 0.6), linear(0.05, 0.6), linear(0.05, 2)}, 0, [](const Shares& u) {
                    double s = 0;
                    for (auto v : u) s += v / 300.0 * (1 - v / 300.0);
                    return 0.4 * s;
                  }};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const RefineOutcome o = m.search(seed, 0.01, RefineOptions{.max_points = refine_points(3)});
    EXPECT_EQ(o.devices(), (std::vector<std::size_t>{0, 1})) << "seed " << seed;
    EXPECT_LE(m.makespan(o.units), 1.03 * m.optimum()) << "seed " << seed;
  }
}

// Transfer-bound jobs (every device's share crosses one shared bus, each
// further device costs the host a fixed time) and any other machine: the
// chosen split is never more than 3 % slower than the best single device,
// under ±1 % noise, for 2 to 4 devices.
RC_GTEST_PROP(RefineSearchN, NeverMoreThanThreePercentSlowerThanTheBestSingleDevice, ()) {
  const auto n = *rc::gen::inRange<std::size_t>(2, 5);
  const std::size_t total = n == 4 ? 64 : 120;
  Machine m{total, {}, *rc::gen::inRange(0, 30) / 100.0, {}};
  for (std::size_t i = 0; i < n; ++i) {
    m.time.push_back(linear(*rc::gen::inRange(1, 50) / 100.0, *rc::gen::inRange(1, 300) / 100.0));
  }
  const double bus = *rc::gen::inRange(0, 200) / 100.0, per_device = *rc::gen::inRange(0, 100) / 100.0;
  m.host = [=](const Shares& u) { return bus + per_device * static_cast<double>(device_set(u).size() - 1); };
  const auto seed = *rc::gen::inRange<std::uint64_t>(1, 1000);
  const RefineOutcome o = m.search(seed, 0.01, RefineOptions{.max_points = refine_points(n)});
  RC_ASSERT(o.found());
  RC_ASSERT(m.makespan(o.units) <= 1.03 * m.best_alone());
  RC_ASSERT(o.best_alone_ms.has_value());
  RC_ASSERT(o.makespan_ms <= *o.best_alone_ms);
}

// Endpoints for three devices: a device predicted more than endpoint_margin
// slower than the fastest is not measured alone; the others are measured
// fastest first.
TEST(RefineSearchN, MeasuresOnlyTheDevicesAloneThatCanWin) {
  std::vector<Shares> calls;
  auto measure = [&](const Shares& u) {
    calls.push_back(u);
    return SplitMeasurement{1.0 + 0.01 * static_cast<double>(calls.size())};
  };
  (void)refine_split_search(SplitLattice{90, {1, 1, 1}}, {30, 30, 30}, measure, {},
                            std::vector<double>{1.5, 1.0, 10.0});
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls[0], (Shares{30, 30, 30}));
  EXPECT_EQ(calls[1], (Shares{0, 90, 0}));
  EXPECT_EQ(calls[2], (Shares{90, 0, 0}));
  EXPECT_EQ(std::find(calls.begin(), calls.end(), Shares{0, 0, 90}), calls.end());
}

TEST(RefineSearchN, BadInputIsAUsageError) {
  const SplitLattice l{90, {1, 1, 1}};
  auto one = [](const Shares&) { return SplitMeasurement{1.0}; };
  EXPECT_THROW((void)refine_split_search(l, {45, 45}, one), UsageError);
  EXPECT_THROW((void)refine_split_search(l, {30, 30, 30}, one, {}, std::vector<double>{1, 2}), UsageError);
  for (auto bad : std::vector<std::function<void(RefineOptions&)>>{
           [](RefineOptions& o) { o.rivals = 0; }, [](RefineOptions& o) { o.line_points = 0; },
           [](RefineOptions& o) { o.subset_margin = 1; }, [](RefineOptions& o) { o.step_shrink = 0; },
           [](RefineOptions& o) { o.balance_tolerance = 1; }, [](RefineOptions& o) { o.alone_margin = -0.1; }}) {
    RefineOptions o;
    bad(o);
    EXPECT_THROW((void)refine_split_search(l, {30, 30, 30}, one, o), UsageError);
  }
}

// Invariants over random makespans, device counts, granularities and budgets.
RC_GTEST_PROP(RefineSearchN, InvariantsHoldOnRandomMakespans, ()) {
  const auto n = *rc::gen::inRange<std::size_t>(2, 5);
  SplitLattice l{*rc::gen::inRange<std::size_t>(1, 600), {}};
  for (std::size_t i = 0; i < n; ++i) l.granularity.push_back(*rc::gen::element<std::size_t>(1, 2, 4, 8));
  const auto coeffs = *rc::gen::container<std::vector<int>>(2 * n, rc::gen::inRange(1, 100));
  auto measure = [&](const Shares& u) {
    RC_ASSERT(l.contains(u));
    std::vector<double> t;
    for (std::size_t i = 0; i < n; ++i) {
      const double s = static_cast<double>(u[i]) / static_cast<double>(l.total_units);
      t.push_back(u[i] ? coeffs[2 * i] / 100.0 + coeffs[2 * i + 1] / 10.0 * s + 0.3 * std::sin(20 * s) + 0.3 : 0);
    }
    return SplitMeasurement{*std::max_element(t.begin(), t.end()), t};
  };
  Shares start(n, 0);
  for (auto& s : start) s = *rc::gen::inRange<std::size_t>(0, 100);
  RefineOptions o;
  o.max_points = *rc::gen::inRange<unsigned>(0, 30);
  RefineOutcome out;
  try {
    out = refine_split_search(l, start, measure, o);
  } catch (const UsageError&) {
    RC_DISCARD("no split of this lattice aligns");
  }
  std::set<Shares> distinct;
  for (const auto& p : out.probes) {
    RC_ASSERT(l.contains(p.units));
    if (p.role != "confirm") RC_ASSERT(distinct.insert(p.units).second);
  }
  RC_ASSERT(distinct.size() <= o.max_points);
  RC_ASSERT(out.probes.size() <= o.max_points + o.confirm * o.rivals * n);
  RC_ASSERT(out.found() == (o.max_points > 0));
  if (!out.found()) return;
  RC_ASSERT(l.contains(out.units));
  if (out.best_alone_ms) RC_ASSERT(out.makespan_ms <= *out.best_alone_ms);
  // Without noise, nothing measured beats the result by more than the margins allow.
  const double margin = std::max(o.alone_margin, o.subset_margin);
  for (const auto& p : out.probes) RC_ASSERT(out.makespan_ms * (1 - margin) <= p.makespan_ms);
}
