// The C API (wstune/wstune.h) over real OpenCL (PoCL): answers, launches,
// status codes, per-thread error messages, the __local setter from C.
#include <gtest/gtest.h>

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
}  // namespace

TEST(CApi, TunesLaunchesAndReportsErrors) {
  Cl cl;
  std::vector<float> y(1024, 1.0f);
  cl::Buffer b = cl.buffer(y);
  cl::Kernel k = cl.kernel(kSrc, "inc");
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
