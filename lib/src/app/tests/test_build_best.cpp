// Tuner::build_best and wstune_build_best on PoCL: the parameter chain's
// level, the configuration built (its NDRange, local size, -D values), a
// kernel that computes the right answer, programs reused within a Tuner,
// the C API's ownership (the caller's references) and its errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

}  // namespace
