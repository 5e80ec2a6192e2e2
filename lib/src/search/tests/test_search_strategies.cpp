// tune(), the strategies and stop conditions over a synthetic evaluator
// (no OpenCL): never worse than NULL, budgets, ties, failures as data,
// the observer and the "already measured" lookup.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "search/search.hpp"
#include "space/rules.hpp"
#include "space/search_space.hpp"
#include "wstune/error.hpp"

using namespace wstune;

namespace {

// Time of a shape: a bowl in log2 space with its minimum at (best_x, best_y).
class FakeEvaluator final : public Evaluator {
 public:
  FakeEvaluator(Extent global, std::size_t max_wg, double null_ms) {
    target_.kernel = "fake";
    target_.global = global;
    target_.priority = Priority::x;
    target_.limits.max_work_group_size = max_wg;
    target_.limits.max_work_item_sizes = {max_wg, max_wg, max_wg};
    target_.pe_per_cu = 8;
    null_ms_ = null_ms;
  }
  const TuneTarget& target() const override { return target_; }
  TuneTarget& target_mut() { return target_; }
  // The local sizes of the target as it is now (tests change it).
  const SearchSpace& space() const override {
    const auto shapes = enumerate_local_sizes(target_.global, target_.limits);
    space_ = SearchSpace(shapes, paper_rule(target_.global, shapes, target_.priority, target_.pe_per_cu));
    return space_;
  }
  Trial evaluate(const Configuration& config, const TimingOptions& timing) override {
    const LocalSize& local = config.local;
    ++calls[to_string(local)];
    Trial t;
    t.local = local;
    if (auto it = fail.find(to_string(local)); it != fail.end()) {
      t.status = it->second;
      t.error = "injected";
      return t;
    }
    const double ms = local ? cost(*local) : null_ms_;
    const int call = calls[to_string(local)];
    for (unsigned i = 0; i < timing.repetitions; ++i) {
      double v = ms;
      if (auto s = script.find(to_string(local)); s != script.end()) v = call == 1 ? s->second.first : s->second.second;
      if (auto sp = spread.find(to_string(local)); sp != spread.end() && timing.repetitions > 1)
        v *= 1 + sp->second * (2.0 * i / (timing.repetitions - 1) - 1);  // evenly from v(1-s) to v(1+s)
      t.kernel.ms.push_back(v);
    }
    return t;
  }
  double cost(const Extent& e) const {
    if (auto it = table.find(to_string(LocalSize(e))); it != table.end()) return it->second;
    const double dx = std::log2(static_cast<double>(e.x)) - best_lx, dy = std::log2(static_cast<double>(e.y)) - best_ly;
    return 1.0 + 0.2 * dx * dx + 0.3 * dy * dy + 0.05 * std::abs(dx * dy);
  }

  double best_lx = 5, best_ly = 1;
  std::map<std::string, double> table;                      // explicit costs
  std::map<std::string, std::pair<double, double>> script;  // first call, later calls
  std::map<std::string, TrialStatus> fail;
  std::map<std::string, double> spread;  // samples spread ±this fraction
  std::map<std::string, int> calls;

 private:
  TuneTarget target_;
  mutable SearchSpace space_;
  double null_ms_;
};

TuneOptions quick() {
  TuneOptions o;
  o.timing = {0, 3};
  return o;
}

double space_min(FakeEvaluator& ev) {
  double m = 1e300;
  for (const auto& e : enumerate_local_sizes(ev.target().global, ev.target().limits)) m = std::min(m, ev.cost(e));
  return m;
}

}  // namespace

