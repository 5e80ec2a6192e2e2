// The energy-aware measured split (energy_split.hpp) from synthetic
// calibrations: predicted joules with idle power while waiting, a frugal
// slow device winning the energy objective where the time objective uses
// both, a hungry device left out, edp between the two, and the errors.
#include <gtest/gtest.h>

#include "split/energy_split.hpp"
#include "wstune/error.hpp"

using namespace wstune;

namespace {

// A device whose slice of w work-items takes a + b*w ms, at `active` W running and `idle` W waiting.
DeviceCalibration device(const char* id, double a_ms, double b_ms, std::optional<double> active,
                         std::optional<double> idle) {
  DeviceCalibration d;
  d.device_id = id;
  d.device_name = id;
  d.points = {CalibrationPoint{1, 1, a_ms + b_ms, 0, 0}, CalibrationPoint{1000, 1000, a_ms + 1000 * b_ms, 0, 0}};
  d.fit = fit_linear(d.points);
  d.active_w = active;
  d.idle_w = idle;
  return d;
}

const auto kItems = [](std::size_t, std::size_t units) { return static_cast<double>(units); };

std::vector<std::size_t> units(const std::vector<Block>& blocks) {
  std::vector<std::size_t> out;
  for (const auto& b : blocks) out.push_back(b.size());
  return out;
}

}  // namespace

TEST(EnergySplit, PredictedJoulesCountIdlePowerUntilTheMakespan) {
  Calibration cal;
  cal.devices = {device("gpu", 0, 0.01, 300.0, 60.0), device("cpu", 0, 0.04, 100.0, 40.0)};
  // gpu 800 units = 8 ms, cpu 200 units = 8 ms: both busy to the end.
  SplitCost c = predicted_cost(cal, {Block{0, 0, 800}, Block{0, 800, 1000}}, kItems);
  EXPECT_NEAR(c.makespan_ms, 8.0, 1e-9);
  EXPECT_NEAR(*c.joules, (300 * 8 + 100 * 8) / 1000.0, 1e-9);
  // gpu alone: 10 ms; the cpu idles at 40 W all the while.
  c = predicted_cost(cal, {Block{0, 0, 1000}, Block{0, 1000, 1000}}, kItems);
  EXPECT_NEAR(c.makespan_ms, 10.0, 1e-9);
  EXPECT_NEAR(*c.joules, (300 * 10 + 40 * 10) / 1000.0, 1e-9);
  EXPECT_NEAR(*c.edp(), *c.joules * 0.010, 1e-12);
  cal.devices[1].active_w.reset();
  EXPECT_FALSE(predicted_cost(cal, {Block{0, 0, 1000}, Block{0, 1000, 1000}}, kItems).joules);
}

TEST(EnergySplit, TimeObjectiveIsTheMeasuredModel) {
  Calibration cal;
  cal.devices = {device("gpu", 0, 0.01, 300.0, 60.0), device("cpu", 0, 0.04, 100.0, 40.0)};
  const auto t = objective_blocks(cal, 1000, 0, {10, 10}, kItems, SplitObjective::time);
  EXPECT_EQ(t, measured_blocks(cal, 1000, 0, {10, 10}, kItems));
  EXPECT_EQ(units(t), (std::vector<std::size_t>{800, 200}));
}

TEST(EnergySplit, AHungrySlowDeviceIsLeftOutForEnergy) {
  Calibration cal;
  // The cpu spends 0.04 ms x (100 - 40) W = 2.4 mJ more per unit than idling; the gpu 0.01 x 240 = 2.4 mJ... make
  // the cpu hungrier: 200 W active.
  cal.devices = {device("gpu", 0, 0.01, 300.0, 60.0), device("cpu", 0, 0.04, 200.0, 40.0)};
  const auto e = objective_blocks(cal, 1000, 0, {10, 10}, kItems, SplitObjective::energy);
  EXPECT_EQ(units(e), (std::vector<std::size_t>{1000, 0}));
  const auto fastest = measured_blocks(cal, 1000, 0, {10, 10}, kItems);
  EXPECT_LT(*predicted_cost(cal, e, kItems).joules, *predicted_cost(cal, fastest, kItems).joules);
}

