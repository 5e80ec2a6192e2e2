// The C API (wstune/wstune.h) over real OpenCL (PoCL): answers, launches,
// status codes, per-thread error messages, the __local setter from C.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>

#include "test_tuner_util.hpp"
#include "wstune/wstune.h"

using wstune::test::Cl;

namespace {
const char* kSrc = R"CL(
__kernel void inc(__global float* y, __local float* scratch) {
  scratch[get_local_id(0)] = y[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  y[get_global_id(0)] = scratch[get_local_id(0)] + 1.0f;
}
)CL";

int size_scratch(cl_kernel k, cl_uint work_dim, const size_t* local, void* calls) {
  ++*static_cast<int*>(calls);
  if (!local) return 0;
  size_t items = 1;
  for (cl_uint d = 0; d < work_dim; ++d) items *= local[d];
  return clSetKernelArg(k, 1, items * sizeof(float), nullptr) == CL_SUCCESS;
}
// The `inc` kernel over 1024 floats that start at `start`.
struct Inc {
  Cl cl;
  std::vector<float> y;
  cl::Buffer b;
  cl::Kernel k;
  explicit Inc(float start) : y(1024, start), b(cl.buffer(y)), k(cl.kernel(kSrc, "inc")) {}
};
}  // namespace

TEST(CApi, TunesLaunchesAndReportsErrors) {
  Inc app(1.0f);
  auto& [cl, y, b, k] = app;
  wstune_tuner* t = wstune_open_online(":memory:", 4, 500);
  ASSERT_NE(t, nullptr) << wstune_last_error();
  EXPECT_STREQ(wstune_last_level(t), "");
  ASSERT_EQ(wstune_set_arg_buffer(t, k(), 0, b()), WSTUNE_SUCCESS);
  const size_t global[1] = {1024};
  EXPECT_EQ(wstune_launch(t, cl.queue(), k(), 1, global, nullptr), WSTUNE_USAGE_ERROR) << "no __local setter";
  EXPECT_NE(std::string(wstune_last_error()).find("__local"), std::string::npos) << wstune_last_error();
  int calls = 0;
  ASSERT_EQ(wstune_set_local_args(t, k(), size_scratch, &calls), WSTUNE_SUCCESS);
  cl_event ev = nullptr;
  ASSERT_EQ(wstune_launch(t, cl.queue(), k(), 1, global, &ev), WSTUNE_SUCCESS) << wstune_last_error();
  ASSERT_NE(ev, nullptr);
  clWaitForEvents(1, &ev);
  clReleaseEvent(ev);
  EXPECT_STREQ(wstune_last_level(t), "exact");
  EXPECT_GT(calls, 2);
  EXPECT_EQ(cl.read(b, 1024), std::vector<float>(1024, 2.0f)) << "one launch's result";
  size_t local[3] = {7, 7, 7};
  ASSERT_EQ(wstune_local_size(t, cl.queue(), k(), 1, global, local), WSTUNE_SUCCESS);
  EXPECT_GT(local[0], 0u) << "NULL was refused by the setter";
  EXPECT_EQ(1024 % local[0], 0u);

  EXPECT_EQ(wstune_local_size(t, cl.queue(), k(), 4, global, local), WSTUNE_USAGE_ERROR);
  EXPECT_NE(std::string(wstune_last_error()).find("work_dim 4"), std::string::npos);
  EXPECT_EQ(wstune_local_size(t, cl.queue(), k(), 1, nullptr, local), WSTUNE_USAGE_ERROR);
  EXPECT_EQ(wstune_local_size(nullptr, cl.queue(), k(), 1, global, local), WSTUNE_USAGE_ERROR);
  EXPECT_EQ(wstune_local_size(t, nullptr, k(), 1, global, local), CL_INVALID_COMMAND_QUEUE);
  std::string other_thread = "unset";
  std::thread([&] { other_thread = wstune_last_error(); }).join();
  EXPECT_EQ(other_thread, "") << "the message is per thread";
  wstune_forget(t, k());
  wstune_close(t);
  wstune_close(nullptr);
}

TEST(CApi, OpenFailsWithAMessage) {
  EXPECT_EQ(wstune_open("/proc/no/such/dir/x.db"), nullptr);
  EXPECT_NE(std::string(wstune_last_error()), "");
  EXPECT_EQ(std::string(wstune_version()).find('.') != std::string::npos, true);
}

// Dynamic tuning from C: early launches answer "online" and every launch
// adds exactly one increment; later the stored best answers ("exact").
TEST(CApi, TrialsPerLaunchSpreadTuningOverLaunches) {
  Inc app(0.0f);
  auto& [cl, y, b, k] = app;
  wstune_tuner* t = wstune_open_online(":memory:", 6, 60000);
  ASSERT_NE(t, nullptr) << wstune_last_error();
  EXPECT_EQ(wstune_set_trials_per_launch(nullptr, 1), WSTUNE_USAGE_ERROR);
  ASSERT_EQ(wstune_set_trials_per_launch(t, 2), WSTUNE_SUCCESS);
  ASSERT_EQ(wstune_set_arg_buffer(t, k(), 0, b()), WSTUNE_SUCCESS);
  int calls = 0;
  ASSERT_EQ(wstune_set_local_args(t, k(), size_scratch, &calls), WSTUNE_SUCCESS);
  const size_t global[1] = {1024};
  std::vector<std::string> levels;
  for (int i = 1; i <= 10; ++i) {
    ASSERT_EQ(wstune_launch(t, cl.queue(), k(), 1, global, nullptr), WSTUNE_SUCCESS) << wstune_last_error();
    levels.emplace_back(wstune_last_level(t));
    ASSERT_EQ(cl.read(b, 1024), std::vector<float>(1024, static_cast<float>(i))) << "launch " << i;
  }
  EXPECT_NE(std::find(levels.begin(), levels.end(), "online"), levels.end());
  EXPECT_EQ(levels.back(), "exact");
  wstune_close(t);
}

