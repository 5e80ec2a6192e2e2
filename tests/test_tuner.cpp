// wstune::Tuner on real OpenCL (PoCL): look-up for an app's kernel, online
// tuning stored as a session with trials and a best, launch with cl:: and
// plain handles, results correct.
#include <gtest/gtest.h>

#include "wstune/tuner.hpp"

using namespace wstune;

namespace {

const char* kSource = R"CL(
__kernel void twice(__global const float* in, __global float* out) {
  const size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
  out[i] = 2.0f * in[i];
}
)CL";

struct App {
  cl::Context ctx;
  cl::Device dev;
  cl::CommandQueue queue;
  cl::Kernel kernel;
  cl::Buffer in, out;
  static constexpr std::size_t kW = 64, kH = 32;

  App() {
    std::vector<cl::Platform> platforms;
    cl::Platform::get(&platforms);
    for (auto& p : platforms) {
      std::vector<cl::Device> devs;
      p.getDevices(CL_DEVICE_TYPE_ALL, &devs);
      if (!devs.empty()) {
        dev = devs.front();
        break;
      }
    }
    ctx = cl::Context(dev);
    queue = cl::CommandQueue(ctx, dev);
    cl::Program prog(ctx, kSource);
    prog.build({dev});
    kernel = cl::Kernel(prog, "twice");
    std::vector<float> host(kW * kH);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
    in = cl::Buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, host.size() * sizeof(float), host.data());
    out = cl::Buffer(ctx, CL_MEM_WRITE_ONLY, host.size() * sizeof(float));
    kernel.setArg(0, in);
    kernel.setArg(1, out);
  }
  bool output_ok() {
    std::vector<float> host(kW * kH);
    queue.enqueueReadBuffer(out, CL_TRUE, 0, host.size() * sizeof(float), host.data());
    for (std::size_t i = 0; i < host.size(); ++i)
      if (host[i] != 2.0f * static_cast<float>(i)) return false;
    return true;
  }
};

TunerOptions quick() {
  TunerOptions o;
  o.lookup.forced = std::map<std::string, LocalSize, std::less<>>{};
  o.online_max_trials = 5;
  o.online_timing = {1, 2};
  return o;
}

}  // namespace

TEST(Tuner, LooksUpTunesOnlineAndLaunches) {
  App app;
  Store store(":memory:");
  Tuner tuner(store, quick());
  const Extent global{App::kW, App::kH, 2};
  const LookupResult before = tuner.lookup(app.queue(), app.kernel(), global);
  EXPECT_TRUE(before.level == LookupLevel::rule || before.level == LookupLevel::null_);
  EXPECT_TRUE(local_fits(before.local, global, tuner.device_info(app.queue())));

  const LookupResult tuned = tuner.tune(app.queue(), app.kernel(), global);
  EXPECT_EQ(tuned.level, LookupLevel::exact);
  EXPECT_TRUE(local_fits(tuned.local, global, tuner.device_info(app.queue())));
  const auto sessions = store.sessions();
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].kernel.name, "twice");
  EXPECT_EQ(sessions[0].spec.strategy, "online");
  EXPECT_FALSE(sessions[0].kernel.source_hash.empty());
  EXPECT_TRUE(sessions[0].ended_at);
  const auto trials = store.trials(sessions[0].id);
  EXPECT_GE(trials.size(), 2u);  // NULL and the rule at least
  EXPECT_LE(trials.size(), 5u + 2u);
  EXPECT_TRUE(store.measured(sessions[0].id, std::nullopt));
  const auto bests = store.best_configs({});
  ASSERT_EQ(bests.size(), 1u);
  EXPECT_TRUE(bests[0].null_ms);
  EXPECT_EQ(bests[0].local, tuned.local);

  cl::Event ev;
  const LookupResult used = tuner.launch(app.queue, app.kernel, cl::NDRange(App::kW, App::kH), &ev);
  ev.wait();
  EXPECT_EQ(used.level, LookupLevel::exact);
  EXPECT_TRUE(app.output_ok());
  EXPECT_EQ(tuner.local_size(app.queue, app.kernel, cl::NDRange(App::kW, App::kH)), tuned.local);
}

TEST(Tuner, LaunchTunesOnlineWhenAskedAndNothingIsStored) {
  App app;
  Store store(":memory:");
  TunerOptions o = quick();
  o.tune_online = true;
  Tuner tuner(store, o);
  const LookupResult r = tuner.launch(app.queue(), app.kernel(), Extent{App::kW * App::kH, 1, 1});
  app.queue.finish();
  EXPECT_EQ(r.level, LookupLevel::exact);
  EXPECT_TRUE(app.output_ok());
  EXPECT_EQ(store.sessions().size(), 1u);
  // A second launch uses the stored answer without tuning again.
  tuner.launch(app.queue(), app.kernel(), Extent{App::kW * App::kH, 1, 1});
  app.queue.finish();
  EXPECT_EQ(store.sessions().size(), 1u);
}

TEST(Tuner, ForcedLocalSizeIsUsedAndRejectsThreeDimensions) {
  App app;
  Store store(":memory:");
  TunerOptions o = quick();
  o.lookup.forced = parse_forced("twice=8,4", "test");
  Tuner tuner(store, o);
  const LookupResult r = tuner.launch(app.queue, app.kernel, cl::NDRange(App::kW, App::kH));
  app.queue.finish();
  EXPECT_EQ(r.level, LookupLevel::forced);
  EXPECT_EQ(r.local, (LocalSize{Extent{8, 4, 2}}));
  EXPECT_TRUE(app.output_ok());
  EXPECT_THROW(extent_of(cl::NDRange(4, 4, 4)), UsageError);
}
