// wstune::Store: schema, round trips, history, export/import, bad input.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <functional>

#include <fstream>
#include <set>
#include <sstream>

#include "format/json.hpp"
#include "format/t4.hpp"
#include "kernel/kernel.hpp"
#include "session/tune_session.hpp"
#include "test_store_util.hpp"
#include "wstune/store.hpp"
#include "wstune_config.hpp"

using namespace wstune;
using wstune::test::fake_device;
using wstune::test::TempDir;
using wstune::test::trial;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const KernelKey kMatmul{"matmul", "0123456789abcdef", "-cl-fast-relaxed-math"};
const ProblemKey kP1024{Extent{1024, 1024, 2}, "1024"};
const ProblemKey kP4096{Extent{4096, 1, 1}, "4096"};  // 1-D, as trial()'s local sizes

}  // namespace

TEST(Store, EmbeddedSchemaEqualsShareFile) {
  EXPECT_EQ(std::string(schema_sql()), read_file(std::string(WSTUNE_SOURCE_SHARE_DIR) + "/schema.sql"))
      << "the embedded schema (generated from share/schema.sql) differs from the file";
}

TEST(Store, FreshFileIsWalStrictWithVersionAndForeignKeys) {
  TempDir tmp;
  const std::string path = tmp.file("sub/dir/w.db");  // parents are created
  {
    Store s(path);
    EXPECT_EQ(s.schema_version(), kSchemaVersion);
    const CheckReport r = s.check();
    EXPECT_TRUE(r.ok);
    EXPECT_EQ(r.journal_mode, "wal");
  }
  SQLite::Database raw(path, SQLite::OPEN_READWRITE);
  raw.exec("PRAGMA foreign_keys=ON");
  // STRICT: a text in an INTEGER column is refused.
  EXPECT_THROW(raw.exec("INSERT INTO problems(dims,global_x,global_y,global_z,size_text) VALUES(1,'abc',1,1,'')"),
               SQLite::Exception);
  // Foreign keys: a trial of a missing session is refused.
  EXPECT_THROW(raw.exec("INSERT INTO trials(session_id,config,status,error,samples_ms,created_at) "
                        "VALUES(999,'null','correct','','[]','now')"),
               SQLite::Exception);
}

TEST(Store, DeviceRoundTripKeepsEveryProperty) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  const auto id = s.put_device(d);
  EXPECT_EQ(s.put_device(d), id) << "same fingerprint, same row";
  const auto back = s.device(d.fingerprint());
  ASSERT_TRUE(back);
  EXPECT_EQ(to_json(*back), to_json(d));
  EXPECT_EQ(back->extensions, d.extensions);
  EXPECT_EQ(s.devices().size(), 1u);
  EXPECT_FALSE(s.device("ffffffffffffffff"));
}

TEST(Store, TrialsAreStoredOnceWithEverySample) {
  Store s(":memory:");
  const auto sess = s.open_session(fake_device("H100"), kMatmul, kP1024, {"exhaustive", 50, 60.0});
  EXPECT_FALSE(sess.resumed);
  EXPECT_EQ(sess.spec.budget_trials, 50);
  EXPECT_EQ(sess.problem, kP1024);
  EXPECT_TRUE(s.add_trial(sess.id, trial(64, 2.0)));
  EXPECT_FALSE(s.add_trial(sess.id, trial(64, 1.0))) << "an already measured configuration is not overwritten";
  TrialRecord failed = trial(2048, 0, TrialStatus::constraints);
  failed.samples_ms.clear();
  failed.error = "local size above the device limit";
  EXPECT_TRUE(s.add_trial(sess.id, failed));
  TrialRecord null_trial = trial(1, 3.0);
  null_trial.local = std::nullopt;
  EXPECT_EQ(s.add_trials(sess.id, {null_trial, trial(128, 1.5), trial(64, 9.0)}), 2u);
  EXPECT_EQ(s.trial_count(sess.id), 4);
  EXPECT_EQ(s.trial_count(), 4);
  EXPECT_TRUE(s.measured(sess.id, Extent{64, 1, 1}));
  EXPECT_TRUE(s.measured(sess.id, std::nullopt));
  EXPECT_FALSE(s.measured(sess.id, Extent{32, 1, 1}));
  const auto ts = s.trials(sess.id);
  ASSERT_EQ(ts.size(), 4u);
  EXPECT_EQ(ts[0].samples_ms, trial(64, 2.0).samples_ms);
  EXPECT_EQ(ts[0].compile_ms, 1.5);
  EXPECT_EQ(ts[1].status, TrialStatus::constraints);
  EXPECT_EQ(ts[1].error, failed.error);
  EXPECT_FALSE(ts[2].local);
}

