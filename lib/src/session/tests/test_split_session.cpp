// The split session on two PoCL devices (POCL_DEVICES="pthread pthread"):
// its blocks tile the range for every model, a run is recorded as it was
// returned, and a stored calibration and refinement are reused instead of
// measured again. Also the calibration row's one JSON form.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "session/split_session.hpp"
#include "store/calibration_row.hpp"
#include "test_pocl_util.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using wstune::test::pocl_devices;

namespace {

// Two PoCL CPU devices; set before the ICD loader first asks for platforms.
const bool env_set = test::use_pocl_pthread_devices(2, true);

// A database file of its own per test, removed afterwards.
struct TempDb {
  std::string path;
  TempDb() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path = (std::filesystem::temp_directory_path() / (std::string("wstune-split-session-") + info->name() + ".db"))
               .string();
    std::filesystem::remove(path);
  }
  ~TempDb() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  }
};

// The measured model on trapezoid 4096 with a short refinement, stored in `db`.
SplitSessionOptions measured_options(const std::optional<std::string>& db) {
  SplitSessionOptions o;
  o.model = SplitModel::measured;
  o.dim = 0;
  o.locals = {LocalSize{}, LocalSize{}};
  o.timing = TimingOptions{0, 1};
  o.db = db;
  o.refine = 3;
  o.refine_timing = TimingOptions{0, 1};
  return o;
}

std::size_t sum(const Shares& units) {
  std::size_t n = 0;
  for (auto u : units) n += u;
  return n;
}

}  // namespace

class SplitSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_set);
    devices = pocl_devices(2);
    ASSERT_EQ(devices.size(), 2u) << "POCL_DEVICES=\"pthread pthread\" must give two PoCL devices";
  }
  std::vector<Device> devices;
  const KernelSpec& spec = kernel_spec("trapezoid");
  const Problem problem = spec.parse_size("4096");
};

TEST_F(SplitSessionTest, EveryModelsBlocksTileTheRange) {
  for (SplitModel model : {SplitModel::pe_ratio, SplitModel::proportional, SplitModel::measured}) {
    SCOPED_TRACE(std::string(to_string(model)));
    SplitSessionOptions o = measured_options(std::nullopt);
    o.model = model;
    SplitSession s(spec, problem, devices, o);
    const SplitSessionPlan plan = s.plan();
    ASSERT_EQ(plan.blocks.size(), 2u);
    EXPECT_TRUE(blocks_tile(plan.blocks, 0, s.total_units()));
    EXPECT_EQ(sum(block_units(plan.blocks)), s.total_units());
    double fractions = 0;
    for (double f : block_fractions(plan.blocks, s.total_units())) fractions += f;
    EXPECT_NEAR(fractions, 1.0, 1e-12);
    EXPECT_EQ(plan.measured.has_value(), model == SplitModel::measured);
    EXPECT_EQ(s.store(), nullptr) << "no db: nothing opened";
  }
}

TEST_F(SplitSessionTest, RuleDevicesGetTheRulesLocalSizeForTheirBlock) {
  SplitSessionOptions o = measured_options(std::nullopt);
  o.model = SplitModel::proportional;
  o.locals = {std::nullopt, LocalSize{}};
  SplitSession s(spec, problem, devices, o);
  const SplitSessionPlan plan = s.plan();
  EXPECT_FALSE(s.planning_locals()[0].has_value()) << "planned with the driver's choice";
  EXPECT_EQ(plan.locals[0], paper_local_rule(s.runner().runner(0), s.runner().problem(0), plan.blocks[0]));
  EXPECT_FALSE(plan.locals[1].has_value());
}