TEST(Tune, ExhaustiveMeasuresEveryShapeOnceAndFindsTheMinimum) {
  FakeEvaluator ev(Extent{256, 64, 2}, 256, 5.0);
  auto s = make_exhaustive_searcher();
  const TuneResult r = tune(ev, *s, *never_stop(), quick());
  EXPECT_EQ(r.evaluations, r.space_size + 1);
  // Every shape once in the search; the confirmation rounds add two trials
  // to each of the 4 fastest and NULL (all distinct here), nothing else.
  int extra = 0;
  for (const auto& [k, n] : ev.calls) {
    EXPECT_TRUE(n == 1 || n == 3) << k << ": " << n;
    extra += n - 1;
  }
  EXPECT_EQ(extra, 10);
  EXPECT_EQ(r.tiebreak_trials, 10u);
  ASSERT_TRUE(r.best.local);
  EXPECT_EQ(*r.best.local, (Extent{32, 2, 2}));
  EXPECT_DOUBLE_EQ(r.best.median_ms(), space_min(ev));
  ASSERT_TRUE(r.rule);
  EXPECT_EQ(*r.rule->local, (Extent{256, 1, 2}));  // paper §3.2.3, x-priority, max 256
  ASSERT_TRUE(r.ratio_to_baseline());
  EXPECT_LT(*r.ratio_to_baseline(), 1.0);
  EXPECT_EQ(r.stop_reason, "searcher done");
}

TEST(Tune, AnswersNullWhenNothingIsFaster) {
  FakeEvaluator ev(Extent{64, 64, 2}, 256, 0.5);  // NULL beats every shape (≥ 1 ms)
  for (const char* name : {"exhaustive", "random", "guided", "rule"}) {
    auto s = make_searcher(name, 3);
    const TuneResult r = tune(ev, *s, *never_stop(), quick());
    EXPECT_FALSE(r.best.local) << name;
    EXPECT_DOUBLE_EQ(r.best.median_ms(), 0.5) << name;
    EXPECT_DOUBLE_EQ(*r.ratio_to_baseline(), 1.0) << name;
  }
}

TEST(Tune, GuidedFindsTheOptimumWithinTwentyPercentOfTheSpace) {
  FakeEvaluator ev(Extent{1024, 1024, 2}, 1024, 5.0);
  ev.best_lx = 6;  // optimum 64x2
  const auto space = enumerate_local_sizes(ev.target().global, ev.target().limits);
  const unsigned budget = static_cast<unsigned>((space.size() + 1) / 5);
  auto s = make_guided_searcher(1);
  const TuneResult r = tune(ev, *s, *max_evaluations(budget), quick());
  EXPECT_LE(r.evaluations, budget);
  EXPECT_LE(r.best.median_ms(), space_min(ev) * 1.03);
}

TEST(Tune, MaxEvaluationsAndTimeLimitStop) {
  FakeEvaluator ev(Extent{512, 512, 2}, 1024, 5.0);
  auto s = make_random_searcher(7);
  const TuneResult r = tune(ev, *s, *max_evaluations(6), quick());
  EXPECT_EQ(r.evaluations, 6u);
  EXPECT_EQ(r.stop_reason, "6 evaluations");
  auto s2 = make_exhaustive_searcher();
  const TuneResult r2 = tune(ev, *s2, *either(max_evaluations(1000), time_limit(std::chrono::seconds(0))), quick());
  EXPECT_EQ(r2.evaluations, 2u);  // NULL and the rule always run
  EXPECT_NE(r2.stop_reason.find("time limit"), std::string::npos);
}

TEST(Tune, ATimeLimitIsTheWholeTuneTieBreakRoundsIncluded) {
  // Issue 36: a 60 s TuningDuration ran 86.9 s, the confirmation and tie
  // rounds past it. The baseline and the rule always run; past the limit
  // nothing more does.
  FakeEvaluator ev(Extent{512, 512, 2}, 1024, 5.0);
  auto s = make_exhaustive_searcher();
  const TuneResult r = tune(ev, *s, *time_limit(std::chrono::seconds(0)), quick());
  EXPECT_EQ(r.evaluations, 2u);
  EXPECT_EQ(r.tiebreak_trials, 0u) << "no tie-break round past the limit";
  // The limit counts from the caller's start (its setup too), not tune()'s call.
  TuneOptions o = quick();
  o.started = std::chrono::steady_clock::now() - std::chrono::hours(1);
  auto s2 = make_exhaustive_searcher();
  const TuneResult r2 = tune(ev, *s2, *either(max_evaluations(100), time_limit(std::chrono::seconds(60))), o);
  EXPECT_EQ(r2.evaluations, 2u);
  EXPECT_EQ(r2.tiebreak_trials, 0u);
  // An evaluation count alone leaves the rounds alone.
  auto s3 = make_exhaustive_searcher();
  EXPECT_GT(tune(ev, *s3, *max_evaluations(4), quick()).tiebreak_trials, 0u);
}