TEST(Store, ParametersThreeDimensionsAndNDRangePerTrial) {
  Store s(":memory:");
  const ProblemKey p3{Extent{64, 32, 8, 3}, "ProblemSize=64x32x8"};
  const auto sess = s.open_session(fake_device("H100"), kMatmul, p3, {"random", {}, {}});
  EXPECT_EQ(sess.problem, p3);
  EXPECT_TRUE(sess.pid) << "the writing process is recorded";
  EXPECT_TRUE(sess.heartbeat_at);
  TrialRecord a = trial(1, 2.0);
  a.params = {{"TILE", 16}, {"VEC", true}, {"MODE", "a"}};
  a.local = Extent{8, 4, 2, 3};
  a.global = Extent{16, 32, 8, 3};
  TrialRecord b = a;
  b.params["TILE"] = 32;  // another configuration with the same local size
  b.samples_ms = {1.0};
  EXPECT_TRUE(s.add_trial(sess.id, a));
  EXPECT_TRUE(s.add_trial(sess.id, b));
  EXPECT_FALSE(s.add_trial(sess.id, a)) << "same parameters and local size: already measured";
  EXPECT_TRUE(s.measured(sess.id, a.local, a.params));
  EXPECT_FALSE(s.measured(sess.id, a.local)) << "without parameters it is another configuration";
  const auto ts = s.trials(sess.id);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].params, a.params);
  EXPECT_EQ(ts[0].local, a.local);
  EXPECT_EQ(ts[0].global, a.global);
  const auto best = s.derive_best(sess.id);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->params, b.params);
  EXPECT_EQ(best->local, b.local);
  EXPECT_EQ(best->global, b.global);
  const auto back = s.best_configs({});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].params, b.params);
  EXPECT_EQ(back[0].local, b.local);
  EXPECT_EQ(back[0].problem, p3);
  // Export and import into a fresh store keep parameters, 3-D sizes and NDRanges.
  Store t(":memory:");
  t.import_json(s.export_json());
  const auto ts2 = t.trials(t.sessions().at(0).id);
  ASSERT_EQ(ts2.size(), 2u);
  EXPECT_EQ(ts2[1].params, b.params);
  EXPECT_EQ(ts2[1].global, b.global);
  EXPECT_EQ(t.best_configs({}).at(0).params, b.params);
}

TEST(Store, T4ExportFollowsTheResultsSchema) {
  Store s(":memory:");
  const auto sess = s.open_session(fake_device("H100"), kMatmul, ProblemKey{Extent{512, 512, 512, 3}, "512x512x512"},
                                   {"random", {}, {}});
  TrialRecord a = trial(1, 2.0);
  a.params = {{"TSM", 64}, {"VEC", true}};
  a.local = Extent{16, 16, 2};
  a.verify_ms = 0.5;
  TrialRecord b = a;
  b.params["TSM"] = 32;
  b.status = TrialStatus::compile;
  b.error = "build log";
  b.samples_ms.clear();
  s.add_trial(sess.id, a);
  s.add_trial(sess.id, b);
  const nlohmann::json t4 = t4_results(s);
  // The T4 1.0.0 results schema: schema_version "M.m.p"; results[] with the
  // required configuration (object), times (object), invalidity (enum) and
  // correctness (number).
  ASSERT_TRUE(t4.at("schema_version").is_string());
  EXPECT_EQ(t4["schema_version"], "1.0.0");
  ASSERT_EQ(t4.at("results").size(), 2u);
  const std::set<std::string> invalidity{"timeout", "compile", "runtime", "correctness", "constraints", "correct"};
  for (const auto& r : t4["results"]) {
    ASSERT_TRUE(r.at("configuration").is_object());
    ASSERT_TRUE(r.at("times").is_object());
    ASSERT_TRUE(r.at("times").at("runtimes").is_array());
    EXPECT_TRUE(r.at("times").at("compilation").is_number());
    EXPECT_TRUE(r.at("times").at("validation").is_number());
    EXPECT_TRUE(invalidity.count(r.at("invalidity").get<std::string>()));
    EXPECT_TRUE(r.at("correctness").is_number());
    EXPECT_TRUE(r.at("objectives").is_array());
    EXPECT_TRUE(r.at("measurements").is_array());
    EXPECT_TRUE(r.at("timestamp").is_string());
  }
  EXPECT_EQ(t4["results"][0]["configuration"], (nlohmann::json{{"TSM", 64}, {"VEC", true}, {"local_size", "16x16"}}));
  EXPECT_EQ(t4["results"][0]["times"]["runtimes"], nlohmann::json(a.samples_ms));
  EXPECT_EQ(t4["results"][0]["times"]["validation"], 0.5);
  EXPECT_EQ(t4["results"][0]["correctness"], 1);
  EXPECT_EQ(t4["results"][0]["measurements"][0]["value"], *a.median_ms());
  EXPECT_EQ(t4["results"][1]["invalidity"], "compile");
  EXPECT_EQ(t4["results"][1]["correctness"], 0);
  EXPECT_EQ(t4["metadata"]["timeunit"], "milliseconds");
  EXPECT_EQ(t4["metadata"]["wstune"][0]["session"], sess.uuid);
  EXPECT_THROW((void)t4_results(s, {999}), UsageError);
}

