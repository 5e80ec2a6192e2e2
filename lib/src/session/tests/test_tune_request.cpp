// The one resolver of a tuning request (session/tune_request.hpp): the
// rules `wstune tune`, wstuned and autotune() share.
#include <gtest/gtest.h>

#include <string>

#include "kernel/kernel.hpp"
#include "session/tune_request.hpp"
#include "space/search_space.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

namespace {

using namespace wstune;

const std::string kData = WSTUNE_TEST_DATA_DIR;
const std::string kExamples = kData + "/../../share/examples/kernels";

// A space of `n` local sizes (1..n along x), no tuning parameters.
SearchSpace local_space(std::size_t n) {
  std::vector<Extent> shapes;
  for (std::size_t x = 1; x <= n; ++x) shapes.push_back(Extent{x, 1, 1, 1});
  return SearchSpace(shapes, std::nullopt);
}

TEST(TuneRequest, BuiltInKernelTakesThePaperSizeAutoAndTheSeed) {
  const KernelSpec& spec = kernel_spec("trapezoid");
  TuneRequest req;
  req.seed = 7;
  const ResolvedTune r = resolve_tune(spec, req);
  EXPECT_EQ(r.problem.text, spec.paper_size().text);
  EXPECT_EQ(r.search.strategy, "auto");
  EXPECT_EQ(r.search.seed, 7u);
  EXPECT_EQ(r.search.search_seed, 7u);
  EXPECT_EQ(r.search.time_limit_s, 0);
  req.size = "4096";
  req.strategy = "guided";
  EXPECT_EQ(resolve_tune(spec, req).problem.text, "4096");
  EXPECT_EQ(resolve_tune(spec, req).search.strategy, "guided");
}

TEST(TuneRequest, FileSearchAndSeedApplyOnlyWithoutAStrategy) {
  const auto spec = load_tuning_file(kExamples + "/matmul_tiled.json");  // Search Random, Seed 1; Budget 5 %
  TuneRequest req;
  req.size = "64x64x64";
  ResolvedTune r = resolve_tune(*spec, req);
  EXPECT_EQ(r.search.strategy, "random");
  EXPECT_EQ(r.search.search_seed, 1u);
  EXPECT_EQ(r.search.seed, 42u);  // the input seed stays the request's
  req.strategy = "exhaustive";
  r = resolve_tune(*spec, req);
  EXPECT_EQ(r.search.strategy, "exhaustive");
  EXPECT_EQ(r.search.search_seed, 42u);
}

TEST(TuneRequest, BudgetIsTheRequestsElseTheFilesElseTheStrategys) {
  const auto file = load_tuning_file(kExamples + "/matmul_tiled.json");  // ConfigurationFraction 0.05
  const SearchSpace space = local_space(79);                             // 80 with the baseline
  EXPECT_EQ(evaluation_budget(0, *file, "random", space), 4u);           // 5 % of 80
  EXPECT_EQ(evaluation_budget(9, *file, "random", space), 9u);
  const KernelSpec& builtin = kernel_spec("trapezoid");
  EXPECT_EQ(evaluation_budget(0, builtin, "exhaustive", space), 0u);  // no limit
  EXPECT_EQ(evaluation_budget(0, builtin, "guided", space), 16u);     // 20 % of the space
  TuneRequest req;
  req.max_evals = 5;
  req.time_limit_s = 2.5;
  const TuneBudget b = resolve_search(builtin, req).budget(builtin, space);
  EXPECT_EQ(b.max_evals, 5u);
  EXPECT_EQ(b.time_limit_s, 2.5);
  const SessionSpec s = b.session("guided");
  EXPECT_EQ(s.strategy, "guided");
  EXPECT_EQ(s.budget_trials, 5);
  EXPECT_EQ(s.budget_seconds, 2.5);
  const SessionSpec none = TuneBudget{}.session("exhaustive");
  EXPECT_FALSE(none.budget_trials);
  EXPECT_FALSE(none.budget_seconds);
}

TEST(TuneRequest, StopConditionCountsEvaluations) {
  SearchProgress p;
  p.evaluations = 2;
  const auto stop = TuneBudget{3, 0}.stop();
  EXPECT_FALSE(stop->reached(p));
  p.evaluations = 3;
  EXPECT_TRUE(stop->reached(p));
  EXPECT_FALSE(TuneBudget{}.stop()->reached(p));  // no budget: the searcher runs out
  p.elapsed = std::chrono::seconds(2);
  EXPECT_TRUE((TuneBudget{0, 1.0}.stop()->reached(p)));
  EXPECT_FALSE((TuneBudget{0, 5.0}.stop()->reached(p)));
}

TEST(TuneRequest, FixedSizeFileHasOneProblem) {
  const auto spec = load_tuning_file(kData + "/fixed_scale.json");  // no ProblemSize
  const Problem p = resolve_problem(*spec, "");
  EXPECT_EQ(p.text, "fixed");
  // Its own text names it again (a daemon job carries the resolved text to the workers).
  EXPECT_EQ(resolve_problem(*spec, p.text).n, p.n);
  try {
    (void)resolve_problem(*spec, "1024");
    FAIL() << "a size for a file with fixed sizes was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sizes are fixed"), std::string::npos) << e.what();
  }
}

TEST(TuneRequest, UnknownStrategyIsAUsageError) {
  TuneRequest req;
  req.strategy = "hill";
  EXPECT_THROW((void)resolve_tune(kernel_spec("trapezoid"), req), UsageError);
}

}  // namespace
