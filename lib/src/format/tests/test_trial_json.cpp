// The one JSON form of a trial and of a stored trial (format/trial_json.hpp):
// round trips, the keys the two forms share, and errors naming the JSON path.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

std::string record_error_of(const json& j) {
  try {
    (void)trial_record_from_json(j, "sessions[0].trials[1]");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TrialRecord full_record() {
  TrialRecord r;
  r.params = json{{"WPT", 2}};
  r.local = Extent{32, 8, 2};
  r.global = Extent{1024, 512, 2};
  r.status = TrialStatus::correct;
  r.samples_ms = {2.5, 2.0};
  r.run_ms = 7.0;
  r.created_at = "2026-01-01T00:00:00.000Z";
  return r;
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

TEST(TrialJson, EnergyRoundTripsAndIsNullWhenNotMeasured) {
  Trial t;
  t.kernel.ms = {2.0};
  EXPECT_TRUE(to_json(t).at("energy").is_null());
  EXPECT_FALSE(trial_from_json(to_json(t), "trial").energy);
  EnergyMeasurement e{"nvml", 0.42, 210.5, 150.25, 75, 1e-3, 15.0, 0.05};
  t.energy = e;
  const json j = to_json(t);
  EXPECT_EQ(j.at("energy").at("sensor"), "nvml");
  EXPECT_EQ(j.at("energy").at("power_w"), 210.5);
  EXPECT_EQ(trial_from_json(j, "trial").energy, e);
  TrialRecord r = full_record();
  r.energy = e;
  EXPECT_EQ(trial_record_from_json(to_json(r), "r").energy, e);
  json bad = j;
  bad["energy"]["power_w"] = -1;
  EXPECT_EQ(error_of(bad), "trial.energy.power_w is -1; give a finite number >= 0");
  bad["energy"] = json{{"sensor", "nvml"}};
  EXPECT_EQ(error_of(bad), "trial.energy has no field 'energy_j'");
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
                                          "run_ms", "verify_ms", "energy", "verified", "wall_ms", "from_store"}));
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

// The store's import reads each stored trial with the one reader: the
// stored form round-trips, unrecorded times stay unrecorded.
TEST(TrialJson, AStoredTrialRoundTripsThroughTheOneReader) {
  const TrialRecord r = full_record();
  const TrialRecord back = trial_record_from_json(to_json(r), "trial");
  EXPECT_EQ(to_json(back), to_json(r));  // every field of the stored form
  EXPECT_EQ(back.run_ms, r.run_ms);
  EXPECT_FALSE(back.compile_ms.has_value()) << "not recorded stays not recorded, not 0";
  EXPECT_FALSE(back.verify_ms.has_value());
  EXPECT_EQ(back.created_at, r.created_at);
}

TEST(TrialJson, AStoredTrialNeedsItsTimeOfRecordingAndATrialDoesNot) {
  json j = to_json(full_record());
  j.erase("created_at");
  EXPECT_NE(record_error_of(j).find("sessions[0].trials[1] has no field 'created_at'"), std::string::npos)
      << record_error_of(j);
  EXPECT_EQ(trial_from_json(j, "trial").kernel.ms, full_record().samples_ms);
  j["created_at"] = 5;
  EXPECT_NE(record_error_of(j).find("sessions[0].trials[1].created_at is 5"), std::string::npos) << record_error_of(j);
}

// Version 1 exports and kernels without parameters: no "params" is {}.
TEST(TrialJson, AbsentParamsAreNone) {
  json j = to_json(full_record());
  j.erase("params");
  EXPECT_EQ(trial_record_from_json(j, "trial").params, json::object());
  EXPECT_EQ(trial_from_json(j, "trial").params, json::object());
}

// What the store cannot hold is refused by the one reader, for a worker's
// answer as for an import (issue 17's checks, now in one place).
TEST(TrialJson, WhatNoDeviceRunsIsRefusedWithItsPath) {
  const json good = to_json(full_record());
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases{
      {[](json& j) { j["local"]["x"] = -8; }, "sessions[0].trials[1].local.x is -8; give a whole number from 1 to"},
      {[](json& j) { j["local"]["x"] = (std::uint64_t{1} << 32) + 1; }, "sessions[0].trials[1].local.x is"},
      {[](json& j) { j["global"]["dims"] = 4; }, "sessions[0].trials[1].global.dims is 4"},
      {[](json& j) {
         j["global"] = {{"x", 8}, {"y", 2}, {"dims", 1}};
       },
       "sessions[0].trials[1].global.y is 2"},
      {[](json& j) { j["samples_ms"][1] = -1.5; }, "sessions[0].trials[1].samples_ms[1] is -1.5"},
      {[](json& j) { j["samples_ms"] = json::array(); }, "sessions[0].trials[1].samples_ms is empty"},
      {[](json& j) { j["run_ms"] = -2; }, "sessions[0].trials[1].run_ms is -2"},
      {[](json& j) { j["params"]["WPT"] = json::array(); }, "sessions[0].trials[1].params.WPT is an array"},
      {[](json& j) { j["error"] = 3; }, "sessions[0].trials[1].error is 3"},
  };
  for (const auto& [edit, want] : cases) {
    json j = good;
    edit(j);
    EXPECT_NE(record_error_of(j).find(want), std::string::npos) << record_error_of(j) << "\nwant: " << want;
  }
  json failed = good;
  failed["status"] = "compile";
  failed["samples_ms"] = json::array();
  EXPECT_EQ(trial_record_from_json(failed, "trial").status, TrialStatus::compile) << "a failed trial has no samples";
}

}  // namespace
