// Issue 16: the stored speed-up over NULL must hold. The stencil's stored
// best claimed 2.22x over NULL (NULL measured cold) where a steady-state A/B
// gave 1.01x. Here the ratio stored by online tuning is compared with an
// interleaved steady-state A/B of the same two configurations measured by
// the benchmark itself. Exit status 1 when they differ by more than 5 %.
// Usage: POCL_MAX_PTHREAD_COUNT=1 bench_tuner_ab [ROUNDS]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "test_tuner_util.hpp"
#include "wstune/tuner.hpp"

using namespace wstune;
using wstune::test::Cl;

namespace {

const char* kStencil = R"CL(
__kernel void stencil(__global const float* in, __global float* out) {
  const int x = get_global_id(0), y = get_global_id(1), w = get_global_size(0), h = get_global_size(1);
  const int xm = max(x - 1, 0), xp = min(x + 1, w - 1), ym = max(y - 1, 0), yp = min(y + 1, h - 1);
  out[y * w + x] = 0.5f * in[y * w + x] +
                   0.125f * (in[y * w + xm] + in[y * w + xp] + in[ym * w + x] + in[yp * w + x]);
}
)CL";

// Median kernel times (ms) of `a` and `b`, run alternately on a profiling
// queue after a warm-up: a steady-state A/B.
std::pair<double, double> ab(Cl& cl, cl::Kernel& k, const cl::NDRange& global, const LocalSize& a, const LocalSize& b,
                             unsigned rounds) {
  cl::CommandQueue q(cl.ctx, cl.dev, CL_QUEUE_PROFILING_ENABLE);
  auto range = [](const LocalSize& l) { return l ? cl::NDRange(l->x, l->y) : cl::NullRange; };
  auto once = [&](const LocalSize& l) {
    cl::Event ev;
    q.enqueueNDRangeKernel(k, cl::NullRange, global, range(l), nullptr, &ev);
    ev.wait();
    return (ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() - ev.getProfilingInfo<CL_PROFILING_COMMAND_START>()) / 1e6;
  };
  Samples sa, sb;
  for (unsigned i = 0; i < 3; ++i) once(a), once(b);
  for (unsigned i = 0; i < rounds; ++i) {
    sa.ms.push_back(once(a));
    sb.ms.push_back(once(b));
  }
  return {sa.median(), sb.median()};
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned rounds = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 101;
  Store store(":memory:");
  TunerOptions o;
  o.lookup.forced = std::map<std::string, LocalSize, std::less<>>{};
  Tuner tuner(store, o);
  Cl cl;
  constexpr std::size_t w = 2048, h = 1024;
  std::vector<float> host(w * h);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 97);
  cl::Buffer in = cl.buffer(host), out = cl.buffer(host);
  cl::Kernel k = cl.kernel(kStencil, "stencil");
  k.setArg(0, in);
  tuner.set_arg(k, 1, out);
  // The first launch's cost: online tuning is bounded by online_max_time
  // for the search plus final_max_time for the interleaved final rounds.
  const auto t0 = std::chrono::steady_clock::now();
  tuner.tune(cl.queue(), k(), {w, h, 2});
  const double tune_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "online tuning (the first launch's cost): %.0f ms wall; bounds: search %lld ms + final rounds %lld ms "
      "(each may finish the configuration or round in progress; at least 5 final rounds)\n",
      tune_ms, static_cast<long long>(o.online_max_time.count()), static_cast<long long>(o.final_max_time.count()));
  const auto bests = store.best_configs({});
  if (bests.size() != 1 || !bests[0].ratio_to_null()) {
    std::fprintf(stderr, "expected one best configuration with a ratio to NULL\n");
    return 1;
  }
  const BestConfig& best = bests[0];
  const auto [null_ms, best_ms] = ab(cl, k, cl::NDRange(w, h), std::nullopt, best.local, rounds);
  const double stored = *best.ratio_to_null(), measured = null_ms / best_ms;
  std::printf("best %s: stored ratio to NULL %.3f (%.3f / %.3f ms), steady-state A/B %.3f (%.3f / %.3f ms)\n",
              to_string(best.local).c_str(), stored, *best.null_ms, best.median_ms, measured, null_ms, best_ms);
  const double off = std::abs(stored / measured - 1.0);
  std::printf("stored / steady-state = %.3f (%s 5 %%)\n", stored / measured, off <= 0.05 ? "within" : "beyond");
  return off <= 0.05 ? 0 : 1;
}
