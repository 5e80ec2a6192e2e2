// wstune::Tuner on real OpenCL (PoCL): look-up for an app's kernel on its
// whole identity, online tuning that never changes what the app computes
// (in-place kernels, __local scratch, verification), kernel attributes
// (reqd_work_group_size), bounds-guarded kernels, 3-D NDRanges.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "app/app_kernel.hpp"
#include "test_tuner_util.hpp"
#include "wstune/tuner.hpp"

using namespace wstune;
using wstune::test::Cl;

namespace {

const char* kTwice = R"CL(
__kernel void twice(__global const float* in, __global float* out) {
  const size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
  out[i] = 2.0f * in[i];
}
)CL";

const char* kSaxpy = R"CL(
__kernel void saxpy(float a, __global const float* x, __global float* y) {
  const size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
)CL";

TunerOptions quick() {
  TunerOptions o;
  o.lookup.forced = std::map<std::string, LocalSize, std::less<>>{};
  o.online_max_trials = 5;
  o.online_timing = {1, 2};
  o.final_rounds = 5;
  return o;
}

// quick() with online tuning in launch() and at most `trials` configurations.
TunerOptions online(unsigned trials = 5) {
  TunerOptions o = quick();
  o.tune_online = true;
  o.online_max_trials = trials;
  return o;
}

std::vector<float> iota_floats(std::size_t n, float start = 0) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// The `twice` kernel over W x H with its buffers set through the tuner.
struct Twice {
  static constexpr std::size_t kW = 64, kH = 32;
  Cl cl;
  cl::Kernel kernel = cl.kernel(kTwice, "twice");
  std::vector<float> host = iota_floats(kW * kH);
  cl::Buffer in = cl.buffer(host), out = cl.buffer(host);
  explicit Twice(Tuner& t) {
    kernel.setArg(0, in);
    t.set_arg(kernel, 1, out);
  }
  bool output_ok() {
    const auto v = cl.read(out, host.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i] != 2.0f * host[i]) return false;
    return true;
  }
};

}  // namespace

TEST(Tuner, LooksUpTunesOnlineAndLaunches) {
  Store store(":memory:");
  Tuner tuner(store, quick());
  Twice app(tuner);
  const Extent global{Twice::kW, Twice::kH, 2};
  const LookupResult before = tuner.lookup(app.cl.queue(), app.kernel(), global);
  EXPECT_TRUE(before.level == LookupLevel::rule || before.level == LookupLevel::null_);

  const LookupResult tuned = tuner.tune(app.cl.queue(), app.kernel(), global);
  EXPECT_EQ(tuned.level, LookupLevel::exact);
  EXPECT_TRUE(local_fits(tuned.local, global, tuner.device_info(app.cl.queue())));
  const auto sessions = store.sessions();
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].kernel, tuner.kernel_key(app.cl.queue(), app.kernel()));
  EXPECT_EQ(sessions[0].spec.strategy, "online");
  EXPECT_EQ(sessions[0].kernel.source_hash, fnv1a_hex(kTwice));
  EXPECT_TRUE(sessions[0].ended_at);
  const auto trials = store.trials(sessions[0].id);
  EXPECT_GE(trials.size(), 2u);  // NULL and the rule at least
  EXPECT_LE(trials.size(), 5u + 1u);
  EXPECT_TRUE(store.measured(sessions[0].id, std::nullopt));
  const auto bests = store.best_configs({});
  ASSERT_EQ(bests.size(), 1u);
  EXPECT_TRUE(bests[0].null_ms);
  EXPECT_EQ(bests[0].local, tuned.local);

  cl::Event ev;
  const LookupResult used = tuner.launch(app.cl.queue, app.kernel, cl::NDRange(Twice::kW, Twice::kH), &ev);
  ev.wait();
  EXPECT_EQ(used.level, LookupLevel::exact);
  EXPECT_TRUE(app.output_ok());
  EXPECT_EQ(tuner.local_size(app.cl.queue, app.kernel, cl::NDRange(Twice::kW, Twice::kH)), tuned.local);
}

TEST(Tuner, LaunchTunesOnlineOnceWhenNothingIsStored) {
  Store store(":memory:");
  Tuner tuner(store, online());
  Twice app(tuner);
  const Extent global{Twice::kW * Twice::kH, 1, 1};
  const LookupResult r = tuner.launch(app.cl.queue(), app.kernel(), global);
  app.cl.queue.finish();
  EXPECT_EQ(r.level, LookupLevel::exact);
  EXPECT_TRUE(app.output_ok());
  EXPECT_EQ(store.sessions().size(), 1u);
  tuner.launch(app.cl.queue(), app.kernel(), global);  // the stored answer, no tuning
  app.cl.queue.finish();
  EXPECT_EQ(store.sessions().size(), 1u);
}