TEST(Tune, FailuresAreDataAndNeverTheAnswer) {
  FakeEvaluator ev(Extent{64, 64, 2}, 256, 5.0);
  ev.fail["32x2"] = TrialStatus::correctness;  // the optimum of the bowl
  ev.fail["16x2"] = TrialStatus::timeout;
  auto s = make_exhaustive_searcher();
  const TuneResult r = tune(ev, *s, *never_stop(), quick());
  ASSERT_TRUE(r.best.local);
  EXPECT_NE(to_string(r.best.local), "32x2");
  EXPECT_NE(to_string(r.best.local), "16x2");
  unsigned failed = 0;
  for (const auto& t : r.trials) failed += !t.ok();
  EXPECT_EQ(failed, 2u);
}

TEST(Tune, TiesAreResolvedByMoreSamples) {
  FakeEvaluator ev(Extent{4, 1, 1}, 256, 5.0);
  ev.table = {{"1", 9.0}, {"2", 9.0}};
  ev.script["4"] = {1.00, 0.90};  // looks slower first, is faster
  ev.script["2"] = {0.99, 0.99};
  auto s = make_exhaustive_searcher();
  TuneOptions o = quick();
  const TuneResult r = tune(ev, *s, *never_stop(), o);
  ASSERT_TRUE(r.best.local);
  EXPECT_EQ(r.best.local->x, 4u);
  EXPECT_GT(r.tiebreak_trials, 0u);
  EXPECT_GT(r.best.kernel.size(), 3u);  // merged samples
  o.tiebreak_rounds = 0;
  ev.calls.clear();  // a fresh device: the first samples again
  auto s2 = make_exhaustive_searcher();
  EXPECT_EQ(tune(ev, *s2, *never_stop(), o).best.local->x, 2u);  // noise wins without the tie-break
}

TEST(Tune, TheTieWindowWidensToTheBestTrialsOwnSpread) {
  FakeEvaluator ev(Extent{4, 1, 1}, 256, 5.0);
  ev.table = {{"1", 9.0}};
  ev.script["2"] = {1.00, 1.00};
  ev.spread["2"] = 0.10;          // samples 0.9, 1.0, 1.1: relative IQR 10 %
  ev.script["4"] = {1.06, 0.90};  // 6 % slower at first, faster in truth
  TuneOptions o = quick();
  o.confirm_rounds = 0;  // only the tie window can bring "4" back
  auto s = make_exhaustive_searcher();
  const TuneResult r = tune(ev, *s, *never_stop(), o);
  ASSERT_TRUE(r.best.local);
  EXPECT_EQ(r.best.local->x, 4u);
  EXPECT_GT(r.tiebreak_trials, 0u);
  // With the window held at 3 %, 1.06 is not a tie and the first look wins.
  o.tie_tolerance_max = o.tie_tolerance;
  ev.calls.clear();
  auto s2 = make_exhaustive_searcher();
  const TuneResult r2 = tune(ev, *s2, *never_stop(), o);
  ASSERT_TRUE(r2.best.local);
  EXPECT_EQ(r2.best.local->x, 2u);
}