TEST(Store, ConfigurationKeys) {
  EXPECT_EQ(configuration_key(nlohmann::json::object(), std::nullopt), "null");
  EXPECT_EQ(configuration_key(nlohmann::json::object(), Extent{32, 8, 2}), "32x8");
  EXPECT_EQ(configuration_key({{"VEC", true}, {"TILE", 16}, {"MODE", "a"}}, Extent{8, 4, 2, 3}),
            "MODE=\"a\",TILE=16,VEC=true;8x4x2");
  EXPECT_NE(configuration_key({{"A", 1}}, std::nullopt), configuration_key({{"A", "1"}}, std::nullopt));
}

TEST(Store, VersionOneDatabaseMigrates) {
  TempDir tmp;
  const std::string path = tmp.file("v1.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec(std::string(schema_sql()));
    raw.exec("PRAGMA user_version=1");
    raw.exec(
        "INSERT INTO devices VALUES(1,'fp','n','v','gpu','p','d','o','a',1,1,'table','',1,1,'[1]',1,1,1,1,"
        "'[]','{\"name\":\"n\",\"compute_units\":1,\"pe_per_cu\":1}','t')");
    raw.exec("INSERT INTO kernels VALUES(1,'matmul','h','')");
    raw.exec("INSERT INTO problems VALUES(1,2,64,64,1,'64')");
    raw.exec("INSERT INTO sessions VALUES(1,'u',1,1,1,'random',NULL,NULL,'t',NULL,'v','h')");
    raw.exec(
        "INSERT INTO trials(id,session_id,config,local_dims,local_x,local_y,status,error,samples_ms,median_ms,"
        "created_at) VALUES(1,1,'8x8',2,8,8,'correct','','[1.0]',1.0,'t')");
  }
  Store s(path);
  EXPECT_EQ(s.schema_version(), kSchemaVersion);
  const auto ts = s.trials(1);
  ASSERT_EQ(ts.size(), 1u);
  EXPECT_FALSE(ts[0].energy) << "a trial stored before energy was observed has none";
  EXPECT_TRUE(s.session(1)->spec.objectives.empty());
  EXPECT_EQ(ts[0].local, (Extent{8, 8, 2}));
  EXPECT_TRUE(ts[0].params.empty());
  EXPECT_FALSE(ts[0].global);
  EXPECT_TRUE(s.measured(1, Extent{8, 8, 2})) << "a version 1 configuration key is still found";
  EXPECT_FALSE(s.session(1)->pid);
  EXPECT_TRUE(s.check().ok);
}

TEST(Store, EnergyAndObjectivesAreStoredExportedAndInT4) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  const auto sess = s.open_session(d, kMatmul, kP4096, {"exhaustive", {}, {}, {"time:min", "energy:min"}});
  EXPECT_EQ(s.session(sess.id)->spec.objectives, (std::vector<std::string>{"time:min", "energy:min"}));
  TrialRecord with = trial(64, 2.0);
  with.energy = EnergyMeasurement{"nvml", 0.5, 250.0, 100.0, 50, 1e-3, 10.0, 0.02};
  s.add_trials(sess.id, {with, trial(128, 1.0)});
  const auto ts = s.trials(sess.id);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].energy, with.energy);
  EXPECT_FALSE(ts[1].energy);
  // Export and import keep both.
  Store b(":memory:");
  b.import_json(s.export_json());
  const auto sb = b.sessions();
  ASSERT_EQ(sb.size(), 1u);
  EXPECT_EQ(sb[0].spec.objectives, (std::vector<std::string>{"time:min", "energy:min"}));
  EXPECT_EQ(b.trials(sb[0].id)[0].energy, with.energy);
  // T4: the measurements with units, the session's objectives.
  const auto t4 = t4_results(s);
  const auto& m = t4.at("results").at(0).at("measurements");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1], (nlohmann::json{{"name", "energy"}, {"value", 250.0 * 2.0 / 1000}, {"unit", "J"}}));
  EXPECT_EQ(m[2].at("unit"), "W");
  EXPECT_EQ(m[3].at("name"), "edp");
  EXPECT_EQ(t4.at("results").at(0).at("objectives"), (nlohmann::json{"time", "energy"}));
  EXPECT_EQ(t4.at("results").at(1).at("measurements").size(), 1u) << "no energy: time only";
}