// The example of tuner.hpp's doc comment, as written there.
TEST(Tuner, DocExampleRuns) {
  Cl cl;
  std::vector<float> host = iota_floats(1024 * 1024);
  cl::Buffer in = cl.buffer(host), out = cl.buffer(host);
  cl::Kernel kernel = cl.kernel(kTwice, "twice");
  kernel.setArg(0, in);
  kernel.setArg(1, out);
  auto& queue = cl.queue;
  setenv("WSTUNE_DB", ":memory:", 1);
  wstune::Tuner tuner;  // default database
  auto local = tuner.local_size(queue, kernel, cl::NDRange(1024, 1024));
  tuner.launch(queue, kernel, cl::NDRange(1024, 1024));  // enqueues with it
  unsetenv("WSTUNE_DB");
  queue.finish();
  EXPECT_TRUE(local_fits(local, {1024, 1024, 2}, tuner.device_info(queue())));
  // The launch ran the kernel over the whole NDRange: every element doubled.
  const auto v = cl.read(out, host.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < v.size(); ++i) wrong += v[i] != 2.0f * host[i];
  EXPECT_EQ(wrong, 0u) << "of " << v.size() << " elements";
}

TEST(Tuner, ForcedLocalSizeAndThreeDimensionalExtents) {
  Store store(":memory:");
  TunerOptions o = quick();
  o.lookup.forced = parse_forced("twice=8,4", "test");
  Tuner tuner(store, o);
  Twice app(tuner);
  const LookupResult r = tuner.launch(app.cl.queue, app.kernel, cl::NDRange(Twice::kW, Twice::kH));
  app.cl.queue.finish();
  EXPECT_EQ(r.level, LookupLevel::forced);
  EXPECT_EQ(r.local, (LocalSize{Extent{8, 4, 2}}));
  EXPECT_TRUE(app.output_ok());
  EXPECT_EQ(extent_of(cl::NDRange(4, 5, 6)), (Extent{4, 5, 6, 3}));
  EXPECT_EQ(extent_of(cl::NDRange(7)), (Extent{7, 1, 1}));
}

// Issue 16: an in-place SAXPY tuned online left 9,990,000 of 10^7 elements
// wrong. Now tune() leaves y as it was, and launch() leaves exactly one
// launch's result.
TEST(Tuner, InPlaceKernelTunedOnlineComputesOneLaunch) {
  Store store(":memory:");
  Tuner tuner(store, online(8));
  Cl cl;
  constexpr std::size_t n = 1 << 16;
  std::vector<float> x = iota_floats(n), y0 = iota_floats(n, 7);
  cl::Buffer bx = cl.buffer(x), by = cl.buffer(y0);
  cl::Kernel k = cl.kernel(kSaxpy, "saxpy");
  k.setArg(0, 3.0f);
  k.setArg(1, bx);
  tuner.set_arg(k, 2, by);

  tuner.tune(cl.queue(), k(), {n, 1, 1});
  EXPECT_EQ(cl.read(by, n), y0) << "tuning changed y";
  const auto trials = store.trials(store.sessions().at(0).id);
  EXPECT_GE(trials.size(), 3u);
  for (const auto& t : trials) EXPECT_EQ(t.status, TrialStatus::correct) << to_string(t.local) << " " << t.error;

  const LookupResult r = tuner.launch(cl.queue(), k(), {n / 2, 1, 1});  // tunes, or reuses n's answer
  EXPECT_TRUE(r.level == LookupLevel::exact || r.level == LookupLevel::nearest) << to_string(r.level);
  const auto y = cl.read(by, n);
  for (std::size_t i = 0; i < n; ++i) {
    const float want = i < n / 2 ? 3.0f * x[i] + y0[i] : y0[i];
    ASSERT_EQ(y[i], want) << "element " << i;
  }
}