TEST(Tune, AFailedReMeasurementOfNullKeepsTheBaseline) {
  FakeEvaluator ev(Extent{4, 1, 1}, 256, 0.5);  // NULL beats every shape
  auto s = make_exhaustive_searcher();
  TuneOptions o = quick();
  o.on_trial = [&](const Trial&, TrialPhase phase) {
    if (phase == TrialPhase::baseline) ev.fail["null"] = TrialStatus::timeout;  // every later NULL trial fails
  };
  const TuneResult r = tune(ev, *s, *never_stop(), o);
  EXPECT_GT(ev.calls["null"], 1);  // it was re-measured, and that failed
  EXPECT_TRUE(r.baseline.ok());
  EXPECT_FALSE(r.best.local);  // NULL is still the answer
  ASSERT_TRUE(r.ratio_to_baseline());
  // A shape whose re-measurement fails is not an answer.
  FakeEvaluator ev2(Extent{4, 1, 1}, 256, 5.0);
  ev2.table = {{"1", 2.0}, {"2", 1.5}, {"4", 1.0}};
  TuneOptions o2 = quick();
  o2.on_trial = [&](const Trial& t, TrialPhase) {
    if (t.local && t.local->x == 4) ev2.fail["4"] = TrialStatus::runtime;
  };
  auto s2 = make_exhaustive_searcher();
  const TuneResult r2 = tune(ev2, *s2, *never_stop(), o2);
  ASSERT_TRUE(r2.best.local);
  EXPECT_EQ(r2.best.local->x, 2u);
}

TEST(Tune, GuidedOnACpuSeedsGroupSizesEightTimesApart) {
  FakeEvaluator ev(Extent{64, 64, 2}, 4096, 5.0);
  ev.target_mut().device.type = "cpu";
  ev.target_mut().device.preferred_wg_multiple = 8;
  std::vector<std::size_t> sizes;
  TuneOptions o = quick();
  o.tiebreak_rounds = 0;
  o.on_trial = [&](const Trial& t, TrialPhase phase) {
    if (t.local && (phase == TrialPhase::search || phase == TrialPhase::rule)) sizes.push_back(t.local->count());
  };
  auto s = make_guided_searcher(1);
  (void)tune(ev, *s, *max_evaluations(4), o);  // NULL and the three seeds
  EXPECT_EQ(sizes, (std::vector<std::size_t>{256, 32, 2048}));
  // On a GPU: 256, 128, 512.
  FakeEvaluator gpu(Extent{64, 64, 2}, 1024, 5.0);
  gpu.target_mut().device.type = "gpu";
  gpu.target_mut().device.preferred_wg_multiple = 32;
  sizes.clear();
  auto s2 = make_guided_searcher(1);
  (void)tune(gpu, *s2, *max_evaluations(4), o);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{256, 128, 512}));
}

TEST(Tune, ExtraTrialsTakeAsManySamplesAsTheFirstTrial) {
  FakeEvaluator ev(Extent{2, 1, 1}, 256, 5.0);
  ev.table = {{"1", 9.0}, {"2", 1.0}};
  TuneOptions o = quick();  // 3 repetitions
  o.lookup = [](const Configuration& c) -> std::optional<Trial> {
    const LocalSize& l = c.local;
    if (!l || l->x != 2) return std::nullopt;
    Trial t;  // stored from an earlier session with 7 samples
    t.local = l;
    t.kernel.ms.assign(7, 1.0);
    return t;
  };
  auto s = make_exhaustive_searcher();
  const TuneResult r = tune(ev, *s, *never_stop(), o);
  std::map<std::string, std::size_t> n;
  for (const auto& t : r.trials) n[to_string(t.local)] = t.kernel.size();
  EXPECT_EQ(n["2"], 21u);  // 7 stored + 2 confirmations of 7
  EXPECT_EQ(n["1"], 9u);   // 3 + 2 x 3
  EXPECT_EQ(n["null"], 9u);
}

TEST(Tune, ConfirmationRoundsDoNotLetOneLuckyTrialOfNullWin) {
  FakeEvaluator ev(Extent{4, 1, 1}, 256, 1.0);
  ev.script["null"] = {0.50, 1.00};  // measured at a lucky moment first
  ev.table = {{"1", 2.0}, {"2", 0.95}, {"4", 0.90}};
  TuneOptions o = quick();
  auto s = make_exhaustive_searcher();
  const TuneResult r = tune(ev, *s, *never_stop(), o);
  ASSERT_TRUE(r.best.local);
  EXPECT_EQ(r.best.local->x, 4u);
  EXPECT_EQ(ev.calls["null"], 3);  // the first trial and two confirmations
  EXPECT_NEAR(*r.ratio_to_baseline(), 0.9, 1e-9);
  // Without confirmation, NULL's first trial is 45 % faster than any shape:
  // no tie, and the lucky trial decides.
  o.confirm_rounds = 0;
  ev.calls.clear();
  auto s2 = make_exhaustive_searcher();
  EXPECT_FALSE(tune(ev, *s2, *never_stop(), o).best.local);
}