TEST_F(SplitSessionTest, TheStoredRunIsTheRunReturnedAndTheCalibrationIsReused) {
  TempDb db;
  SplitSessionPlan first_plan;
  {
    SplitSession s(spec, problem, devices, measured_options(db.path));
    first_plan = s.plan();
    ASSERT_TRUE(first_plan.measured);
    EXPECT_EQ(first_plan.measured->cal_source, "measured");
    EXPECT_EQ(first_plan.measured->refine_source, "measured");
    EXPECT_TRUE(first_plan.measured->stored);
    const SplitRunResult r = s.run(first_plan, 1);
    ASSERT_TRUE(r.ok()) << r.error;
    ASSERT_NE(s.store(), nullptr);
    const auto runs = s.store()->split_runs("trapezoid");
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].model, "measured");
    EXPECT_DOUBLE_EQ(runs[0].makespan_ms, r.makespan.median());
    ASSERT_EQ(runs[0].devices.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(runs[0].devices[i].device_fingerprint, devices[i].info.fingerprint());
      EXPECT_DOUBLE_EQ(runs[0].devices[i].share, static_cast<double>(first_plan.blocks[i].size()) / 4096.0);
    }
    EXPECT_EQ(runs[0].detail.at("units").get<Shares>(), block_units(first_plan.blocks));
    EXPECT_EQ(runs[0].detail.at("refinement").at("units").get<Shares>(), first_plan.measured->refinement->units);
    EXPECT_EQ(s.store()->check().calibrations, 2) << "one calibration row per device";
  }
  // A second session over the same devices, kernel and size: nothing measured again.
  SplitSession again(spec, problem, devices, measured_options(db.path));
  bool measured_again = false;
  const SplitSessionPlan second = again.plan([&](std::string_view) { measured_again = true; });
  EXPECT_FALSE(measured_again) << "the stored calibration or refinement was measured again";
  ASSERT_TRUE(second.measured);
  EXPECT_EQ(second.measured->cal_source, "stored");
  EXPECT_EQ(second.measured->refine_source, "stored");
  EXPECT_FALSE(second.measured->stored);
  EXPECT_EQ(second.measured->cal, first_plan.measured->cal);
  EXPECT_EQ(second.blocks, first_plan.blocks);
  EXPECT_EQ(again.store()->check().calibrations, 2) << "a reused calibration adds no rows";
  // --recalibrate measures and stores anew.
  SplitSessionOptions o = measured_options(db.path);
  o.recalibrate = true;
  SplitSession anew(spec, problem, devices, o);
  EXPECT_EQ(anew.plan().measured->cal_source, "measured");
  EXPECT_EQ(anew.store()->check().calibrations, 4);
}

TEST_F(SplitSessionTest, ACalibrationOfAnotherSizeIsNotReused) {
  TempDb db;
  {
    SplitSession s(spec, problem, devices, measured_options(db.path));
    ASSERT_EQ(s.plan().measured->cal_source, "measured");
  }
  SplitSession other(spec, spec.parse_size("2048"), devices, measured_options(db.path));
  EXPECT_EQ(other.plan().measured->cal_source, "measured");
}

TEST(CalibrationRow, EachWritersFormRoundTrips) {
  DeviceCalibration d{"0:1", "pthread", "fp", "null", {CalibrationPoint{64, 64, 0.5, 0.1, 0.2}}, {0.1, 0.01}, 1.5};
  d.fixed_ms = 0.25;
  // A wstuned worker's answer, stored with its size.
  const CalibrationRow worker{d, "4096", std::nullopt, CalibrationSummary{250, 4096, 4096, 41.3, 12.5}, std::nullopt};
  const nlohmann::json wj = to_json(worker);
  EXPECT_EQ(wj.at("fingerprint"), "fp") << "the device's calibration at the top level";
  EXPECT_EQ(wj.at("total_units"), 4096);
  EXPECT_FALSE(wj.contains("split"));
  EXPECT_FALSE(wj.contains("dim"));
  EXPECT_EQ(calibration_row_from_json(wj), worker);
  EXPECT_EQ(to_json(calibration_row_from_json(wj)).dump(), wj.dump());
  // `wstune split`'s row, with its whole split.
  RefineOutcome o;
  o.units = {1024, 3072};
  o.makespan_ms = 1.5;
  o.probes = {RefineProbe{{1024, 3072}, 1.5, "start"}};
  const CalibrationRow cli{d, "4096", 0u, std::nullopt,
                           SplitRecord{"abc-1", Calibration{"trapezoid", "4096", 0, {d, d}}, 4096, o, 1}};
  const nlohmann::json cj = to_json(cli);
  EXPECT_EQ(cj.at("split").at("position"), 1);
  EXPECT_FALSE(cj.contains("full_ms"));
  EXPECT_EQ(calibration_row_from_json(cj), cli);
  // An unreadable refinement is none; the calibration is still read.
  nlohmann::json broken = cj;
  broken["split"]["refinement"] = "not a refinement";
  const CalibrationRow read = calibration_row_from_json(broken);
  ASSERT_TRUE(read.split);
  EXPECT_FALSE(read.split->refinement);
  EXPECT_EQ(read.split->calibration, cli.split->calibration);
  // Not a calibration at all.
  EXPECT_THROW(calibration_row_from_json(nlohmann::json{{"size", "4096"}}), nlohmann::json::exception);
}
