// The one JSON form of a trial and of a stored trial (format/trial_json.hpp):
// round trips, the keys the two forms share, and errors naming the JSON path.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "format/trial_json.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using nlohmann::json;

namespace {

Trial full_trial() {
  Trial t;
  t.params = json{{"WPT", 4}, {"UNROLL", true}, {"TYPE", "float4"}};
  t.local = Extent{16, 8, 2, 3};
  t.global = Extent{256, 64, 4, 3};
  t.status = TrialStatus::correctness;
  t.error = "output 3 differs";
  t.kernel.ms = {1.5, 1.25, 2.0};
  t.wall_ms = 9.5;
  t.run_wall_ms = 6.25;
  t.compile_ms = 2.5;
  t.verify_ms = 0.75;
  t.verified = true;
  t.from_store = true;
  return t;
}

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

std::string error_of(const json& j) {
  try {
    (void)trial_from_json(j, "trial");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TrialJson, RoundTripsEveryField) {
  const Trial t = full_trial();
  const Trial back = trial_from_json(to_json(t), "trial");
  EXPECT_EQ(back.params, t.params);
  EXPECT_EQ(back.local, t.local);
  EXPECT_EQ(back.global, t.global);
  EXPECT_EQ(back.status, t.status);
  EXPECT_EQ(back.error, t.error);
  EXPECT_EQ(back.kernel.ms, t.kernel.ms);
  EXPECT_EQ(back.wall_ms, t.wall_ms);
  EXPECT_EQ(back.run_wall_ms, t.run_wall_ms);
  EXPECT_EQ(back.compile_ms, t.compile_ms);
  EXPECT_EQ(back.verify_ms, t.verify_ms);
  EXPECT_TRUE(back.verified);
  EXPECT_TRUE(back.from_store);
}

TEST(TrialJson, TheDriversChoiceAndTheTargetsNdrangeAreNull) {
  Trial t;
  t.kernel.ms = {1.0};
  const json j = to_json(t);
  EXPECT_TRUE(j.at("local").is_null());
  EXPECT_TRUE(j.at("global").is_null());
  const Trial back = trial_from_json(j, "trial");
  EXPECT_FALSE(back.local.has_value());
  EXPECT_FALSE(back.global.has_value());
}

TEST(TrialJson, ATrialAndAStoredTrialShareTheirKeys) {
  TrialRecord r;
  r.created_at = "2026-01-01T00:00:00.000Z";
  std::set<std::string> record = keys(to_json(r));
  std::set<std::string> trial = keys(to_json(full_trial()));
  EXPECT_EQ(trial, (std::set<std::string>{"params", "local", "global", "status", "error", "samples_ms", "compile_ms",
                                          "run_ms", "verify_ms", "verified", "wall_ms", "from_store"}));
  for (const char* only : {"verified", "wall_ms", "from_store"}) trial.erase(only);
  record.erase("created_at");
  EXPECT_EQ(record, trial);
}

TEST(TrialJson, AStoredTrialsUnrecordedTimesAreNullAndReadAsZero) {
  TrialRecord r;
  r.local = Extent{8, 1, 1};
  r.samples_ms = {3.0};
  r.run_ms = 4.0;
  const json j = to_json(r);
  EXPECT_TRUE(j.at("compile_ms").is_null());
  EXPECT_TRUE(j.at("verify_ms").is_null());
  EXPECT_EQ(j.at("run_ms"), 4.0);
  const Trial t = trial_from_json(j, "trial");
  EXPECT_EQ(t.compile_ms, 0);
  EXPECT_EQ(t.run_wall_ms, 4.0);
  EXPECT_EQ(t.local, LocalSize(Extent{8, 1, 1}));
}

TEST(TrialJson, TheReportFormAddsTheMedianOfACorrectTrialOnly) {
  Trial t;
  t.kernel.ms = {3.0, 1.0, 2.0};
  EXPECT_EQ(trial_report_json(t).at("median_ms"), 2.0);
  t.status = TrialStatus::timeout;
  EXPECT_TRUE(trial_report_json(t).at("median_ms").is_null());
  EXPECT_EQ(trial_from_json(trial_report_json(t), "trial").status, TrialStatus::timeout);
}

TEST(TrialJson, MalformedInputNamesTheJsonPath) {
  const json good = to_json(full_trial());
  EXPECT_NE(error_of(json::array()).find("trial is an array"), std::string::npos) << error_of(json::array());
  json j = good;
  j.erase("status");
  EXPECT_NE(error_of(j).find("trial has no field 'status'"), std::string::npos) << error_of(j);
  j = good;
  j["status"] = "fine";
  EXPECT_NE(error_of(j).find("trial.status is \"fine\""), std::string::npos) << error_of(j);
  j = good;
  j["samples_ms"][1] = "fast";
  EXPECT_NE(error_of(j).find("trial.samples_ms[1] is \"fast\""), std::string::npos) << error_of(j);
  j = good;
  j["local"] = "8x8";
  EXPECT_NE(error_of(j).find("trial.local is \"8x8\""), std::string::npos) << error_of(j);
  j = good;
  j["global"] = json{{"y", 2}};
  EXPECT_NE(error_of(j).find("trial.global"), std::string::npos) << error_of(j);
  j = good;
  j["params"] = json::array();
  EXPECT_NE(error_of(j).find("trial.params"), std::string::npos) << error_of(j);
  j = good;
  j["run_ms"] = "slow";
  EXPECT_NE(error_of(j).find("trial.run_ms is \"slow\""), std::string::npos) << error_of(j);
  j = good;
  j["verified"] = 1;
  EXPECT_NE(error_of(j).find("trial.verified is 1"), std::string::npos) << error_of(j);
}

}  // namespace