namespace {
const std::string kStencilFile = std::string(WSTUNE_TEST_DATA_DIR) + "/../../share/examples/kernels/stencil5.json";
}  // namespace

// Each option is checked before anything runs: the error names the field
// and the fix, and `out` stays untouched.
TEST(CApi, AutotuneRefusesABadObjectiveOrEnergyNamingTheField) {
  wstune_tuner* t = wstune_open(":memory:");
  ASSERT_NE(t, nullptr) << wstune_last_error();
  wstune_autotune_options o;
  wstune_autotune_defaults(&o);
  EXPECT_EQ(o.objective, nullptr);
  EXPECT_EQ(o.max_trials, 0u);
  o.size = "64x64";
  wstune_autotune_result out{};
  out.time_ms = -1;
  for (const char* bad : {"joules", "time:fastest", "time,time", "energy:"}) {
    o.objective = bad;
    EXPECT_EQ(wstune_autotune(t, kStencilFile.c_str(), &o, &out), WSTUNE_USAGE_ERROR) << bad;
    const std::string e = wstune_last_error();
    EXPECT_NE(e.find("wstune_autotune_options.objective"), std::string::npos) << bad << ": " << e;
  }
  o.objective = "joules";
  ASSERT_EQ(wstune_autotune(t, kStencilFile.c_str(), &o, &out), WSTUNE_USAGE_ERROR);
  EXPECT_NE(std::string(wstune_last_error()).find("edp"), std::string::npos) << "names the known metrics";
  o.objective = "energy";
  o.energy = "sometimes";
  EXPECT_EQ(wstune_autotune(t, kStencilFile.c_str(), &o, &out), WSTUNE_USAGE_ERROR);
  EXPECT_NE(std::string(wstune_last_error()).find("wstune_autotune_options.energy 'sometimes'"), std::string::npos)
      << wstune_last_error();
  EXPECT_EQ(out.time_ms, -1) << "untouched on an error";
  EXPECT_EQ(wstune_autotune(t, nullptr, &o, &out), WSTUNE_USAGE_ERROR);
  EXPECT_EQ(wstune_autotune(nullptr, kStencilFile.c_str(), &o, &out), WSTUNE_USAGE_ERROR);
  EXPECT_EQ(wstune_autotune(t, kStencilFile.c_str(), &o, nullptr), WSTUNE_USAGE_ERROR);
  wstune_close(t);
}

// An energy objective on a device without a sensor (PoCL here): the time
// decides, the result says why and that no energy was measured; the stored
// best is what wstune_build_best() builds. (Runs first in its process: the
// search forks before this process touches OpenCL.)
TEST(CApi, AutotuneWithAnEnergyObjectiveSaysWhyTheTimeDecided) {
  wstune_tuner* t = wstune_open(":memory:");
  ASSERT_NE(t, nullptr) << wstune_last_error();
  wstune_autotune_options o;
  wstune_autotune_defaults(&o);
  o.size = "64x64";
  o.objective = "energy";
  o.strategy = "random";
  o.max_trials = 3;
  wstune_autotune_result out{};
  ASSERT_EQ(wstune_autotune(t, kStencilFile.c_str(), &o, &out), WSTUNE_SUCCESS) << wstune_last_error();
  EXPECT_STREQ(out.objective, "energy:min");
  EXPECT_EQ(out.energy_measured, 0);
  EXPECT_EQ(out.energy_j, 0.0);
  EXPECT_STREQ(out.energy_sensor, "");
  const std::string note = out.objective_note;
  EXPECT_NE(note.find("not measured"), std::string::npos) << note;
  EXPECT_NE(note.find("the time decides"), std::string::npos) << note;
  EXPECT_GT(out.time_ms, 0.0);
  EXPECT_EQ(out.work_dim, 2u);
  EXPECT_GE(out.evaluations, 1u);
  EXPECT_EQ(std::string(out.params).front(), '{');
  const std::string params = out.params;

  Cl cl;
  wstune_built_kernel b{};
  ASSERT_EQ(wstune_build_best(t, cl.queue(), kStencilFile.c_str(), "64x64", &b), WSTUNE_SUCCESS) << wstune_last_error();
  EXPECT_STREQ(b.level, "exact");
  EXPECT_EQ(std::string(b.params), params) << "the stored best is the one reported";
  clReleaseKernel(b.kernel);
  clReleaseProgram(b.program);
  wstune_close(t);
}
