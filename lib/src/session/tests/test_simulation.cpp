// Simulation mode (simulation.hpp): tables from the store, export files and
// T4 files, the space a table defines, exact replay through tune(), Kernel
// Tuner's cache format, and clear errors for malformed tables.
#include <gtest/gtest.h>

#include <unistd.h>
#include <bit>
#include <filesystem>
#include <fstream>

#include "format/t4.hpp"
#include "search/search.hpp"
#include "session/simulation.hpp"
#include "wstune/error.hpp"
#include "wstune/store.hpp"
#include "wstune/tuner.hpp"

using namespace wstune;
using json = nlohmann::json;

namespace {

// A T4 document of `n` configurations of two parameters (A, B): A × 10 + B ms.
json t4_doc(int n) {
  json results = json::array();
  for (int i = 0; i < n; ++i) {
    const int a = i / 3, b = i % 3;
    results.push_back({{"configuration", {{"A", a}, {"B", b}}},
                       {"times", {{"runtimes", {a * 10.0 + b + 1, a * 10.0 + b + 1.2, a * 10.0 + b + 0.9}}}},
                       {"invalidity", "correct"},
                       {"correctness", 1}});
  }
  return {{"schema_version", "1.0.0"}, {"results", results}, {"metadata", {{"timeunit", "milliseconds"}}}};
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

// A store with one session of local sizes: NULL first, then 4 shapes.
std::int64_t fill_store(Store& s) {
  DeviceInfo d;
  d.name = "dev";
  d.type = "cpu";
  d.pe_per_cu = 8;
  d.max_work_group_size = 256;
  const auto sess = s.open_session(d, KernelKey{"matmul", "", ""}, ProblemKey{Extent{64, 64, 2}, "64"},
                                   SessionSpec{"exhaustive", {}, {}}, false);
  auto rec = [](LocalSize l, std::vector<double> ms) {
    TrialRecord r;
    r.local = l;
    r.samples_ms = std::move(ms);
    return r;
  };
  s.add_trial(sess.id, rec(std::nullopt, {2.0, 2.2, 1.9}));
  s.add_trial(sess.id, rec(Extent{8, 8, 2}, {1.0, 1.4, 1.1, 0.9}));
  s.add_trial(sess.id, rec(Extent{16, 4, 2}, {1.5}));
  s.add_trial(sess.id, rec(Extent{4, 16, 2}, {3.0, 3.1}));
  TrialRecord failed = rec(Extent{64, 4, 2}, {});
  failed.status = TrialStatus::runtime;
  failed.error = "CL_OUT_OF_RESOURCES";
  s.add_trial(sess.id, failed);
  return sess.id;
}

}  // namespace

TEST(Simulation, AStoreSessionReplaysItsRecordedMediansExactly) {
  Store s(":memory:");
  const auto id = fill_store(s);
  const RecordedTable table = table_from_store(s, id);
  ASSERT_EQ(table.trials.size(), 5u);
  EXPECT_FALSE(table.trials.front().local);  // the baseline
  EXPECT_TRUE(table.parameters.empty());
  SimulatedEvaluator ev(table);
  EXPECT_EQ(ev.space().size(), 4u);
  EXPECT_EQ(ev.target().kernel, "matmul");
  EXPECT_EQ(ev.target().global, (Extent{64, 64, 2}));
  // Exhaustive with the default confirmation rounds: every median, merged
  // over re-measurements, is the recorded one.
  auto searcher = make_exhaustive_searcher();
  const TuneResult r = tune(ev, *searcher, *never_stop());
  EXPECT_GT(r.tiebreak_trials, 0u);
  ASSERT_EQ(r.trials.size(), table.trials.size());
  for (const auto& t : r.trials) {
    const auto& rec =
        *std::find_if(table.trials.begin(), table.trials.end(), [&](const Trial& x) { return x.local == t.local; });
    EXPECT_EQ(t.status, rec.status) << to_string(t.local);
    if (t.ok()) {
      EXPECT_DOUBLE_EQ(t.median_ms(), rec.median_ms()) << to_string(t.local);
    }
  }
  ASSERT_TRUE(r.best.local);
  EXPECT_EQ(*r.best.local, (Extent{8, 8, 2}));
  EXPECT_DOUBLE_EQ(r.best.median_ms(), 1.05);
  EXPECT_EQ(table.best(), 1u);
}

TEST(Simulation, AConfigurationMissingFromTheTableIsAConstraintsTrial) {
  SimulatedEvaluator ev(table_from_t4(t4_doc(6), "t.json"));
  const Trial t = ev.evaluate(Configuration{{{"A", 7}, {"B", 0}}, std::nullopt}, TimingOptions{});
  EXPECT_EQ(t.status, TrialStatus::constraints);
  EXPECT_NE(t.error.find("not in the recorded table"), std::string::npos);
  const Trial ok = ev.evaluate(Configuration{{{"A", 1}, {"B", 2}}, std::nullopt}, TimingOptions{});
  EXPECT_TRUE(ok.ok());
  EXPECT_DOUBLE_EQ(ok.median_ms(), 13.0);
  EXPECT_EQ(ev.calls(), 2u);
}

TEST(Simulation, AnExportFileGivesTheSameTableAsTheStore) {
  Store s(":memory:");
  const auto id = fill_store(s);
  const RecordedTable direct = table_from_store(s, id);
  const RecordedTable via = table_from_export(s.export_json(), "x.json");
  ASSERT_EQ(via.trials.size(), direct.trials.size());
  for (std::size_t i = 0; i < via.trials.size(); ++i) {
    EXPECT_EQ(via.trials[i].configuration(), direct.trials[i].configuration());
    EXPECT_EQ(via.trials[i].kernel.ms, direct.trials[i].kernel.ms);
    EXPECT_EQ(via.trials[i].status, direct.trials[i].status);
  }
  EXPECT_EQ(via.target.device_name, "dev");
  EXPECT_NE(via.source.find("x.json"), std::string::npos);
}

TEST(Simulation, AnExportWithSeveralSessionsNeedsOnePicked) {
  Store s(":memory:");
  fill_store(s);
  fill_store(s);
  const json doc = s.export_json();
  const std::string msg = message_of([&] { (void)table_from_export(doc, "two.json"); });
  EXPECT_NE(msg.find("two.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--session"), std::string::npos) << msg;
  const std::string uuid = doc["sessions"][1]["uuid"];
  EXPECT_EQ(table_from_export(doc, "two.json", uuid).trials.size(), 5u);
  EXPECT_NE(message_of([&] { (void)table_from_export(doc, "two.json", "nope"); }).find("no session nope"),
            std::string::npos);
}

TEST(Simulation, AT4TableDefinesItsOwnSpace) {
  json doc = t4_doc(9);
  doc["results"][4]["invalidity"] = "compile";
  doc["results"][4]["times"]["runtimes"] = json::array();
  doc["results"].erase(7);  // A=2, B=1 never recorded: left out of the space
  const RecordedTable t = table_from_t4(doc, "t4.json");
  ASSERT_EQ(t.parameters.size(), 2u);
  EXPECT_EQ(t.parameters[0].name, "A");
  EXPECT_EQ(t.parameters[0].values, (std::vector<json>{0, 1, 2}));
  const SearchSpace space = table_space(t);
  EXPECT_EQ(space.size(), 7u);  // 8 recorded, the first is the baseline
  EXPECT_EQ(space.baseline(), (Configuration{{{"A", 0}, {"B", 0}}, std::nullopt}));
  EXPECT_FALSE(space.find(Configuration{{{"A", 2}, {"B", 1}}, std::nullopt}));
  EXPECT_TRUE(space.find(Configuration{{{"A", 2}, {"B", 2}}, std::nullopt}));
  EXPECT_EQ(t.trials[4].status, TrialStatus::compile);
  EXPECT_EQ(t.best(), 0u);
}

TEST(Simulation, T4TimeUnitsAndTheTimeMeasurementAreRead) {
  json doc = t4_doc(2);
  doc["metadata"]["timeunit"] = "seconds";
  doc["results"][1]["times"].erase("runtimes");
  doc["results"][1]["measurements"] = {{{"name", "time"}, {"value", 0.5}, {"unit", "s"}}};
  const RecordedTable t = table_from_t4(doc, "t4.json");
  EXPECT_DOUBLE_EQ(t.trials[0].median_ms(), 1000.0);
  EXPECT_DOUBLE_EQ(t.trials[1].median_ms(), 500.0);
}

TEST(Simulation, MalformedT4FilesAreRejectedNamingTheJsonPath) {
  auto msg = [](json doc) { return message_of([&] { (void)table_from_t4(doc, "bad.json"); }); };
  EXPECT_NE(msg(json{{"schema_version", "1.0.0"}}).find("bad.json: document has no array 'results'"),
            std::string::npos);
  json d = t4_doc(3);
  d["results"][1]["times"]["runtimes"][0] = "fast";
  EXPECT_NE(msg(d).find("bad.json: results[1].times.runtimes[0] is not a number"), std::string::npos) << msg(d);
  d = t4_doc(3);
  d["results"][2].erase("invalidity");
  EXPECT_NE(msg(d).find("results[2] has no field 'invalidity'"), std::string::npos) << msg(d);
  d = t4_doc(3);
  d["results"][0]["invalidity"] = "slow";
  EXPECT_NE(msg(d).find("results[0].invalidity is not one of"), std::string::npos) << msg(d);
  d = t4_doc(3);
  d["results"][2]["configuration"] = d["results"][0]["configuration"];
  EXPECT_NE(msg(d).find("results[2].configuration repeats"), std::string::npos) << msg(d);
  d = t4_doc(3);
  d["results"][1]["configuration"]["C"] = 1;
  EXPECT_NE(msg(d).find("results[1].configuration has other parameter names"), std::string::npos) << msg(d);
  d = t4_doc(3);
  d["results"][1]["configuration"]["B"] = json::array();
  EXPECT_NE(msg(d).find("results[1].configuration.B is not a number, bool or string"), std::string::npos) << msg(d);
  d = t4_doc(3);
  d["results"][1]["times"]["runtimes"] = json::array();
  EXPECT_NE(msg(d).find("results[1] is correct but has no times.runtimes"), std::string::npos) << msg(d);
  d = t4_doc(1);
  d["metadata"]["timeunit"] = "fortnights";
  EXPECT_NE(msg(d).find("metadata.timeunit"), std::string::npos) << msg(d);
}

TEST(Simulation, MalformedExportFilesAreRejectedNamingTheJsonPath) {
  Store s(":memory:");
  fill_store(s);
  json doc = s.export_json();
  doc["sessions"][0]["trials"][3].erase("samples_ms");
  const std::string msg = message_of([&] { (void)table_from_export(doc, "e.json"); });
  EXPECT_NE(msg.find("e.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sessions[0].trials[3] has no field 'samples_ms'"), std::string::npos) << msg;
}

TEST(Simulation, LoadTableReadsBothFormatsAndNamesABadFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("wstune-sim-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string t4 = (dir / "t4.json").string(), bad = (dir / "bad.json").string(),
                    other = (dir / "o.json").string();
  std::ofstream(t4) << t4_doc(4).dump();
  std::ofstream(bad) << "{ not json";
  std::ofstream(other) << R"({"hello": 1})";
  EXPECT_EQ(load_table(t4).trials.size(), 4u);
  EXPECT_NE(message_of([&] { (void)load_table(bad); }).find(bad + ": not JSON"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)load_table(other); }).find("neither"), std::string::npos);
  EXPECT_NE(message_of([&] { (void)load_table((dir / "missing.json").string()); }).find("cannot read"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Simulation, KernelTunerCacheKeysFollowItsFormat) {
  Store s(":memory:");
  const auto id = fill_store(s);
  const auto cache = kernel_tuner_cache(table_from_store(s, id));
  EXPECT_EQ(cache["tune_params_keys"], (nlohmann::ordered_json{"block_size_x", "block_size_y"}));
  EXPECT_EQ(cache["problem_size"], (nlohmann::ordered_json{64, 64}));
  EXPECT_EQ(cache.items().begin().key(), "device_name");
  std::string last;
  for (const auto& it : cache.items()) last = it.key();
  EXPECT_EQ(last, "cache");  // Kernel Tuner reads a file ending in "}}}" as closed
  const auto& c = cache["cache"];
  ASSERT_EQ(c.size(), 5u);
  EXPECT_DOUBLE_EQ(c["8,8"]["time"].get<double>(), 1.05);
  EXPECT_EQ(c["0,0"]["time"].get<double>(), 2.0);  // NULL
  EXPECT_EQ(c["64,4"]["time"], "RuntimeFailedConfig");
  EXPECT_EQ(c["16,4"]["block_size_x"], 16);
  // Python's str() of bools in keys.
  json doc = t4_doc(1);
  doc["results"][0]["configuration"] = {{"USE", true}, {"NAME", "tiled"}};
  const auto kt = kernel_tuner_cache(table_from_t4(doc, "b.json"));
  EXPECT_TRUE(kt["cache"].contains("tiled,True"));
}

TEST(Simulation, SyntheticTablesSatisfyTheirConstraintAndAreDeterministic) {
  const SyntheticSpec spec{4, 6, 0.1, 3, 0.05, 7};
  const RecordedTable a = synthetic_table(spec), b = synthetic_table(spec);
  ASSERT_EQ(a.trials.size(), b.trials.size());
  std::size_t failed = 0;
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    EXPECT_EQ(a.trials[i].kernel.ms, b.trials[i].kernel.ms);
    const auto& p = a.trials[i].params;
    const auto idx = [&](const char* n) { return std::countr_zero(p.at(n).get<std::size_t>()); };
    EXPECT_LT(idx("P0") + idx("P1"), 6);
    failed += !a.trials[i].ok();
  }
  EXPECT_EQ(a.trials.size(), 21u * 36u);  // 21 (P0, P1) pairs below the bound × 6 × 6
  EXPECT_GT(failed, 0u);
  EXPECT_TRUE(a.trials.front().ok());
  EXPECT_EQ(table_space(a).size(), a.trials.size() - 1);
  EXPECT_THROW((void)synthetic_table(SyntheticSpec{1, 6}), UsageError);
}

TEST(Simulation, WstunesOwnT4ExportReplaysAsTheStoreSession) {
  Store s(":memory:");
  const auto id = fill_store(s);
  const RecordedTable direct = table_from_store(s, id);
  const RecordedTable via = table_from_t4(t4_results(s, {id}), "export.t4.json");
  ASSERT_EQ(via.trials.size(), direct.trials.size());
  EXPECT_TRUE(via.parameters.empty());  // "local_size" is the local size, not a parameter
  for (std::size_t i = 0; i < via.trials.size(); ++i) {
    EXPECT_EQ(via.trials[i].configuration(), direct.trials[i].configuration()) << i;
    EXPECT_EQ(via.trials[i].status, direct.trials[i].status) << i;
    EXPECT_EQ(via.trials[i].kernel.ms, direct.trials[i].kernel.ms) << i;
  }
  EXPECT_EQ(table_space(via).size(), 4u);
  json doc = t4_results(s, {id});
  doc["results"][1]["configuration"]["local_size"] = "8y8";
  EXPECT_NE(message_of([&] { (void)table_from_t4(doc, "x.json"); }).find("results[1].configuration.local_size"),
            std::string::npos);
}