// Dynamic tuning (KTT's): each launch measures at most N new configurations,
// launches the fastest so far (level online), and leaves exactly one more
// in-place SAXPY step in y; the launch that ends the session stores the best
// and later launches read it. No configuration is measured twice.
TEST(Tuner, DynamicTuningSpreadsTrialsOverLaunches) {
  Store store(":memory:");
  TunerOptions o = online(7);
  o.online_trials_per_launch = 2;
  o.online_max_time = std::chrono::seconds(60);  // the trial count ends the session here
  Tuner tuner(store, o);
  Cl cl;
  constexpr std::size_t n = 1 << 14;
  std::vector<float> x = iota_floats(n);
  std::vector<float> want = iota_floats(n, 1);
  cl::Buffer bx = cl.buffer(x), by = cl.buffer(want);
  cl::Kernel k = cl.kernel(kSaxpy, "saxpy");
  k.setArg(0, 0.5f);
  k.setArg(1, bx);
  tuner.set_arg(k, 2, by);
  std::vector<LookupLevel> levels;
  std::size_t stored_before = 0;
  for (int launch = 0; launch < 8; ++launch) {
    const LookupResult r = tuner.launch(cl.queue(), k(), {n, 1, 1});
    cl.queue.finish();
    levels.push_back(r.level);
    for (std::size_t i = 0; i < n; ++i) want[i] = 0.5f * x[i] + want[i];
    ASSERT_EQ(cl.read(by, n), want) << "launch " << launch << " (" << to_string(r.level) << ")";
    const std::size_t stored = store.trials(store.sessions().at(0).id).size();
    if (r.level == LookupLevel::online) {
      EXPECT_LE(stored - stored_before, 2u) << "launch " << launch << " measured more than its share";
      EXPECT_FALSE(store.sessions().at(0).ended_at) << "launch " << launch;
    }
    stored_before = stored;
  }
  EXPECT_EQ(levels.front(), LookupLevel::online);
  const auto first_exact = std::find(levels.begin(), levels.end(), LookupLevel::exact);
  ASSERT_NE(first_exact, levels.end()) << "the session never ended";
  EXPECT_TRUE(std::all_of(first_exact, levels.end(), [](LookupLevel l) { return l == LookupLevel::exact; }));
  EXPECT_TRUE(std::all_of(levels.begin(), first_exact, [](LookupLevel l) { return l == LookupLevel::online; }));
  ASSERT_EQ(store.sessions().size(), 1u);
  const auto trials = store.trials(store.sessions().at(0).id);
  EXPECT_LE(trials.size(), 7u);
  // Each launch before the last measured exactly its 2; the last at most 2.
  const auto online_launches = static_cast<std::size_t>(first_exact - levels.begin());
  EXPECT_GE(trials.size(), 2 * online_launches);
  EXPECT_LE(trials.size(), 2 * online_launches + 2);
  EXPECT_GE(online_launches, 2u) << "the search was spread over launches";
  std::set<std::string> shapes;
  for (const auto& t : trials)
    EXPECT_TRUE(shapes.insert(to_string(t.local)).second) << "measured twice: " << to_string(t.local);
  EXPECT_EQ(store.best_configs({}).size(), 1u);
}

// A configuration whose output differs from NULL's is `correctness` and
// never the best; after launch() the output is NULL's.
TEST(Tuner, OutputsThatDifferFromNullAreCorrectnessFailures) {
  Store store(":memory:");
  TunerOptions o = quick();
  o.online_max_trials = 10;
  Tuner tuner(store, o);
  Cl cl;
  constexpr std::size_t n = 4096;
  std::vector<float> in = iota_floats(n), zero(n, 0.0f);
  cl::Buffer bin = cl.buffer(in), bout = cl.buffer(zero), bref = cl.buffer(zero);
  const char* src = R"CL(
__kernel void bygroup(__global const float* in, __global float* out) {
  const size_t i = get_global_id(0);
  out[i] = in[i] + (float)get_local_size(0);   /* depends on the local size */
}
)CL";
  cl::Kernel k = cl.kernel(src, "bygroup");
  k.setArg(0, bin);
  k.setArg(1, bref);
  cl.queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(n), cl::NullRange);  // NULL's output
  const auto want = cl.read(bref, n);
  tuner.set_arg(k, 1, bout);
  tuner.tune(cl.queue(), k(), {n, 1, 1});
  unsigned wrong = 0;
  for (const auto& t : store.trials(store.sessions().at(0).id)) wrong += t.status == TrialStatus::correctness;
  EXPECT_GE(wrong, 1u) << "shapes other than NULL's give other outputs";
  tuner.launch(cl.queue(), k(), {n, 1, 1});
  EXPECT_EQ(cl.read(bout, n), want);
}