TEST(Samples, QuantilesInterpolateBetweenOrderStatistics) {
  const Samples s{{4, 1, 3, 2}};
  EXPECT_DOUBLE_EQ(s.quantile(0), 1);
  EXPECT_DOUBLE_EQ(s.quantile(0.25), 1.75);
  EXPECT_DOUBLE_EQ(s.quantile(0.5), s.median());
  EXPECT_DOUBLE_EQ(s.quantile(1), 4);
  EXPECT_DOUBLE_EQ(s.relative_iqr(), (3.25 - 1.75) / 2.5);
  EXPECT_EQ(Samples{}.quantile(0.5), 0);
  EXPECT_EQ(Samples{}.relative_iqr(), 0);
  EXPECT_DOUBLE_EQ(Samples{{7}}.quantile(0.9), 7);
  EXPECT_THROW((void)s.quantile(1.5), std::invalid_argument);
  EXPECT_THROW((void)s.quantile(-0.1), std::invalid_argument);
}

TEST(Tune, ObserverSeesEveryTrialAndLookupAvoidsRemeasuring) {
  FakeEvaluator ev(Extent{128, 32, 2}, 256, 5.0);
  std::map<std::string, Trial> store;
  TuneOptions o = quick();
  o.tiebreak_rounds = 0;
  unsigned observed = 0;
  o.on_trial = [&](const Trial& t, TrialPhase) {
    ++observed;
    store[to_string(t.local)] = t;
  };
  o.lookup = [&](const Configuration& c) -> std::optional<Trial> {
    auto it = store.find(to_string(c.local));
    return it == store.end() ? std::nullopt : std::optional<Trial>(it->second);
  };
  auto s = make_random_searcher(5);
  const TuneResult first = tune(ev, *s, *max_evaluations(10), o);
  EXPECT_EQ(observed, first.evaluations);
  EXPECT_EQ(store.size(), 10u);
  // A resumed session: everything measured before comes from the store.
  auto s2 = make_exhaustive_searcher();
  const TuneResult second = tune(ev, *s2, *never_stop(), o);
  EXPECT_EQ(second.evaluations, second.space_size + 1 - 10);
  for (const auto& [k, n] : ev.calls) EXPECT_EQ(n, 1) << k;
  EXPECT_EQ(*second.best.local, (Extent{32, 2, 2}));
}

TEST(Timing, AdaptiveRepetitionsStopAtTheTimeTargetOrTheCap) {
  const TimingOptions plain{1, 5};
  EXPECT_TRUE(plain.more(4, 1e9));
  EXPECT_FALSE(plain.more(5, 0));
  const TimingOptions adaptive{1, 5, 2.0, 100};
  EXPECT_TRUE(adaptive.more(3, 10.0));    // the minimum count first
  EXPECT_TRUE(adaptive.more(5, 1.99));    // below 2 ms: more
  EXPECT_FALSE(adaptive.more(5, 2.0));    // reached
  EXPECT_FALSE(adaptive.more(100, 0.5));  // the cap
}

