// The one JSON form of a tuning target and of a trial's timing
// (format/target_json.hpp): round trips, defaults, errors naming the document.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "format/target_json.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using nlohmann::json;

namespace {

TuneTarget full_target() {
  TuneTarget t;
  t.kernel = "stencil5";
  t.size = "61x47";
  t.global = Extent{64, 48, 2};
  t.problem = Extent{61, 47, 2};
  t.priority = Priority::y;
  t.limits.max_work_group_size = 1024;
  t.limits.kernel_work_group_size = 512;
  t.limits.max_work_item_sizes = {1024, 1024, 64};
  t.limits.local_mem_bytes = 65536;
  t.limits.kernel_local_mem_bytes = 2048;
  t.limits.local_mem_per_item_bytes = 8;
  t.limits.any_shape = true;
  t.pe_per_cu = 64;
  t.device_name = "Fake GPU";
  t.device_id = "1:0";
  t.device.name = "Fake GPU";
  t.device.compute_units = 8;
  t.device.pe_per_cu = 64;
  t.device_fingerprint = t.device.fingerprint();
  return t;
}

// What `read()` throws as a UsageError, or "(accepted)".
template <class Read>
std::string refusal(Read read) {
  try {
    read();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

// to_json(TuneTarget) writes every field (the device by to_json(DeviceInfo)),
// so equal JSON after the round trip is an equal target.
TEST(TargetJson, ATargetRoundTripsEveryField) {
  const TuneTarget t = full_target();
  const TuneTarget back = tune_target_from_json(to_json(t), "target");
  EXPECT_EQ(to_json(back), to_json(t));
  EXPECT_EQ(back.priority, Priority::y);
  EXPECT_EQ(back.limits.max_work_item_sizes, t.limits.max_work_item_sizes);
  EXPECT_EQ(back.device.fingerprint(), t.device_fingerprint);
}

TEST(TargetJson, AMalformedTargetNamesTheDocumentAndTheField) {
  const auto error_of = [](const json& j) {
    return refusal([&] { (void)tune_target_from_json(j, "the worker's target"); });
  };
  json j = to_json(full_target());
  j.erase("pe_per_cu");
  EXPECT_NE(error_of(j).find("the worker's target"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("pe_per_cu"), std::string::npos) << error_of(j);
  j = to_json(full_target());
  j["priority"] = "z";
  EXPECT_NE(error_of(j).find("priority \"z\" is not x, y or none"), std::string::npos) << error_of(j);
}

TEST(TargetJson, TimingRoundTripsAndAbsentFieldsTakeTheDefaults) {
  TimingOptions t{2, 7, 3.5, 40, 0.02, 90.0};
  t.steady_warmup = 0.05;
  const TimingOptions back = timing_from_json(to_json(t), "timing");
  EXPECT_EQ(to_json(back), to_json(t));
  EXPECT_EQ(back.steady_warmup, t.steady_warmup);
  EXPECT_EQ(back.max_repetitions, t.max_repetitions);
  const TimingOptions defaults;
  const TimingOptions bare = timing_from_json(json{{"warmup", 1}, {"repetitions", 3}}, "timing");
  EXPECT_EQ(bare.max_repetitions, defaults.max_repetitions);
  EXPECT_EQ(bare.steady_warmup, defaults.steady_warmup);
  const std::string no_repetitions = refusal([] { (void)timing_from_json(json{{"warmup", 1}}, "trial.timing"); });
  EXPECT_NE(no_repetitions.find("trial.timing"), std::string::npos) << no_repetitions;
  EXPECT_NE(no_repetitions.find("repetitions"), std::string::npos) << no_repetitions;
}

// JSON has no NaN or infinity: such a bound is written as 0, "off".
TEST(TargetJson, ABoundThatIsNotAFiniteNumberIsOff) {
  TimingOptions t;
  t.min_timed_ms = std::numeric_limits<double>::quiet_NaN();
  t.max_timed_ms = std::numeric_limits<double>::infinity();
  t.max_median_error = -1;
  const json j = to_json(t);
  EXPECT_EQ(j.at("min_timed_ms"), 0.0);
  EXPECT_EQ(j.at("max_timed_ms"), 0.0);
  EXPECT_EQ(j.at("max_median_error"), 0.0);
  EXPECT_EQ(timing_from_json(j, "timing").min_timed_ms, 0.0);
}

}  // namespace