// Issue 16: a kernel with a 16-float __local scratch passed trials at 250
// and 500 work-items. Without a setter tuning is refused; with one, the
// scratch is sized for every candidate and results are right.
TEST(Tuner, LocalScratchNeedsASetter) {
  Store store(":memory:");
  Tuner tuner(store, online());
  Cl cl;
  constexpr std::size_t n = 2000;
  const char* src = R"CL(
__kernel void groupsum(__global const float* in, __global float* out, __local float* scratch) {
  const size_t l = get_local_id(0), i = get_global_id(0);
  scratch[l] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  float s = 0.0f;
  for (size_t j = 0; j < get_local_size(0); ++j) s += scratch[j];
  out[i] = in[i] + 0.0f * s;   /* the same for every local size */
}
)CL";
  std::vector<float> in = iota_floats(n), zero(n, 0.0f);
  cl::Buffer bin = cl.buffer(in), bout = cl.buffer(zero);
  cl::Kernel k = cl.kernel(src, "groupsum");
  k.setArg(0, bin);
  tuner.set_arg(k, 1, bout);
  k.setArg(2, cl::Local(16 * sizeof(float)));
  try {
    tuner.launch(cl.queue(), k(), {n, 1, 1});
    FAIL() << "launch tuned a kernel with an unsized __local argument";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("__local"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("local_args"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cl.read(bout, n), zero) << "nothing ran";
  EXPECT_TRUE(store.sessions().empty());

  std::vector<std::size_t> sized;
  KernelOptions ko;
  ko.local_args = [&](cl_kernel kernel, const LocalSize& local) {
    if (!local) return false;  // the kernel must know its group size
    sized.push_back(local->count());
    return clSetKernelArg(kernel, 2, local->count() * sizeof(float), nullptr) == CL_SUCCESS;
  };
  tuner.set_kernel_options(k(), ko);
  const LookupResult r = tuner.launch(cl.queue(), k(), {n, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::exact);
  ASSERT_TRUE(r.local);
  EXPECT_EQ(sized.back(), r.local->count()) << "the launch sized the scratch for its local size";
  EXPECT_EQ(cl.read(bout, n), in);
  bool null_refused = false;
  for (const auto& t : store.trials(store.sessions().at(0).id)) {
    if (!t.local)
      null_refused = t.status == TrialStatus::constraints;
    else
      EXPECT_EQ(t.status, TrialStatus::correct) << to_string(t.local) << " " << t.error;
  }
  EXPECT_TRUE(null_refused);
}

// Issue 16: with reqd_work_group_size(16,8,1) all online trials failed and
// launch threw. Now it is the answer, with no trials.
TEST(Tuner, ReqdWorkGroupSizeIsTheAnswer) {
  Store store(":memory:");
  Tuner tuner(store, online());
  Cl cl;
  const char* src = R"CL(
__kernel __attribute__((reqd_work_group_size(16, 8, 1)))
void fixed(__global float* out, const uint w, const uint h) {
  const size_t x = get_global_id(0), y = get_global_id(1);
  if (x < w && y < h) out[y * w + x] = (float)(get_local_size(0) * 100 + get_local_size(1));
}
)CL";
  std::vector<float> zero(100 * 100, 0.0f);
  cl::Buffer out = cl.buffer(zero);
  cl::Kernel k = cl.kernel(src, "fixed");
  tuner.set_arg(k, 0, out);
  k.setArg(1, cl_uint{64});
  k.setArg(2, cl_uint{32});
  const LookupResult r = tuner.launch(cl.queue(), k(), {64, 32, 2});
  EXPECT_EQ(r.level, LookupLevel::required);
  EXPECT_EQ(r.local, (LocalSize{Extent{16, 8, 1, 2}}));
  EXPECT_EQ(tuner.tune(cl.queue(), k(), {64, 32, 2}).level, LookupLevel::required);
  EXPECT_TRUE(store.sessions().empty()) << "no trials";
  EXPECT_EQ(cl.read(out, 1)[0], 1608.0f);
  // 100 x 100 is no multiple of 16 x 8: a clear error, or padding for a guarded kernel.
  EXPECT_THROW(tuner.launch(cl.queue(), k(), {100, 100, 2}), UsageError);
  KernelOptions guarded;
  guarded.bounds_guarded = true;
  tuner.set_kernel_options(k(), guarded);
  k.setArg(1, cl_uint{100});
  k.setArg(2, cl_uint{100});
  tuner.launch(cl.queue(), k(), {100, 100, 2});
  const auto v = cl.read(out, 100 * 100);
  EXPECT_EQ(v.back(), 1608.0f) << "the padded NDRange covered the last element";
}

TEST(Tuner, KernelIdentityIncludesSourceAndBuildOptions) {
  Store store(":memory:");
  Tuner tuner(store, quick());
  Cl cl;
  const char* src = R"CL(
__kernel void scale(__global float* y) { y[get_global_id(0)] *= SCALE; }
)CL";
  const char* other = R"CL(
__kernel void scale(__global float* y) { y[get_global_id(0)] += 1.0f; }
)CL";
  std::vector<float> h = iota_floats(1024);
  cl::Buffer b = cl.buffer(h);
  cl::Kernel k2 = cl.kernel(src, "scale", "-DSCALE=2.0f"), k3 = cl.kernel(src, "scale", "-DSCALE=3.0f");
  cl::Kernel ko = cl.kernel(other, "scale");
  for (auto* k : {&k2, &k3, &ko}) tuner.set_arg(*k, 0, b);
  tuner.tune(cl.queue(), k2(), {1024, 1, 1});
  EXPECT_EQ(tuner.lookup(cl.queue(), k2(), {1024, 1, 1}).level, LookupLevel::exact);
  EXPECT_NE(tuner.lookup(cl.queue(), k3(), {1024, 1, 1}).level, LookupLevel::exact) << "other -D values";
  EXPECT_NE(tuner.lookup(cl.queue(), ko(), {1024, 1, 1}).level, LookupLevel::exact) << "other source";
  EXPECT_EQ(tuner.kernel_key(cl.queue(), k3()).build_options, "-DSCALE=3.0f");
  EXPECT_EQ(cl.read(b, 1024), h) << "tuning restored y";
}

