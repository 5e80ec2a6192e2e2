// Tuner::build_best and wstune_build_best on PoCL: the parameter chain's
// level, the configuration built (its NDRange, local size, -D values), a
// kernel that computes the right answer, programs reused within a Tuner,
// the C API's ownership (the caller's references) and its errors; online
// tuning of the parameters at the first call (BuildBestOnline): stored, then
// exact and loaded from the program binary cache, its budget checked, a
// configuration that does not compile recorded and skipped, a failed
// tuning answered from the chain.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "program_cache/program_cache.hpp"
#include "session/tune_session.hpp"
#include "test_tuner_util.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"
#include "wstune/tuner.hpp"
#include "wstune/wstune.h"

namespace {

using namespace wstune;
using wstune::test::Cl;

const std::string kData = WSTUNE_TEST_DATA_DIR;
const std::string kStencil = kData + "/../../share/examples/kernels/stencil5.json";

// Runs the stencil built by build_best over a w x h grid and checks every output.
bool stencil_right(Cl& cl, cl::Kernel k, const cl::NDRange& global, const cl::NDRange& local, int w, int h) {
  std::vector<float> in(static_cast<std::size_t>(w) * h), out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 5) % 11);
  cl::Buffer bin = cl.buffer(in);
  cl::Buffer bout(cl.ctx, CL_MEM_WRITE_ONLY, out.size() * sizeof(float));
  k.setArg(0, w);
  k.setArg(1, h);
  k.setArg(2, bin);
  k.setArg(3, bout);
  cl.queue.enqueueNDRangeKernel(k, cl::NullRange, global, local);
  out = cl.read(bout, out.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const std::size_t i = static_cast<std::size_t>(y) * w + x;
      const bool border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
      const float e = border ? in[i] : 5 * in[i] - in[i - w] - in[i + w] - in[i - 1] - in[i + 1];
      if (out[i] != e) return false;
    }
  return true;
}

// Records {WPTX: 2, WPTY: 4} with local 8x4 as the best of 64x64 on `cl`'s device, twice as fast as the reference.
void store_best(Store& s, Tuner& tuner, Cl& cl) {
  const auto spec = load_tuning_file(kStencil);
  const DeviceInfo& d = tuner.device_info(cl.queue());
  s.put_device(d);
  const Problem p = spec->parse_size("64x64");
  BestConfig b;
  b.device_fingerprint = d.fingerprint();
  b.kernel = kernel_key(*spec);
  b.problem = {spec->problem_extent(p), p.text};
  b.params = {{"WPTX", 2}, {"WPTY", 4}};
  b.local = Extent{8, 4, 1, 2};
  b.median_ms = 1;
  b.null_ms = 2;
  s.record_best(b);
}

TEST(BuildBest, EmptyStoreBuildsTheDefaultsAndTheKernelIsRight) {
  Cl cl;
  Store store(":memory:");
  Tuner tuner(store);
  const BuiltKernel b = tuner.build_best(cl.queue, kStencil, "50x30");
  EXPECT_EQ(b.level, LookupLevel::defaults);
  EXPECT_EQ(nlohmann::json::parse(b.params), (nlohmann::json{{"WPTX", 1}, {"WPTY", 1}}));
  EXPECT_FALSE(b.from);
  EXPECT_EQ(b.global.dimensions(), 2u);
  EXPECT_EQ(b.global[0], 50u);
  EXPECT_EQ(b.local.dimensions(), 0u);  // stencil5 searches its local size: the driver's choice
  EXPECT_GT(b.compile_ms, 0);
  EXPECT_TRUE(stencil_right(cl, b.kernel, b.global, b.local, 50, 30));
  // The same configuration again: no second build, a kernel object of its own.
  const BuiltKernel again = tuner.build_best(cl.queue, kStencil, "60x30");
  EXPECT_EQ(again.compile_ms, 0);
  EXPECT_NE(again.kernel(), b.kernel());
  EXPECT_EQ(again.program(), b.program());
}

