// Metrics, objectives and Pareto fronts without a sensor: the built-ins
// from a trial's samples and energy observation, a tuning file's
// wstune.Metrics evaluated over its parameters and ProblemSize, objective
// parsing and its errors, the front's dominance rules, and tune() deciding
// by an objective.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "metric/metric.hpp"
#include "metric/pareto.hpp"
#include "search/search.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using nlohmann::json;

namespace {

Trial trial(std::vector<double> ms, std::optional<double> power_w = std::nullopt, json params = json::object()) {
  Trial t;
  t.params = std::move(params);
  t.kernel.ms = std::move(ms);
  if (power_w) {
    EnergyMeasurement e;
    e.sensor = "fake";
    e.power_w = *power_w;
    t.energy = e;
  }
  return t;
}

std::shared_ptr<const KernelSpec> matmul_tiled() {
  return load_tuning_file(WSTUNE_TEST_DATA_DIR "/../../share/examples/kernels/matmul_tiled.json");
}

}  // namespace

TEST(Metric, BuiltinsFromSamplesAndPower) {
  const MetricSet m;
  const Trial t = trial({2.0, 4.0, 3.0}, 200.0);  // median 3 ms at 200 W
  EXPECT_DOUBLE_EQ(*m.value(t, "time"), 3.0);
  EXPECT_DOUBLE_EQ(*m.value(t, "power"), 200.0);
  EXPECT_DOUBLE_EQ(*m.value(t, "energy"), 0.6);       // 200 W x 3 ms
  EXPECT_DOUBLE_EQ(*m.value(t, "edp"), 0.6 * 0.003);  // J x s
  const Trial no_energy = trial({1.0});
  EXPECT_DOUBLE_EQ(*m.value(no_energy, "time"), 1.0);
  EXPECT_FALSE(m.value(no_energy, "energy"));
  Trial failed = trial({1.0}, 100.0);
  failed.status = TrialStatus::runtime;
  EXPECT_FALSE(m.value(failed, "time"));
  EXPECT_EQ(m.values_json(no_energy), (json{{"time", 1.0}}));
  EXPECT_THROW((void)m.value(t, "GFLOP/s"), UsageError);
}

TEST(Metric, UserMetricsOfATuningFile) {
  const auto spec = matmul_tiled();
  const Problem p = spec->parse_size("64x32x16");
  const MetricSet m(*spec, p);
  EXPECT_TRUE(m.knows("GFLOP/s"));
  EXPECT_TRUE(m.knows("GFLOP/J"));
  const Trial t = trial({0.5}, 50.0, spec->reference_params());
  EXPECT_NEAR(*m.value(t, "GFLOP/s"), 2.0 * 64 * 32 * 16 / 0.5 / 1e6, 1e-12);
  EXPECT_NEAR(*m.value(t, "GFLOP/J"), 2.0 * 64 * 32 * 16 / (50.0 * 0.5 / 1000) / 1e9, 1e-12);
  // Without energy the metric that reads it has no value; the other still has.
  const Trial no_energy = trial({0.5}, std::nullopt, spec->reference_params());
  EXPECT_TRUE(m.value(no_energy, "GFLOP/s"));
  EXPECT_FALSE(m.value(no_energy, "GFLOP/J"));
  // Only the metrics that read energy ask for it (tune --energy auto).
  EXPECT_TRUE(m.needs_energy("GFLOP/J"));
  EXPECT_FALSE(m.needs_energy("GFLOP/s"));
  EXPECT_TRUE(m.needs_energy("edp"));
  EXPECT_FALSE(m.needs_energy("time"));
}

TEST(Metric, ObjectivesParseWithDirectionAndNameTheFix) {
  const MetricSet m;
  EXPECT_EQ(parse_objective("energy", m, "--objective"), (Objective{"energy", false}));
  EXPECT_EQ(parse_objective("time:max", m, "--objective"), (Objective{"time", true}));
  EXPECT_EQ(to_string(Objective{"edp", false}), "edp:min");
  const auto two = parse_objectives("time,energy:min", m, "--objectives");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].name, "energy");
  try {
    (void)parse_objective("speed", m, "--objective");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no metric 'speed'; use one of: time, energy, power, edp"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)parse_objective("time:up", m, "--objective"), UsageError);
  EXPECT_THROW((void)parse_objectives("time,,energy", m, "--objectives"), UsageError);
  EXPECT_THROW((void)parse_objectives("time,time", m, "--objectives"), UsageError);
  EXPECT_TRUE(needs_energy(Objective{"edp", false}));
  EXPECT_FALSE(needs_energy(Objective{"time", false}));
}

TEST(Metric, ScoreIsNegatedForMaximisedObjectives) {
  const MetricSet m;
  const Trial t = trial({2.0});
  EXPECT_DOUBLE_EQ(*objective_score(m, Objective{"time", false})(t), 2.0);
  EXPECT_DOUBLE_EQ(*objective_score(m, Objective{"time", true})(t), -2.0);
  EXPECT_FALSE(objective_score(m, Objective{"energy", false})(t));
}