// Issue 16: the prime size's answer bled to 10^7 and 4096 and online tuning
// never started. Now each non-near size tunes online.
TEST(Tuner, PrimeSizeAnswerDoesNotStopOnlineTuningOfOtherSizes) {
  Store store(":memory:");
  Tuner tuner(store, online());
  Cl cl;
  constexpr std::size_t prime = 100'003, round = 100'000;
  std::vector<float> x = iota_floats(prime), y(prime, 1.0f);
  cl::Buffer bx = cl.buffer(x), by = cl.buffer(y);
  cl::Kernel k = cl.kernel(kSaxpy, "saxpy");
  k.setArg(0, 2.0f);
  k.setArg(1, bx);
  tuner.set_arg(k, 2, by);
  EXPECT_EQ(tuner.launch(cl.queue(), k(), {prime, 1, 1}).level, LookupLevel::exact);
  const LookupResult r = tuner.launch(cl.queue(), k(), {round, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::exact) << "tuned at its own size";
  EXPECT_EQ(store.sessions().size(), 2u);
  ASSERT_TRUE(r.from);
  EXPECT_EQ(r.from->problem.global, (Extent{round, 1, 1}));
  const auto v = cl.read(by, prime);
  EXPECT_EQ(v[1], 1.0f + 2 * 2.0f * x[1]);
  EXPECT_EQ(v[prime - 1], 1.0f + 2.0f * x[prime - 1]) << "one launch at the prime size, none at 100,000";
}

// A bounds-guarded kernel at a prime size gets padded NDRanges, so shapes
// other than 1 are candidates; results stay right.
TEST(Tuner, BoundsGuardedKernelGetsPaddedGlobalSizes) {
  Store store(":memory:");
  Tuner tuner(store, online(6));
  Cl cl;
  constexpr std::size_t prime = 100'003;
  const char* src = R"CL(
__kernel void guarded(__global float* y, const uint n) {
  const size_t i = get_global_id(0);
  if (i < n) y[i] = 2.0f * y[i] + 1.0f;
}
)CL";
  std::vector<float> y0 = iota_floats(prime);
  cl::Buffer by = cl.buffer(y0);
  cl::Kernel k = cl.kernel(src, "guarded");
  tuner.set_arg(k, 0, by);
  k.setArg(1, cl_uint{prime});
  KernelOptions ko;
  ko.bounds_guarded = true;
  tuner.set_kernel_options(k(), ko);
  const LookupResult r = tuner.launch(cl.queue(), k(), {prime, 1, 1});
  EXPECT_EQ(r.level, LookupLevel::exact);
  unsigned padded = 0;
  for (const auto& t : store.trials(store.sessions().at(0).id)) {
    EXPECT_EQ(t.status, TrialStatus::correct) << to_string(t.local) << " " << t.error;
    if (t.local && t.local->x > 1) {
      ASSERT_TRUE(t.global);
      EXPECT_EQ(t.global->x % t.local->x, 0u);
      EXPECT_GE(t.global->x, prime);
      ++padded;
    }
  }
  EXPECT_GE(padded, 2u) << "shapes that do not divide the prime size were tried";
  const auto v = cl.read(by, prime);
  for (std::size_t i = 0; i < prime; ++i) ASSERT_EQ(v[i], 2.0f * y0[i] + 1.0f) << i;
}