TEST(BuildBest, NearestStoredSizeIsBuiltWithItsParametersAndPaddedNDRange) {
  Cl cl;
  Store store(":memory:");
  Tuner tuner(store);
  store_best(store, tuner, cl);
  const BuiltKernel exact = tuner.build_best(cl.queue, kStencil, "64x64");
  EXPECT_EQ(exact.level, LookupLevel::exact);
  const BuiltKernel b = tuner.build_best(cl.queue, kStencil, "100x50");
  EXPECT_EQ(b.level, LookupLevel::nearest);
  ASSERT_TRUE(b.from);
  EXPECT_EQ(b.from->problem.size_text, "64x64");
  EXPECT_EQ(nlohmann::json::parse(b.params), (nlohmann::json{{"WPTX", 2}, {"WPTY", 4}}));
  ASSERT_EQ(b.local.dimensions(), 2u);
  EXPECT_EQ(b.local[0], 8u);
  EXPECT_EQ(b.local[1], 4u);
  EXPECT_EQ(b.global[0], 56u);  // 50 work-items rounded up to 8 (the kernel guards its bounds)
  EXPECT_EQ(b.global[1], 16u);  // ceil(50 / 4) = 13, rounded up to 4
  EXPECT_TRUE(stencil_right(cl, b.kernel, b.global, b.local, 100, 50));
  EXPECT_EQ(tuner.build_best(cl.queue, kStencil, "4096x4096").level, LookupLevel::defaults);  // too far
}

TEST(BuildBest, BadFileOrSizeIsAUsageErrorNamingIt) {
  Cl cl;
  Store store(":memory:");
  Tuner tuner(store);
  try {
    (void)tuner.build_best(cl.queue, kStencil, "0x5");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("0x5"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)tuner.build_best(cl.queue, kData + "/no-such-file.json", ""), UsageError);
}

TEST(BuildBestC, CallerOwnsOneReferenceOfKernelAndProgram) {
  Cl cl;
  const std::string db = testing::TempDir() + "/build_best_c.db";
  std::remove(db.c_str());
  wstune_tuner* t = wstune_open(db.c_str());
  ASSERT_NE(t, nullptr) << wstune_last_error();
  wstune_built_kernel b{};
  ASSERT_EQ(wstune_build_best(t, cl.queue(), kStencil.c_str(), "40x20", &b), WSTUNE_SUCCESS) << wstune_last_error();
  EXPECT_STREQ(b.level, "default");
  EXPECT_STREQ(wstune_last_level(t), "default");
  EXPECT_STREQ(b.params, R"({"WPTX":1,"WPTY":1})");
  EXPECT_EQ(b.work_dim, 2u);
  EXPECT_EQ(b.global[0], 40u);
  EXPECT_EQ(b.local[0], 0u);
  cl_uint refs = 0;
  ASSERT_EQ(clGetKernelInfo(b.kernel, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, nullptr), CL_SUCCESS);
  EXPECT_EQ(refs, 1u);  // the caller's only
  EXPECT_TRUE(
      stencil_right(cl, cl::Kernel(b.kernel, true), cl::NDRange(b.global[0], b.global[1]), cl::NullRange, 40, 20));
  EXPECT_EQ(clReleaseKernel(b.kernel), CL_SUCCESS);
  EXPECT_EQ(clReleaseProgram(b.program), CL_SUCCESS);
  wstune_built_kernel untouched{};
  EXPECT_EQ(wstune_build_best(t, cl.queue(), "/no/such.json", nullptr, &untouched), WSTUNE_USAGE_ERROR);
  EXPECT_NE(std::string(wstune_last_error()).find("/no/such.json"), std::string::npos) << wstune_last_error();
  EXPECT_EQ(untouched.kernel, nullptr);
  EXPECT_EQ(wstune_build_best(t, cl.queue(), kStencil.c_str(), "40x20", nullptr), WSTUNE_USAGE_ERROR);
  wstune_close(t);
}

// A fresh program binary cache folder for this test's process.
void fresh_cache(const std::string& name) {
  const std::filesystem::path dir = testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  ProgramCache::configure(dir);
}

BuildBestOnline online(unsigned max_evals, std::chrono::milliseconds max_time = std::chrono::seconds(60)) {
  return BuildBestOnline{true, max_evals, max_time};
}

TunerOptions online_options(unsigned max_evals) {
  TunerOptions o;
  o.build_best_online = online(max_evals);
  return o;
}

