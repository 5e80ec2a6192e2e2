// bench_timing_checks: the timing figures that used to be unit-test
// assertions (issue 35: no timed assertions in tests), measured here on real
// OpenCL (PoCL) and reported, one line per check, "ok" or "MISS":
//  - lock: a run that waits for a WSTUNE_TIMING_LOCK held by another holder
//    for --hold-ms counts the wait in its wall time (wall >= 2/3 of the hold:
//    thread start-up takes some of it);
//  - split: on two PoCL devices, every kernel split 37/63 (the cases of
//    SplitMulti.EveryKernelSplitsAndVerifies): each slice's median wall time
//    is at least half its median kernel time, and the run's makespan covers
//    the slowest device's fastest kernel.
// Exit 1 when a check misses (a noisy machine can: run it on a quiet one).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "bench_util.hpp"
#include "runner/runner.hpp"
#include "split/multi_device.hpp"
#include "test_pocl_util.hpp"
#include "wstune/error.hpp"

using namespace wstune;

namespace {

// Two PoCL CPU devices; set before the ICD loader first asks for platforms.
const bool env_set = test::use_pocl_pthread_devices(2, true);

bool report(const std::string& check, bool ok, const std::string& detail) {
  std::cout << fmt::format("{:<4} {:<40} {}\n", ok ? "ok" : "MISS", check, detail);
  return ok;
}

// A run that waits for the timing lock counts the wait in its wall time.
bool lock_wait_counts(const Device& device, int hold_ms) {
  const auto& k = kernel_spec("trapezoid");
  DeviceRunner runner(device, k);
  const Problem p = k.parse_size("4096");
  const Block whole = k.whole(p);
  runner.upload(p, whole, {});
  const std::string path = "/tmp/wstune-timing-lock-bench." + std::to_string(::getpid());
  ::setenv("WSTUNE_TIMING_LOCK", path.c_str(), 1);
  const int holder = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  if (holder < 0 || ::flock(holder, LOCK_EX) != 0) throw Error("cannot hold the lock file " + path);
  RunResult r;
  std::thread t([&] { r = runner.run(p, whole, std::nullopt, TimingOptions{1, 3}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  ::flock(holder, LOCK_UN);
  t.join();
  ::close(holder);
  ::unlink(path.c_str());
  ::unsetenv("WSTUNE_TIMING_LOCK");
  if (!r.ok()) throw Error("the locked run failed: " + r.error);
  return report("lock: the wait counts in the wall time", r.wall_ms >= hold_ms * 2.0 / 3,
                fmt::format("wall {:.1f} ms, lock held {} ms", r.wall_ms, hold_ms));
}

// Split runs on two devices: wall against kernel time, makespan against the
// slowest device's kernel.
bool split_times(const std::vector<Device>& devices) {
  struct Case {
    const char* kernel;
    const char* size;
    SplitDirection dir;
  };
  bool all = true;
  for (const Case& c :
       {Case{"matmul", "96x80x64", SplitDirection::y}, Case{"matmul", "96x80x64", SplitDirection::x},
        Case{"bilinear", "100", SplitDirection::auto_}, Case{"bilinear", "100", SplitDirection::y},
        Case{"sort", "1000", SplitDirection::auto_}, Case{"trapezoid", "4096", SplitDirection::auto_}}) {
    const KernelSpec& k = kernel_spec(c.kernel);
    MultiDeviceRunner mr(devices, k, k.parse_size(c.size));
    const unsigned dim = split_dimension(k.dims(), k.priority(), c.dir);
    const auto blocks = align_blocks({0.37, 0.63}, k.split_units(mr.problem(), dim), dim, {1, 1});
    const SplitRunResult r = mr.run(blocks, {std::nullopt, std::nullopt}, TimingOptions{1, 2});
    const std::string name = fmt::format("split: {} {} along {}", c.kernel, c.size, to_string(c.dir));
    if (!r.ok()) throw Error(name + " failed: " + r.error);
    for (std::size_t i = 0; i < r.slices.size(); ++i) {
      const auto& s = r.slices[i];
      all &= report(fmt::format("{}, slice {} wall", name, i), s.wall.median() >= s.kernel.median() * 0.5,
                    fmt::format("wall {:.3f} ms, kernel {:.3f} ms", s.wall.median(), s.kernel.median()));
    }
    const double slowest = std::max(r.slices[0].kernel.min(), r.slices[1].kernel.min());
    all &= report(name + ", makespan", r.makespan.max() >= slowest,
                  fmt::format("makespan {:.3f} ms, slowest kernel {:.3f} ms", r.makespan.max(), slowest));
  }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::guarded_main("bench_timing_checks", [&] {
    const int hold_ms = argc > 1 ? std::atoi(argv[1]) : 300;
    if (!env_set || hold_ms <= 0) throw UsageError("usage: bench_timing_checks [HOLD_MS > 0]");
    const auto devices = test::pocl_devices(2);
    if (devices.size() != 2) throw Error("two PoCL devices needed (install pocl-opencl-icd)");
    bool ok = lock_wait_counts(devices[0], hold_ms);
    ok &= split_times(devices);
    return ok ? 0 : 1;
  });
}