TEST(Tuner, NonUniformWorkGroupsNeedDeviceAndProgramSupport) {
  using detail::non_uniform_allowed;
  DeviceInfo with = Tuner(":memory:").device_info(Cl().queue()), without = with;
  with.non_uniform_work_groups = true;
  without.non_uniform_work_groups = false;
  EXPECT_TRUE(non_uniform_allowed(with, "-cl-std=CL2.0"));
  EXPECT_TRUE(non_uniform_allowed(with, "-DX=1 -cl-std=CL3.0"));
  EXPECT_FALSE(non_uniform_allowed(with, "")) << "OpenCL C 1.2 programs: uniform";
  EXPECT_FALSE(non_uniform_allowed(with, "-cl-std=CL2.0 -cl-uniform-work-group-size"));
  EXPECT_FALSE(non_uniform_allowed(without, "-cl-std=CL2.0"));
  Store store(":memory:");
  Tuner tuner(store, quick());
  Cl cl;
  // PoCL here reports OpenCL 3.0 without non-uniform work-groups: a prime
  // size of an unguarded kernel still only fits divisors.
  cl::Kernel k = cl.kernel(kSaxpy, "saxpy");
  const auto r = tuner.lookup(cl.queue(), k(), {100'003, 1, 1});
  EXPECT_TRUE(!r.local || 100'003 % r.local->x == 0);
}

// 3-D NDRanges: look-up, online tuning, launch, store.
TEST(Tuner, ThreeDimensionalKernels) {
  Store store(":memory:");
  Tuner tuner(store, online());
  Cl cl;
  const char* src = R"CL(
__kernel void vol(__global float* v) {
  const size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) + get_global_id(0);
  v[i] = (float)(get_global_id(0) + 100 * get_global_id(1) + 10000 * get_global_id(2));
}
)CL";
  std::vector<float> zero(32 * 16 * 8, -1.0f);
  cl::Buffer b = cl.buffer(zero);
  cl::Kernel k = cl.kernel(src, "vol");
  tuner.set_arg(k, 0, b);
  cl::Event ev;
  const LookupResult r = tuner.launch(cl.queue, k, cl::NDRange(32, 16, 8), &ev);
  ev.wait();
  EXPECT_EQ(r.level, LookupLevel::exact);
  if (r.local) {
    EXPECT_EQ(r.local->dims, 3u);
  }
  const auto v = cl.read(b, zero.size());
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v.back(), 31.0f + 1500.0f + 70000.0f);
  const auto bests = store.best_configs({});
  ASSERT_EQ(bests.size(), 1u);
  EXPECT_EQ(bests[0].problem.global, (Extent{32, 16, 8, 3}));
  EXPECT_GE(store.trials(store.sessions().at(0).id).size(), 3u);
}

TEST(Tuner, WrittenBufferMustBeKnownBeforeTuning) {
  Store store(":memory:");
  Tuner tuner(store, quick());
  Cl cl;
  std::vector<float> h = iota_floats(256);
  cl::Buffer in = cl.buffer(h), out = cl.buffer(h);
  cl::Kernel k = cl.kernel(kTwice, "twice");
  k.setArg(0, in);
  k.setArg(1, out);  // not through the tuner
  try {
    tuner.tune(cl.queue(), k(), {256, 1, 1});
    FAIL() << "tuned without knowing the written buffer";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("set_arg"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out"), std::string::npos) << "names the argument: " << e.what();
  }
  KernelOptions none;
  none.written_args = std::vector<cl_uint>{};  // the app says: it writes nothing wstune must keep
  tuner.set_kernel_options(k(), none);
  EXPECT_EQ(tuner.tune(cl.queue(), k(), {256, 1, 1}).level, LookupLevel::exact);
}