TEST(Store, SessionsResumeUntilEnded) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  const auto a = s.open_session(d, kMatmul, kP1024, {"random", {}, {}});
  const auto b = s.open_session(d, kMatmul, kP1024, {"random", {}, {}});
  EXPECT_EQ(a.id, b.id);
  EXPECT_TRUE(b.resumed);
  const auto other = s.open_session(d, kMatmul, kP1024, {"exhaustive", {}, {}});
  EXPECT_NE(other.id, a.id) << "another strategy is another session";
  s.end_session(a.id);
  EXPECT_TRUE(s.session(a.id)->ended_at);
  const auto c = s.open_session(d, kMatmul, kP1024, {"random", {}, {}});
  EXPECT_NE(c.id, a.id);
  EXPECT_FALSE(c.resumed);
  EXPECT_EQ(s.sessions().size(), 3u);
}

TEST(Store, BestIsDerivedFromTrialsAndKeepsHistory) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  const auto sess = s.open_session(d, kMatmul, kP1024, {"exhaustive", {}, {}});
  TrialRecord null_trial = trial(1, 4.0);
  null_trial.local = std::nullopt;
  s.add_trials(sess.id, {null_trial, trial(256, 2.0), trial(512, 1.0), trial(1024, 0.5, TrialStatus::correctness)});
  const LocalSize rule = Extent{256, 1, 1};
  const auto best = s.derive_best(sess.id, &rule);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->local, (LocalSize{Extent{512, 1, 1}})) << "the failed 1024 is not an answer";
  EXPECT_DOUBLE_EQ(best->median_ms, 1.0);
  EXPECT_DOUBLE_EQ(*best->ratio_to_null(), 4.0);
  EXPECT_DOUBLE_EQ(*best->ratio_to_rule(), 2.0);

  BestConfig newer = *best;
  newer.local = Extent{128, 1, 1};
  newer.median_ms = 0.8;
  s.record_best(newer);
  auto filter = [](auto set) {
    BestFilter f;
    set(f);
    return f;
  };
  auto cur = s.best_configs({});
  ASSERT_EQ(cur.size(), 1u);
  EXPECT_EQ(cur[0].local, newer.local);
  EXPECT_EQ(s.best_configs(filter([](BestFilter& f) { f.history = true; })).size(), 2u) << "the older best is kept";
  EXPECT_EQ(s.best_configs(filter([](BestFilter& f) { f.device = "h10"; })).size(), 1u)
      << "name substring, case-insensitive";
  EXPECT_EQ(s.best_configs(filter([](BestFilter& f) { f.kernel = "sort"; })).size(), 0u);
  EXPECT_EQ(s.best_configs(filter([](BestFilter& f) { f.global = Extent{1024, 1024, 2}; })).size(), 1u);
  EXPECT_EQ(s.exact_best(d.fingerprint(), kMatmul, Extent{1024, 1024, 2})->local, newer.local);
  EXPECT_FALSE(s.exact_best(d.fingerprint(), kMatmul, Extent{1024, 512, 2}));
  EXPECT_FALSE(s.exact_best(d.fingerprint(), KernelKey{"matmul", kMatmul.source_hash, ""}, Extent{1024, 1024, 2}))
      << "other build options: another kernel";
  const auto cands = s.candidates(kMatmul, 2, d.fingerprint(), {}, {}, {});
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_DOUBLE_EQ(cands[0].median_ms, newer.median_ms);
  EXPECT_EQ(cands[0].null_ms, newer.null_ms);
}

TEST(Store, SplitRunsAndCalibrations) {
  Store s(":memory:");
  const DeviceInfo gpu = fake_device("H100"), cpu = fake_device("EPYC", "", "AMD", "cpu", 16);
  s.put_device(gpu);
  s.put_device(cpu);
  SplitRun run{
      kMatmul,         kP1024, "pe-ratio", 12.5, {{gpu.fingerprint(), 0.9, 12.5}, {cpu.fingerprint(), 0.1, 11.0}},
      {{"note", "x"}}, {},     {}};
  s.record_split_run(run);
  const auto runs = s.split_runs("matmul");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].devices.size(), 2u);
  EXPECT_DOUBLE_EQ(runs[0].devices[1].share, 0.1);
  EXPECT_EQ(runs[0].detail["note"], "x");
  EXPECT_TRUE(s.split_runs("sort").empty());
  s.put_calibration({gpu.fingerprint(), kMatmul, "measured", {{"a", 1}}, {}});
  s.put_calibration({gpu.fingerprint(), kMatmul, "measured", {{"a", 2}}, {}});
  EXPECT_EQ(s.calibration(gpu.fingerprint(), "matmul", "measured")->params["a"], 2);
  EXPECT_FALSE(s.calibration(cpu.fingerprint(), "matmul", "measured"));
  EXPECT_EQ(s.check().calibrations, 2) << "history kept";
}