TEST(BuildBestOnline, FirstCallTunesAndStoresTheNextIsExactAndCompilesNothing) {
  fresh_cache("bb-online-exact");
  Cl cl;
  Store store(":memory:");
  const TunerOptions o = online_options(5);
  {
    Tuner tuner(store, o);
    const BuiltKernel b = tuner.build_best(cl.queue, kStencil, "48x40");
    EXPECT_EQ(b.level, LookupLevel::online) << b.note;
    EXPECT_EQ(b.note, "");
    EXPECT_GE(b.tuned_evaluations, 1u);
    EXPECT_LE(b.tuned_evaluations, 5u);
    ASSERT_TRUE(b.from);
    EXPECT_EQ(b.from->problem.size_text, "48x40");
    EXPECT_EQ(nlohmann::json::parse(b.params), b.from->params);
    EXPECT_TRUE(stencil_right(cl, b.kernel, b.global, b.local, 48, 40));
    const auto sessions = store.sessions();
    ASSERT_EQ(sessions.size(), 1u);
    const auto trials = store.trials(sessions[0].id);
    EXPECT_EQ(trials.size(), b.tuned_evaluations);
    // The same size again in this Tuner: exact, not tuned twice.
    const BuiltKernel again = tuner.build_best(cl.queue, kStencil, "48x40");
    EXPECT_EQ(again.level, LookupLevel::exact);
    EXPECT_EQ(again.tuned_evaluations, 0u);
  }
  // A second start (a new Tuner, nothing kept in it): exact, loaded from the binary cache.
  Tuner tuner(store, o);
  const ProgramBuilds before = program_builds();
  const BuiltKernel b = tuner.build_best(cl.queue, kStencil, "48x40");
  const ProgramBuilds after = program_builds();
  EXPECT_EQ(b.level, LookupLevel::exact);
  EXPECT_EQ(b.tuned_evaluations, 0u);
  EXPECT_FALSE(b.compiled);
  EXPECT_EQ(after.compiled, before.compiled);
  EXPECT_EQ(after.from_binary, before.from_binary + 1);
  EXPECT_EQ(store.sessions().size(), 1u);  // no new tuning
  EXPECT_TRUE(stencil_right(cl, b.kernel, b.global, b.local, 48, 40));
}