TEST(Timing, NoisySamplesGetMoreRepetitionsUntilTheMedianIsPreciseOrTheCap) {
  const TimingOptions noisy{1, 5, 2.0, 100, 0.01};
  EXPECT_NEAR(TimingOptions::median_error(0.4, 16), 0.093, 1e-12);
  EXPECT_EQ(TimingOptions::median_error(0.4, 0), 0);
  EXPECT_TRUE(noisy.more(5, 3.0, 0.40));      // 2 ms reached, but 40 % spread: error 17 %
  EXPECT_TRUE(noisy.more(99, 40.0, 0.40));    // still 3.7 %
  EXPECT_FALSE(noisy.more(100, 40.0, 0.40));  // the cap
  EXPECT_FALSE(noisy.more(5, 3.0, 0.02));     // quiet: 0.93 * 2 % / sqrt(5) = 0.8 %
  EXPECT_TRUE(noisy.more(5, 1.0, 0.0));       // the time target still applies
  EXPECT_TRUE(noisy.more(4, 9.0, 0.0));       // and the minimum count
  const TimingOptions off{1, 5, 2.0, 100};
  EXPECT_FALSE(off.more(5, 3.0, 0.40));  // 0 turns the noise criterion off
  const TimingOptions bounded{1, 5, 2.0, 100, 0.01, 50.0};
  EXPECT_TRUE(bounded.more(20, 49.0, 0.40));   // noisy, below 50 ms: more
  EXPECT_FALSE(bounded.more(20, 50.0, 0.40));  // noisy, but the time bound is reached
  EXPECT_TRUE(bounded.more(20, 1.5, 0.0));     // the 2 ms minimum is not bounded by it
  const TimingOptions error_only{1, 5, 0, 50, 0.05};
  EXPECT_TRUE(error_only.more(5, 100.0, 0.5));
  EXPECT_FALSE(error_only.more(50, 100.0, 0.5));
}

namespace {
TuneTarget gpu_target(Extent global, Priority pri) {
  TuneTarget t;
  t.global = global;
  t.priority = pri;
  t.limits.max_work_group_size = 1024;
  t.limits.max_work_item_sizes = {1024, 1024, 64};
  t.device.type = "gpu";
  t.device.preferred_wg_multiple = 32;
  return t;
}
}  // namespace

TEST(Prior, GpuPrefersWarpMultiplesNear256WithCoalescedRows) {
  const auto t1 = gpu_target(Extent{524288, 1, 1}, Priority::none);
  const auto o1 = prior_order(enumerate_local_sizes(t1.global, t1.limits), t1);
  ASSERT_FALSE(o1.empty());
  EXPECT_EQ(o1.front().x, 256u);
  EXPECT_EQ(o1.back().x, 1u);  // 1 work-item: 1/32 of a warp used
  const auto t2 = gpu_target(Extent{1024, 1024, 2}, Priority::x);
  const auto o2 = prior_order(enumerate_local_sizes(t2.global, t2.limits), t2);
  EXPECT_EQ(o2.front(), (Extent{64, 4, 2}));
  // 1000 has no divisor that is a multiple of 32: the first choice wastes
  // little of its last warp (50x5 = 250 of 256) and keeps rows coalesced.
  const auto t3 = gpu_target(Extent{1000, 1000, 2}, Priority::x);
  const auto o3 = prior_order(enumerate_local_sizes(t3.global, t3.limits), t3);
  const std::size_t n = o3.front().count();
  EXPECT_GE(static_cast<double>(n) / static_cast<double>((n + 31) / 32 * 32), 0.95) << to_string(LocalSize(o3.front()));
  EXPECT_GE(o3.front().x, 32u);
  // A shape that uses 1 of 32 lanes comes after every full-warp shape.
  auto pos = [&](Extent e) { return std::find(o3.begin(), o3.end(), e) - o3.begin(); };
  EXPECT_LT(pos(Extent{40, 4, 2}), pos(Extent{1, 1, 2}));
}

TEST(Prior, CpuPrefersTheVectorWidthAlongX) {
  TuneTarget t = gpu_target(Extent{1024, 1024, 2}, Priority::y);
  t.device.type = "cpu";
  t.device.preferred_wg_multiple = 8;
  t.limits.max_work_group_size = 4096;
  t.limits.max_work_item_sizes = {4096, 4096, 4096};
  const auto o = prior_order(enumerate_local_sizes(t.global, t.limits), t);
  EXPECT_EQ(o.front(), (Extent{8, 32, 2}));
}