TEST(Store, ExportImportMergesWithoutDuplicates) {
  Store a(":memory:");
  const DeviceInfo d = fake_device("H100");
  const auto sess = a.open_session(d, kMatmul, kP4096, {"exhaustive", {}, {}});
  a.add_trials(sess.id, {trial(64, 2.0), trial(128, 1.0)});
  a.derive_best(sess.id);
  a.record_split_run({kMatmul, kP4096, "pe-ratio", 3, {{d.fingerprint(), 1.0, 3}}, {}, {}, {}});
  a.put_calibration({d.fingerprint(), kMatmul, "measured", {{"k", 1}}, {}});
  const auto doc = a.export_json();

  Store b(":memory:");
  const auto st = b.import_json(doc);
  EXPECT_EQ(st.devices, 1);
  EXPECT_EQ(st.sessions, 1);
  EXPECT_EQ(st.trials, 2);
  EXPECT_EQ(st.best_configs, 1);
  EXPECT_EQ(st.split_runs, 1);
  EXPECT_EQ(st.calibrations, 1);
  const auto again = b.import_json(doc);
  EXPECT_EQ(again.trials + again.sessions + again.best_configs + again.devices, 0);
  EXPECT_GT(again.skipped, 0);
  EXPECT_EQ(b.trial_count(), 2);
  // The round trip is lossless (timestamps included).
  auto strip = [](nlohmann::json j) {
    j.erase("exported_at");
    return j;
  };
  EXPECT_EQ(strip(b.export_json()), strip(doc));
  // A new trial in A's session merges into B's copy of it.
  a.add_trial(sess.id, trial(256, 0.7));
  EXPECT_EQ(b.import_json(a.export_json()).trials, 1);
  EXPECT_EQ(b.trial_count(), 3);
}