TEST(Pareto, NonDominatedPointsOnly) {
  using C = std::vector<std::optional<double>>;
  // (time, energy): a fast and hungry, b slow and frugal, c dominated by a, d equal to b, e missing energy.
  const std::vector<C> costs{{1.0, 10.0}, {3.0, 4.0}, {2.0, 11.0}, {3.0, 4.0}, {0.5, std::nullopt}};
  EXPECT_EQ(pareto_front(costs), (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(pareto_front(std::vector<C>{{1.0}, {2.0}, {1.0}}), (std::vector<std::size_t>{0, 2}));
  EXPECT_TRUE(pareto_front(std::vector<C>{}).empty());
}

TEST(Pareto, FrontOfTrialsOrderedByTheFirstObjective) {
  const MetricSet m;
  std::vector<Trial> trials{trial({3.0}, 100.0, {{"A", 1}}),   // 0.3 J, slow
                            trial({1.0}, 400.0, {{"A", 2}}),   // 0.4 J, fast
                            trial({2.0}, 250.0, {{"A", 3}}),   // 0.5 J: dominated by A=2 (faster, fewer J)
                            trial({1.5}, 220.0, {{"A", 4}})};  // 0.33 J
  const std::vector<Objective> obj{{"energy", false}, {"time", false}};
  EXPECT_EQ(pareto_front(trials, obj, m), (std::vector<std::size_t>{0, 3, 1}));
  // Maximising time flips its axis: the slowest, most frugal trial dominates every other.
  const std::vector<Objective> flipped{{"energy", false}, {"time", true}};
  EXPECT_EQ(pareto_front(trials, flipped, m), (std::vector<std::size_t>{0})) << "the slowest and most frugal wins both";
}

namespace {

// An evaluator over fixed answers: configuration x (1-D local size) runs in
// ms[x] at power[x].
class TableEvaluator final : public Evaluator {
 public:
  TableEvaluator(std::map<std::size_t, std::pair<double, double>> table) : table_(std::move(table)) {
    target_.global = Extent{64, 1, 1};
    target_.limits.max_work_group_size = 64;
    target_.limits.kernel_work_group_size = 64;
    target_.limits.max_work_item_sizes = {64, 1, 1};
    std::vector<Extent> shapes;
    for (const auto& [x, v] : table_) shapes.push_back(Extent{x, 1, 1});
    space_ = SearchSpace(std::move(shapes), std::nullopt);
  }
  const TuneTarget& target() const override { return target_; }
  const SearchSpace& space() const override { return space_; }
  Trial evaluate(const Configuration& c, const TimingOptions&) override {
    const auto [ms, w] = c.local ? table_.at(c.local->x) : std::pair{5.0, 100.0};
    Trial t = trial({ms, ms, ms}, w, c.params);
    t.local = c.local;
    return t;
  }

 private:
  std::map<std::size_t, std::pair<double, double>> table_;
  TuneTarget target_;
  SearchSpace space_;
};

}  // namespace

TEST(Objective, TuneDecidesByTheScore) {
  // 8: fastest (1 ms) but hungry (1 J); 16: 2 ms at 100 W = 0.2 J; 32: 4 ms at 60 W = 0.24 J; NULL 5 ms, 0.5 J.
  TableEvaluator ev({{8, {1.0, 1000.0}}, {16, {2.0, 100.0}}, {32, {4.0, 60.0}}});
  const auto searcher = make_exhaustive_searcher();
  TuneOptions by_time;
  by_time.tiebreak_rounds = 0;
  EXPECT_EQ(tune(ev, *searcher, *never_stop(), by_time).best.local, (LocalSize{Extent{8, 1, 1}}));
  TuneOptions by_energy = by_time;
  by_energy.score = objective_score(MetricSet(), Objective{"energy", false});
  const auto searcher2 = make_exhaustive_searcher();
  EXPECT_EQ(tune(ev, *searcher2, *never_stop(), by_energy).best.local, (LocalSize{Extent{16, 1, 1}}));
}

TEST(Metric, ABadMetricInTheTuningFileNamesItsPathAndTheFix) {
  const std::string dir = WSTUNE_TEST_DATA_DIR "/../../share/examples/kernels/";
  std::ifstream in(dir + "matmul_tiled.json");
  json doc = json::parse(in);
  doc["KernelSpecification"]["KernelFile"] = dir + "matmul_tiled.cl";
  const auto error_of = [&](const json& metrics) {
    json d = doc;
    d["wstune"]["Metrics"] = metrics;
    const std::string path = std::filesystem::temp_directory_path() / "wstune-metric-test.json";
    std::ofstream(path) << d.dump();
    try {
      (void)load_tuning_file(path);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error_of({{"time", "1"}}).find("wstune.Metrics.time: is not a usable metric name"), std::string::npos);
  EXPECT_NE(error_of({{"speed", "2 / clock"}}).find("wstune.Metrics.speed: '2 / clock' names 'clock'"),
            std::string::npos)
      << error_of({{"speed", "2 / clock"}});
  EXPECT_NE(error_of({{"speed", "2 / (time"}}).find("wstune.Metrics.speed"), std::string::npos);
  EXPECT_EQ(error_of({{"speed", "ProblemSize[0] / time * TSM"}}), "(no error)");
}