TEST(BuildBestOnline, ABadBudgetIsAUsageErrorNamingTheField) {
  Store store(":memory:");
  try {
    Tuner tuner(store, online_options(0));
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("max_evals"), std::string::npos) << e.what();
  }
  Tuner tuner(store);
  try {
    tuner.set_build_best_online(online(4, std::chrono::milliseconds(0)));
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("max_time"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(tuner.set_build_best_online(BuildBestOnline{false, 0, std::chrono::milliseconds(0)}));  // off
  const std::string db = testing::TempDir() + "/build_best_online_c.db";
  std::remove(db.c_str());
  wstune_tuner* t = wstune_open(db.c_str());
  ASSERT_NE(t, nullptr) << wstune_last_error();
  EXPECT_EQ(wstune_set_build_best_online(t, 1, 0, 1000), WSTUNE_USAGE_ERROR);
  EXPECT_NE(std::string(wstune_last_error()).find("max_evals"), std::string::npos) << wstune_last_error();
  EXPECT_EQ(wstune_set_build_best_online(t, 1, 4, 0), WSTUNE_USAGE_ERROR);
  EXPECT_NE(std::string(wstune_last_error()).find("max_time"), std::string::npos) << wstune_last_error();
  EXPECT_EQ(wstune_set_build_best_online(t, 0, 0, 0), WSTUNE_SUCCESS);
  EXPECT_EQ(wstune_set_build_best_online(nullptr, 1, 4, 1000), WSTUNE_USAGE_ERROR);
  wstune_close(t);
}

// stencil5 with WPTX in {1, 2, 4}, WPTY 1, a fixed 8x8 local size, whose source does not compile for WPTX 2.
std::string stencil_failing_at_wptx2() {
  const std::string dir = testing::TempDir() + "/bb-online-bad";
  std::filesystem::create_directories(dir);
  std::ifstream cl_in(kData + "/../../share/examples/kernels/stencil5.cl");
  std::stringstream source;
  source << "#if WPTX == 2\n#error \"WPTX 2 does not compile in this test\"\n#endif\n" << cl_in.rdbuf();
  std::ofstream(dir + "/stencil5_bad.cl") << source.str();
  nlohmann::json f = nlohmann::json::parse(std::ifstream(kStencil));
  f["KernelSpecification"]["KernelFile"] = "stencil5_bad.cl";
  f["KernelSpecification"]["LocalSize"] = {{"X", "8"}, {"Y", "8"}};
  f["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "[1, 2, 4]";
  f["ConfigurationSpace"]["TuningParameters"][1]["Values"] = "[1]";
  f["wstune"].erase("LocalSize");  // the file's LocalSize: three configurations
  f["wstune"].erase("Split");
  const std::string path = dir + "/stencil5_bad.json";
  std::ofstream(path) << f.dump(2);
  return path;
}

TEST(BuildBestOnline, AConfigurationThatDoesNotCompileIsRecordedAndSkipped) {
  fresh_cache("bb-online-bad-cache");
  const std::string file = stencil_failing_at_wptx2();
  Store store(":memory:");
  Tuner tuner(store, online_options(10));
  Cl cl;
  const BuiltKernel b = tuner.build_best(cl.queue, file, "64x32");
  EXPECT_EQ(b.level, LookupLevel::online) << b.note;
  EXPECT_EQ(b.tuned_evaluations, 3u);
  EXPECT_NE(nlohmann::json::parse(b.params)["WPTX"], 2);
  const auto sessions = store.sessions();
  ASSERT_EQ(sessions.size(), 1u);
  bool failed_recorded = false;
  for (const TrialRecord& t : store.trials(sessions[0].id)) {
    if (t.params["WPTX"] != 2) continue;
    EXPECT_EQ(t.status, TrialStatus::compile);
    EXPECT_NE(t.error.find("WPTX 2 does not compile"), std::string::npos) << t.error;
    failed_recorded = true;
  }
  EXPECT_TRUE(failed_recorded);
  EXPECT_TRUE(stencil_right(cl, b.kernel, b.global, b.local, 64, 32));
}

TEST(BuildBestOnline, AFailedTuningAnswersFromTheChainAndSaysWhy) {
  Cl cl;
  const std::string db = testing::TempDir() + "/build_best_online_ro.db";
  std::remove(db.c_str());
  { Store create(db); }
  Store store(db, StoreOptions{true});  // read-only: the session cannot be stored
  const TunerOptions o = online_options(4);
  Tuner tuner(store, o);
  const BuiltKernel b = tuner.build_best(cl.queue, kStencil, "40x24");
  EXPECT_EQ(b.level, LookupLevel::defaults);
  EXPECT_NE(b.note.find("online tuning failed"), std::string::npos) << b.note;
  EXPECT_NE(b.note.find("level default answered instead"), std::string::npos) << b.note;
  EXPECT_TRUE(stencil_right(cl, b.kernel, b.global, b.local, 40, 24));
  // Tried once per Tuner: the next call does not tune again.
  const BuiltKernel again = tuner.build_best(cl.queue, kStencil, "40x24");
  EXPECT_EQ(again.note, "");
  EXPECT_EQ(again.tuned_evaluations, 0u);
}

TEST(BuildBestOnlineC, FirstCallIsOnlineTheNextExact) {
  fresh_cache("bb-online-c-cache");
  Cl cl;
  const std::string db = testing::TempDir() + "/build_best_online_c2.db";
  std::remove(db.c_str());
  wstune_tuner* t = wstune_open(db.c_str());
  ASSERT_NE(t, nullptr) << wstune_last_error();
  ASSERT_EQ(wstune_set_build_best_online(t, 1, 4, 60000), WSTUNE_SUCCESS) << wstune_last_error();
  wstune_built_kernel b{};
  ASSERT_EQ(wstune_build_best(t, cl.queue(), kStencil.c_str(), "32x24", &b), WSTUNE_SUCCESS) << wstune_last_error();
  EXPECT_STREQ(b.level, "online") << b.note;
  EXPECT_STREQ(b.note, "");
  EXPECT_GE(b.tuned_evaluations, 1u);
  EXPECT_LE(b.tuned_evaluations, 4u);
  EXPECT_EQ(clReleaseKernel(b.kernel), CL_SUCCESS);
  EXPECT_EQ(clReleaseProgram(b.program), CL_SUCCESS);
  wstune_close(t);
  t = wstune_open(db.c_str());
  ASSERT_NE(t, nullptr) << wstune_last_error();
  ASSERT_EQ(wstune_set_build_best_online(t, 1, 4, 60000), WSTUNE_SUCCESS) << wstune_last_error();
  unsigned long long compiled = 0, loaded = 0, compiled2 = 0, loaded2 = 0;
  wstune_program_builds(&compiled, &loaded);
  ASSERT_EQ(wstune_build_best(t, cl.queue(), kStencil.c_str(), "32x24", &b), WSTUNE_SUCCESS) << wstune_last_error();
  wstune_program_builds(&compiled2, &loaded2);
  EXPECT_STREQ(b.level, "exact");
  EXPECT_EQ(b.tuned_evaluations, 0u);
  EXPECT_EQ(b.compiled, 0);
  EXPECT_EQ(compiled2, compiled);
  EXPECT_EQ(loaded2, loaded + 1);
  EXPECT_EQ(clReleaseKernel(b.kernel), CL_SUCCESS);
  EXPECT_EQ(clReleaseProgram(b.program), CL_SUCCESS);
  wstune_close(t);
}

}  // namespace