TEST(Store, MalformedImportIsRefusedAndChangesNothing) {
  Store a(":memory:");
  const DeviceInfo d = fake_device("H100");
  const auto sess = a.open_session(d, kMatmul, kP4096, {"exhaustive", {}, {}});
  a.add_trials(sess.id, {trial(64, 2.0), trial(128, 1.0)});
  const auto good = a.export_json();
  Store b(":memory:");
  auto bad = good;
  bad["sessions"][0]["trials"][1].erase("samples_ms");  // the first trial is valid, the second is not
  try {
    b.import_json(bad);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sessions[0].trials[1]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(b.trial_count(), 0);
  EXPECT_TRUE(b.devices().empty());
  auto wrong_status = good;
  wrong_status["sessions"][0]["trials"][0]["status"] = "exploded";
  EXPECT_THROW(b.import_json(wrong_status), UsageError);
  auto edited = good;
  edited["devices"][0]["compute_units"] = 7;  // fingerprint no longer matches
  EXPECT_THROW(b.import_json(edited), UsageError);
  EXPECT_THROW(b.import_json(nlohmann::json{{"format", "something else"}}), UsageError);
  EXPECT_THROW(b.import_json(nlohmann::json::array()), UsageError);
  EXPECT_EQ(b.check().sessions, 0);
}

// Issue 17: import accepted negative or huge local sizes (stored as -8,
// shown as 18446744073709551608), local sizes that do not divide the global
// size, mismatched dimensions, bad uuids, empty or negative samples, schema
// version 99, best rows of missing sessions. Each is refused with the JSON
// path, as a UsageError (exit 2), and nothing is written.
TEST(Store, ImportRefusesWhatTheStoreCannotHold) {
  Store a(":memory:");
  const DeviceInfo d = fake_device("H100");
  const auto sess = a.open_session(d, kMatmul, kP4096, {"exhaustive", {}, {}});
  a.add_trials(sess.id, {trial(64, 2.0), trial(128, 1.0), trial(96, 0, TrialStatus::constraints)});
  a.derive_best(sess.id);
  a.record_split_run({kMatmul, kP4096, "even", 3, {{d.fingerprint(), 1.0, 3}}, {{"k", 1}}, {}, {}});
  a.put_calibration({d.fingerprint(), kMatmul, "measured", {{"k", 1}}, {}});
  const nlohmann::json good = a.export_json();
  {
    Store b(":memory:");
    EXPECT_EQ(b.import_json(good).trials, 3) << "a failed trial's local size need not divide";
  }
  nlohmann::json deep = 1;
  for (int i = 0; i < 300; ++i) deep = nlohmann::json::array({std::move(deep)});
  const std::string missing(32, 'f');
  struct Case {
    std::string what;
    std::function<void(nlohmann::json&)> edit;
    std::string path;  // expected in the message
  };
  const std::vector<Case> cases{
      {"negative local size", [](auto& j) { j["sessions"][0]["trials"][0]["local"]["x"] = -8; },
       "sessions[0].trials[0].local.x"},
      {"huge local size", [](auto& j) { j["sessions"][0]["trials"][0]["local"]["x"] = 18446744073709551608ull; },
       "sessions[0].trials[0].local.x"},
      {"local size that does not divide", [](auto& j) { j["sessions"][0]["trials"][1]["local"]["x"] = 48; },
       "sessions[0].trials[1].local"},
      {"mismatched dimensions",
       [](auto& j) {
         j["sessions"][0]["trials"][0]["local"] = {{"x", 64}, {"y", 2}, {"dims", 2}};
       },
       "sessions[0].trials[0].local"},
      {"bad session uuid", [](auto& j) { j["sessions"][0]["uuid"] = "s1"; }, "sessions[0].uuid"},
      {"bad best uuid", [](auto& j) { j["best_configs"][0]["uuid"] = "ZZ"; }, "best_configs[0].uuid"},
      {"empty samples of a correct trial",
       [](auto& j) { j["sessions"][0]["trials"][0]["samples_ms"] = nlohmann::json::array(); },
       "sessions[0].trials[0].samples_ms"},
      {"negative sample", [](auto& j) { j["sessions"][0]["trials"][1]["samples_ms"][2] = -1.5; },
       "sessions[0].trials[1].samples_ms[2]"},
      {"schema version 99", [](auto& j) { j["schema_version"] = 99; }, "schema_version 99"},
      {"format version 0", [](auto& j) { j["format_version"] = 0; }, "format version 0"},
      {"best of a missing session", [&](auto& j) { j["best_configs"][0]["session"] = missing; },
       "best_configs[0].session"},
      {"best local that does not divide", [](auto& j) { j["best_configs"][0]["local"]["x"] = 3000; },
       "best_configs[0].local"},
      {"zero best median", [](auto& j) { j["best_configs"][0]["median_ms"] = 0; }, "best_configs[0].median_ms"},
      {"repeated session uuid", [](auto& j) { j["sessions"].push_back(j["sessions"][0]); }, "sessions[1].uuid"},
      {"repeated configuration", [](auto& j) { j["sessions"][0]["trials"].push_back(j["sessions"][0]["trials"][0]); },
       "sessions[0].trials[3]"},
      {"share over 1", [](auto& j) { j["split_runs"][0]["devices"][0]["share"] = 1.5; },
       "split_runs[0].devices[0].share"},
      {"negative compute units", [](auto& j) { j["devices"][0]["compute_units"] = -132; }, "devices[0].compute_units"},
      {"deep calibration params", [&](auto& j) { j["calibrations"][0]["params"] = deep; }, "calibrations[0].params"},
      {"problem of 4 dimensions", [](auto& j) { j["sessions"][0]["problem"]["global"]["dims"] = 4; },
       "sessions[0].problem.global.dims"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json doc = good;
    c.edit(doc);
    Store b(":memory:");
    try {
      b.import_json(doc);
      ADD_FAILURE() << "imported";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.path), std::string::npos) << e.what();
      EXPECT_LT(std::string(e.what()).size(), 600u) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a UsageError: " << e.what();
    }
    const CheckReport r = b.check();
    EXPECT_EQ(r.devices + r.sessions + r.trials + r.best_configs + r.split_runs + r.calibrations, 0);
  }
}

// Issue 17: stored free-form JSON nested deeper than kMaxJsonDepth is
// refused on the way in (its dump recurses per level).
TEST(Store, DeepFreeFormJsonIsRefused) {
  Store s(":memory:");
  const DeviceInfo d = fake_device("H100");
  s.put_device(d);
  nlohmann::json deep = 1;
  for (int i = 0; i < 300; ++i) deep = nlohmann::json::array({std::move(deep)});
  EXPECT_THROW(s.put_calibration({d.fingerprint(), kMatmul, "measured", deep, {}}), UsageError);
  EXPECT_THROW(s.record_split_run({kMatmul, kP4096, "even", 3, {{d.fingerprint(), 1.0, 3}}, deep, {}, {}}), UsageError);
  EXPECT_EQ(s.check().calibrations + s.check().split_runs, 0);
}