TEST(EnergySplit, AFrugalDeviceTakesMoreForEnergyThanForTime) {
  Calibration cal;
  // gpu: 0.01 ms/unit at 400 W over 50 W idle (3.5 mJ/unit); cpu: 0.02 ms/unit at 60 W over 40 W (0.4 mJ/unit).
  cal.devices = {device("gpu", 0, 0.01, 400.0, 50.0), device("cpu", 0, 0.02, 60.0, 40.0)};
  const auto t = objective_blocks(cal, 1000, 0, {10, 10}, kItems, SplitObjective::time);
  const auto e = objective_blocks(cal, 1000, 0, {10, 10}, kItems, SplitObjective::energy);
  const auto p = objective_blocks(cal, 1000, 0, {10, 10}, kItems, SplitObjective::edp);
  EXPECT_GT(e[1].size(), t[1].size());
  const SplitCost ct = predicted_cost(cal, t, kItems), ce = predicted_cost(cal, e, kItems),
                  cp = predicted_cost(cal, p, kItems);
  EXPECT_LT(*ce.joules, *ct.joules);
  EXPECT_GE(ce.makespan_ms, ct.makespan_ms);
  EXPECT_LE(*cp.edp(), *ct.edp());
  EXPECT_LE(*cp.edp(), *ce.edp());
  for (const auto& blocks : {t, e, p}) EXPECT_TRUE(blocks_tile(blocks, 0, 1000));
}

TEST(EnergySplit, NeverPredictedWorseThanADeviceAlone) {
  Calibration cal;
  cal.devices = {device("a", 0.5, 0.01, 250.0, 70.0), device("b", 2.0, 0.015, 90.0, 30.0),
                 device("c", 0.1, 0.05, 35.0, 20.0)};
  for (const auto o : {SplitObjective::energy, SplitObjective::edp}) {
    const auto blocks = objective_blocks(cal, 1200, 0, {4, 4, 4}, kItems, o);
    const double v = *predicted_cost(cal, blocks, kItems).value(o);
    for (std::size_t i = 0; i < 3; ++i) {
      std::vector<Block> alone(3, Block{0, 1200, 1200});
      alone[i] = Block{0, 0, 1200};
      EXPECT_LE(v, *predicted_cost(cal, alone, kItems).value(o) + 1e-12) << to_string(o) << " device " << i;
    }
    EXPECT_TRUE(blocks_tile(blocks, 0, 1200));
  }
}

TEST(EnergySplit, NamesTheDeviceWithoutPowerAndTheObjectives) {
  Calibration cal;
  cal.devices = {device("gpu", 0, 0.01, 300.0, 60.0), device("cpu", 0, 0.04, std::nullopt, std::nullopt)};
  try {
    (void)objective_blocks(cal, 1000, 0, {10, 10}, kItems, SplitObjective::energy);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu (cpu) has none"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)objective_blocks(cal, 1000, 0, {10, 10}, kItems, SplitObjective::time));
  EXPECT_EQ(parse_split_objective("edp"), SplitObjective::edp);
  EXPECT_THROW((void)parse_split_objective("joules"), UsageError);
}

TEST(EnergySplit, PowerSurvivesTheCalibrationJson) {
  DeviceCalibration d = device("gpu", 0, 0.01, 300.0, 60.0);
  EXPECT_EQ(device_calibration_from_json(to_json(d)), d);
  d.active_w.reset();
  d.idle_w.reset();
  const auto j = to_json(d);
  EXPECT_FALSE(j.contains("active_w"));  // calibrations without a sensor read as before
  EXPECT_EQ(device_calibration_from_json(j), d);
}