TEST(Tune, GuidedSpendsATwoEvaluationBudgetOnNullAndItsPrior) {
  FakeEvaluator ev(Extent{4096, 1, 1}, 1024, 5.0);
  ev.best_lx = 8;  // the bowl's minimum at 256
  auto s = make_guided_searcher(1);
  const TuneResult r = tune(ev, *s, *max_evaluations(2), quick());
  EXPECT_EQ(r.evaluations, 2u);
  ASSERT_TRUE(r.best.local);
  EXPECT_EQ(r.best.local->x, 256u);  // no GPU info: 256 is still the prior's size
  EXPECT_FALSE(r.rule);              // no room left for the rule
  // With room, the rule is measured for the report.
  auto s2 = make_guided_searcher(1);
  const TuneResult r2 = tune(ev, *s2, *max_evaluations(6), quick());
  EXPECT_TRUE(r2.rule);
  EXPECT_LE(r2.evaluations, 6u);
}

TEST(Tune, GuidedOnACpuIn1DSpendsATwoEvaluationBudgetOnNullAndTheRule) {
  FakeEvaluator ev(Extent{4096, 1, 1}, 1024, 5.0);
  ev.best_lx = 8;  // the bowl's minimum at 256, as in the GPU test above
  ev.target_mut().device.type = "cpu";
  auto s = make_guided_searcher(1);
  const TuneResult r = tune(ev, *s, *max_evaluations(2), quick());
  EXPECT_EQ(r.evaluations, 2u);
  ASSERT_TRUE(r.rule);  // the second evaluation was the rule: pe_per_cu 8 -> 8
  EXPECT_EQ(r.rule->local, LocalSize(Extent{8, 1, 1}));
  EXPECT_EQ(ev.calls.count("256"), 0u);
  // A larger budget still reaches the bowl's minimum from the prior's seeds.
  auto s2 = make_guided_searcher(1);
  const TuneResult r2 = tune(ev, *s2, *max_evaluations(8), quick());
  ASSERT_TRUE(r2.best.local);
  EXPECT_EQ(r2.best.local->x, 256u);
  // 2-D on a CPU keeps the prior's seeds first.
  FakeEvaluator ev2(Extent{64, 64, 2}, 1024, 5.0);
  ev2.target_mut().device.type = "cpu";
  auto s3 = make_guided_searcher(1);
  const TuneResult r3 = tune(ev2, *s3, *max_evaluations(2), quick());
  EXPECT_FALSE(r3.rule);
}

TEST(Searchers, UnknownNameIsAUsageError) {
  EXPECT_THROW(make_searcher("no-such-strategy"), UsageError);
}

RC_GTEST_PROP(TuneProperty, NeverSlowerThanNullAndNoShapeMeasuredTwice, ()) {
  const Extent g{*rc::gen::element<std::size_t>(1, 7, 12, 60, 64, 97, 360),
                 *rc::gen::element<std::size_t>(1, 2, 9, 16, 30), 2};
  FakeEvaluator ev(g, *rc::gen::element<std::size_t>(64, 256, 1024), *rc::gen::inRange(1, 40) / 10.0);
  for (const auto& e : enumerate_local_sizes(g, ev.target().limits))
    ev.table[to_string(LocalSize(e))] = *rc::gen::inRange(5, 50) / 10.0;
  const auto name = *rc::gen::element<std::string>("exhaustive", "random", "guided", "rule");
  auto s = make_searcher(name, *rc::gen::arbitrary<std::uint32_t>());
  TuneOptions o = quick();
  o.tiebreak_rounds = 0;
  const TuneResult r = tune(ev, *s, *max_evaluations(*rc::gen::inRange(1, 30)), o);
  RC_ASSERT(r.best.ok());
  RC_ASSERT(r.best.median_ms() <= r.baseline.median_ms());
  for (const auto& [k, n] : ev.calls) RC_ASSERT(n == 1);
  if (name == "exhaustive" && r.evaluations == r.space_size + 1) {
    double m = r.baseline.median_ms();
    for (const auto& t : r.trials) m = std::min(m, t.median_ms());
    RC_ASSERT(r.best.median_ms() == m);
  }
}