TEST(StoreBadInput, ImpossibleDirectoryIsAClearError) {
  TempDir tmp;
  std::ofstream(tmp.file("plain")) << "x";
  try {
    Store s(tmp.file("plain/sub/w.db"));
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create directory"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Store{tmp.path.string()}, StoreError) << "a directory is not a database";
}

TEST(StoreBadInput, CorruptFileIsRefusedAndLeftIntact) {
  TempDir tmp;
  const std::string path = tmp.file("bad.db");
  const std::string junk(4096, 'z');
  std::ofstream(path, std::ios::binary) << junk;
  try {
    Store s(path);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(path), junk);
}

TEST(StoreBadInput, NewerSchemaIsRefusedAndLeftIntact) {
  TempDir tmp;
  const std::string path = tmp.file("new.db");
  {
    Store s(path);
    s.put_device(fake_device("H100"));
  }
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA user_version=99");
  }
  try {
    Store s(path);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("newer wstune"), std::string::npos) << e.what();
  }
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 99);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM devices").getInt(), 1);
}

TEST(StoreBadInput, ForeignSqliteFileIsRefused) {
  TempDir tmp;
  const std::string path = tmp.file("other.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("CREATE TABLE mine(x INTEGER)");
  }
  EXPECT_THROW(Store{path}, StoreError);
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(raw.execAndGet("SELECT count(*) FROM sqlite_master WHERE name='devices'").getInt(), 0);
}

TEST(StoreBadInput, ReadOnlyDatabaseRefusesWritesClearly) {
  TempDir tmp;
  const std::string path = tmp.file("ro.db");
  std::int64_t sid = 0;
  {
    Store s(path);
    sid = s.open_session(fake_device("H100"), kMatmul, kP1024, {"x", {}, {}}).id;
    s.add_trial(sid, trial(64, 1.0));
  }
  {
    Store ro(path, {.read_only = true});
    EXPECT_EQ(ro.trial_count(), 1);
    try {
      ro.add_trial(sid, trial(128, 1.0));
      FAIL() << "expected StoreError";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
    }
  }
  if (geteuid() != 0) {  // root ignores file permissions
    chmod(path.c_str(), 0444);
    EXPECT_THROW(Store{path}, StoreError);
    chmod(path.c_str(), 0644);
  }
  EXPECT_EQ(Store(path).trial_count(), 1);
  EXPECT_THROW(Store(tmp.file("missing.db"), {.read_only = true}), StoreError);
}

TEST(StoreBadInput, LockedDatabaseIsAClearErrorAndLosesNothing) {
  TempDir tmp;
  const std::string path = tmp.file("locked.db");
  Store s(path, {.busy_timeout_ms = 100});
  const auto sid = s.open_session(fake_device("H100"), kMatmul, kP1024, {"x", {}, {}}).id;
  s.add_trial(sid, trial(64, 1.0));
  {
    SQLite::Database other(path, SQLite::OPEN_READWRITE);
    other.exec("BEGIN IMMEDIATE");
    try {
      s.add_trial(sid, trial(128, 1.0));
      FAIL() << "expected StoreError";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("locked"), std::string::npos) << e.what();
    }
    other.exec("ROLLBACK");
  }
  EXPECT_TRUE(s.add_trial(sid, trial(128, 1.0)));
  EXPECT_EQ(s.trial_count(), 2);
}

