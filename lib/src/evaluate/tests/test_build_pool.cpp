// The build pool (evaluate/build_pool.hpp) on real OpenCL (PoCL): a tune
// with builder processes measures the same configurations with the same
// statuses as one without, each program is built from source at most once in
// a campaign (WSTUNE_BUILD_LOG counts the builds of every process), and a
// builder that dies costs nothing but its builds. This executable never
// calls OpenCL in its own process (the workers and builders are forked).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "evaluate/build_pool.hpp"
#include "program_cache/program_cache.hpp"
#include "session/autotune.hpp"
#include "tuning_file/tuning_file.hpp"

namespace {

using namespace wstune;
namespace fs = std::filesystem;

const std::string kData = WSTUNE_TEST_DATA_DIR;

// A fresh cache folder and build log for one campaign.
struct Campaign {
  fs::path dir, log;
  explicit Campaign(const std::string& name) {
    const fs::path base = fs::temp_directory_path() / ("wstune-build-pool-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(base);
    fs::create_directories(base);
    dir = base / "programs";
    log = base / "builds.log";
    ProgramCache::configure(dir);
    ::setenv("WSTUNE_BUILD_LOG", log.c_str(), 1);
  }
  ~Campaign() { ::unsetenv("WSTUNE_BUILD_LOG"); }
  // Builds per origin ("source", "binary", ...) and, for source builds, per key.
  [[nodiscard]] std::map<std::string, std::map<std::string, int>> builds() const {
    std::map<std::string, std::map<std::string, int>> out;
    std::ifstream in(log);
    std::string origin, key, ms, ok, pid;
    while (in >> origin >> key >> ms >> ok >> pid) ++out[origin][key];
    return out;
  }
};

AutotuneResult tune_with(const KernelSpec& spec, int jobs) {
  AutotuneOptions opt;
  opt.build_jobs = jobs;
  opt.tune.timing.repetitions = 1;
  opt.tune.timing.min_timed_ms = 0;
  opt.tune.timing.max_median_error = 0;
  TuneRequest req;
  req.strategy = "exhaustive";
  return autotune(spec, resolve_tune(spec, req), nullptr, opt);
}

// configuration key → status of every first trial.
std::map<std::string, TrialStatus> statuses(const TuneResult& r) {
  std::map<std::string, TrialStatus> out;
  for (const Trial& t : r.trials) out.emplace(t.configuration().key(), t.status);
  return out;
}

int max_source_builds(const std::map<std::string, int>& per_key) {
  int most = 0;
  for (const auto& [key, n] : per_key) most = std::max(most, n);
  return most;
}

TEST(BuildPool, SameTrialsAsWithoutThePoolAndNoProgramBuiltTwice) {
  const auto spec = load_tuning_file(kData + "/pool_scale.json");
  std::map<std::string, TrialStatus> serial, pooled;
  {
    Campaign c("serial");
    const AutotuneResult r = tune_with(*spec, 0);
    EXPECT_EQ(r.pool.jobs, 0u);
    serial = statuses(r.result);
    EXPECT_LE(max_source_builds(c.builds()["source"]), 1);
  }
  {
    Campaign c("pooled");
    const AutotuneResult r = tune_with(*spec, 2);
    EXPECT_EQ(r.pool.jobs, 2u);
    EXPECT_EQ(r.pool.lost, 0u);
    EXPECT_GE(r.pool.built, 10u);  // all but the baseline (built by the worker at its start), the failure included
    pooled = statuses(r.result);
    auto builds = c.builds();
    // Every program was built from source once, by a builder or the worker
    // (its reference), and the worker loaded the builders' binaries.
    EXPECT_EQ(max_source_builds(builds["source"]), 1);
    EXPECT_EQ(builds["source"].size(), 12u);
    EXPECT_GE(builds["binary"].size(), 10u);
    EXPECT_GE(builds["cached_failure"].size(), 1u);  // MODE=2 PER=4: the worker did not compile it again
    EXPECT_TRUE(r.result.best.ok());
  }
  EXPECT_EQ(serial.size(), 12u);
  EXPECT_EQ(pooled, serial);  // the same configurations with the same statuses (the compile failure included)
  std::size_t failed = 0;
  for (const auto& [key, status] : serial) failed += status == TrialStatus::compile;
  EXPECT_EQ(failed, 1u);
}

// The build log's source builds, in the order they were written: (key, pid).
std::vector<std::pair<std::string, std::string>> source_builds(const Campaign& c) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in(c.log);
  std::string origin, key, ms, ok, pid;
  while (in >> origin >> key >> ms >> ok >> pid)
    if (origin == "source") out.emplace_back(key, pid);
  return out;
}

std::vector<nlohmann::json> configs(int mode) {
  std::vector<nlohmann::json> out;
  for (int per : {1, 2, 4, 8}) out.push_back({{"MODE", mode}, {"PER", per}});
  return out;
}

TEST(BuildPool, AnnouncedConfigurationsAreBuiltByTheBuildersAndAnAwaitedOneGoesFirst) {
  const auto spec = load_tuning_file(kData + "/pool_scale.json");
  Campaign c("order");
  EvaluatorConfig cfg;
  BuildPool pool(*spec, spec->paper_size(), cfg, 1, std::chrono::milliseconds(120'000));
  std::vector<nlohmann::json> all = configs(0);
  for (const auto& p : configs(1)) all.push_back(p);
  pool.submit(all);
  const auto pids = pool.builder_pids();
  ASSERT_EQ(pids.size(), 1u);
  // The last one announced is awaited first: it moves to the queue's front,
  // so at most the kInFlight handed out before (if the builder had already
  // said hello) are built before it.
  EXPECT_TRUE(pool.await(all.back()));
  // Built by now: at most the kInFlight handed out before, it, and the one handed out after those.
  EXPECT_LE(source_builds(c).size(), BuildPool::kInFlight + 2);
  for (const auto& p : all) EXPECT_EQ(pool.await(p), &p != &all.back()) << p.dump();  // awaited once only
  EXPECT_EQ(pool.built(), all.size());
  EXPECT_EQ(pool.lost(), 0u);
  const auto builds = source_builds(c);
  ASSERT_EQ(builds.size(), all.size());  // each once, all by the builder, none by this process
  for (const auto& [key, pid] : builds) EXPECT_EQ(pid, std::to_string(pids[0]));
  std::set<std::string> keys;
  for (const auto& [key, pid] : builds) keys.insert(key);
  EXPECT_EQ(keys.size(), all.size());
  pool.submit(all);  // submitted before: not again
  EXPECT_EQ(pool.built(), all.size());
  EXPECT_EQ(source_builds(c).size(), all.size());
}

TEST(BuildPool, ABuilderThatDiesLosesOnlyWhatItHeldAndAFreshOneTakesTheRest) {
  const auto spec = load_tuning_file(kData + "/pool_scale.json");
  Campaign c("dies");
  EvaluatorConfig cfg;
  BuildPool pool(*spec, spec->paper_size(), cfg, 1, std::chrono::milliseconds(120'000));
  const auto first = configs(0), second = configs(1);
  pool.submit(first);
  const auto pids = pool.builder_pids();
  ASSERT_EQ(pids.size(), 1u);
  ::kill(pids[0], SIGKILL);  // while it starts, or builds what it was handed
  // What it held (at most kInFlight) is lost: the caller builds it; a fresh
  // builder takes what was still queued.
  std::size_t lost = 0;
  for (const auto& p : first) lost += !pool.await(p);
  EXPECT_EQ(pool.lost(), lost);
  EXPECT_LE(lost, BuildPool::kInFlight);
  EXPECT_EQ(pool.built() + pool.lost(), first.size());
  pool.submit(first);  // submitted before: not again
  pool.submit(second);
  for (const auto& p : second) EXPECT_TRUE(pool.await(p));
  EXPECT_EQ(pool.builders_started(), 2u);
  EXPECT_EQ(pool.built() + pool.lost(), first.size() + second.size());
  EXPECT_GE(c.builds()["source"].size(), pool.built());
}

TEST(BuildPool, WithNoBuilderLeftQueuedWorkIsLostNotWaitedFor) {
  const auto spec = load_tuning_file(kData + "/pool_scale.json");
  Campaign c("none");
  EvaluatorConfig cfg;
  cfg.device = "no-such-device";  // every builder's hello says it cannot open the device
  BuildPool pool(*spec, spec->paper_size(), cfg, 2, std::chrono::milliseconds(120'000));
  const auto all = configs(0);
  pool.submit(all);
  for (const auto& p : all) EXPECT_FALSE(pool.await(p));
  EXPECT_EQ(pool.lost(), all.size());
  EXPECT_EQ(pool.built(), 0u);
  EXPECT_EQ(pool.builders_started(), 2u + 2u * 2u + 2u);  // the first two and every restart allowed
  EXPECT_TRUE(c.builds()["source"].empty());
}

TEST(BuildPool, TuneSurvivesItsBuildersBeingKilled) {
  const auto spec = load_tuning_file(kData + "/pool_scale.json");
  Campaign c("killed");
  AutotuneOptions opt;
  opt.build_jobs = 2;
  opt.tune.timing.repetitions = 1;
  opt.tune.timing.min_timed_ms = 0;
  opt.tune.timing.max_median_error = 0;
  const IsolatedEvaluator* ev = nullptr;
  opt.on_start = [&](const Evaluator& e, const AutotuneResult&) { ev = dynamic_cast<const IsolatedEvaluator*>(&e); };
  unsigned killed = 0;
  opt.tune.on_trial = [&](const Trial&, TrialPhase phase) {
    if (phase != TrialPhase::search || killed || !ev) return;
    for (const pid_t pid : ev->builder_pids()) killed += ::kill(pid, SIGKILL) == 0;  // mid-campaign
  };
  TuneRequest req;
  req.strategy = "exhaustive";
  const AutotuneResult r = autotune(*spec, resolve_tune(*spec, req), nullptr, opt);
  EXPECT_EQ(killed, 2u);
  // What the builders lost the worker built: every configuration measured,
  // each with its status (the compile failure stays one), none built twice.
  const auto st = statuses(r.result);
  EXPECT_EQ(st.size(), 12u);
  std::size_t correct = 0, compile = 0;
  for (const auto& [key, status] : st) {
    correct += status == TrialStatus::correct;
    compile += status == TrialStatus::compile;
  }
  EXPECT_EQ(correct, 11u);
  EXPECT_EQ(compile, 1u);
  EXPECT_EQ(r.pool.built + r.pool.lost, 11u);
  // Only what a killed builder lost can be built twice: a builder killed
  // after its build but before its binary was stored loses that build, and
  // the worker builds it again (seen under ASan). Everything else once.
  auto builds = c.builds();
  std::size_t twice = 0;
  for (const auto& [key, n] : builds["source"]) twice += n > 1;
  EXPECT_LE(max_source_builds(builds["source"]), 2);
  EXPECT_LE(twice, r.pool.lost);
}

}  // namespace