TEST(StoreBadInput, DefaultPathFollowsEnvironment) {
  setenv("WSTUNE_DB", "/tmp/x/y.db", 1);
  EXPECT_EQ(default_db_path(), "/tmp/x/y.db");
  unsetenv("WSTUNE_DB");
  setenv("XDG_DATA_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(default_db_path(), "/tmp/xdg/wstune/wstune.db");
  unsetenv("XDG_DATA_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(default_db_path(), "/home/u/.local/share/wstune/wstune.db");
}

// A described kernel's NDRange (GlobalSize) is not its problem extent
// (ProblemSize): a trial that ran the baseline's NDRange (Trial::global
// empty) is stored with it, so the session exports, imports elsewhere and
// replays (a stored trial without an NDRange means the problem extent).
TEST(StoredTuneSession, TrialsOfAKernelWhoseNDRangeIsNotItsProblemStoreTheirNDRange) {
  Store s(":memory:");
  TuneTarget t;
  t.kernel = "matmul_tiled";
  t.size = "32x32x32";
  t.global = Extent{32, 32, 2};       // GlobalSize of the baseline configuration
  t.problem = Extent{32, 32, 32, 3};  // ProblemSize
  t.device = test::fake_device("H100");
  StoredTuneSession session(s, kernel_spec("trapezoid"), t, SessionSpec{"exhaustive", {}, {}}, false);
  TuneOptions o;
  session.attach(o);
  Trial baseline;
  baseline.params = {{"WPT", 1}};
  baseline.local = Extent{16, 16, 2};
  baseline.kernel.ms = {1.0, 1.1};
  o.on_trial(baseline, TrialPhase::baseline);
  Trial own = baseline;  // a parameter value that sets another NDRange
  own.params = {{"WPT", 2}};
  own.global = Extent{16, 32, 2};
  own.local = Extent{8, 16, 2};
  own.kernel.ms = {0.6, 0.7};
  o.on_trial(own, TrialPhase::search);
  Trial failed = baseline;  // failed before its NDRange was known
  failed.params = {{"WPT", 4}};
  failed.status = TrialStatus::compile;
  failed.kernel.ms.clear();
  o.on_trial(failed, TrialPhase::search);
  const auto rows = s.trials(session.session().id);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) {
    ASSERT_TRUE(r.global) << r.params.dump();
    EXPECT_EQ(*r.global, r.params.at("WPT") == 2 ? Extent(16, 32, 2) : Extent(32, 32, 2)) << r.params.dump();
  }
  TuneResult r;  // the baseline is the best: its NDRange is the baseline's
  r.baseline = baseline;
  r.best = baseline;
  const auto best = session.finish(r);
  ASSERT_TRUE(best && best->global);
  EXPECT_EQ(*best->global, Extent(32, 32, 2));
  Store other(":memory:");
  const ImportStats imported = other.import_json(s.export_json());
  EXPECT_EQ(imported.trials, 3);
  EXPECT_EQ(imported.best_configs, 1);

  // Where the NDRange is the problem's extent, a trial stores none.
  Store plain(":memory:");
  t.problem = t.global;
  StoredTuneSession same(plain, kernel_spec("trapezoid"), t, SessionSpec{"exhaustive", {}, {}}, false);
  ASSERT_TRUE(same.record(baseline));
  EXPECT_FALSE(plain.trials(same.session().id).front().global);
}

// The stored best is tune()'s answer with its medians over every trial
// (confirmation rounds included), not the fastest first trial in the store.
TEST(StoredTuneSession, FinishRecordsTheAnswerOfTuneWithMergedMedians) {
  Store s(":memory:");
  TuneTarget t;
  t.kernel = "trapezoid";
  t.size = "4";
  t.global = Extent{4, 1, 1};
  t.device = test::fake_device("H100");
  StoredTuneSession session(s, kernel_spec("trapezoid"), t, SessionSpec{"exhaustive", {}, {}}, false);
  TuneOptions o;
  session.attach(o);
  Trial null_first;  // NULL's first trial ran at a lucky moment
  null_first.kernel.ms = {0.5, 0.5, 0.5};
  o.on_trial(null_first, TrialPhase::baseline);
  Trial four;
  four.local = Extent{4, 1, 1};
  four.kernel.ms = {0.9, 0.9, 0.9};
  o.on_trial(four, TrialPhase::search);
  Trial null_again = null_first;
  null_again.kernel.ms = {1.0, 1.0, 1.0};
  o.on_trial(null_again, TrialPhase::tiebreak);  // not a new row
  EXPECT_EQ(s.trials(session.session().id).size(), 2u);

  TuneResult r;
  r.baseline = null_first;
  r.baseline.kernel.ms = {0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};  // merged: median 1.0
  r.best = four;
  const auto best = session.finish(r);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->local, LocalSize(Extent{4, 1, 1}));
  EXPECT_DOUBLE_EQ(best->median_ms, 0.9);
  ASSERT_TRUE(best->null_ms);
  EXPECT_DOUBLE_EQ(*best->null_ms, 1.0);
  const auto stored = s.best_configs();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored.front().local, LocalSize(Extent{4, 1, 1}));
  // Without a correct answer from tune(), the best is derived from the rows
  // (there: NULL's first trial, 0.5 ms).
  StoredTuneSession other(s, kernel_spec("trapezoid"), t, SessionSpec{"random", {}, {}}, false);
  TuneOptions o2;
  other.attach(o2);
  o2.on_trial(null_first, TrialPhase::baseline);
  TuneResult failed;
  failed.best.status = TrialStatus::runtime;
  const auto derived = other.finish(failed);
  ASSERT_TRUE(derived);
  EXPECT_FALSE(derived->local);
  EXPECT_DOUBLE_EQ(derived->median_ms, 0.5);
}
