// Multi-device split execution on real OpenCL: two and three PoCL devices in
// one process (POCL_DEVICES="pthread pthread pthread"), every kernel split
// and verified against the CPU reference, calibration for the measured
// model, its online refinement on two and three devices, a sweep and the
// grid oracle.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "split/multi_device.hpp"
#include "split/split_grid.hpp"
#include "split/split_refine.hpp"
#include "test_pocl_util.hpp"
#include "wstune/error.hpp"

using namespace wstune;
using wstune::test::pocl_devices;

namespace {

// Three PoCL CPU devices; set before the ICD loader first asks for platforms.
const bool env_set = test::use_pocl_pthread_devices(3, true);

const TimingOptions quick{1, 2};

}  // namespace

class SplitMulti : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_set);
    devices = pocl_devices(2);
    ASSERT_EQ(devices.size(), 2u) << "POCL_DEVICES=\"pthread pthread pthread\" must give PoCL devices";
    three = pocl_devices(3);
    ASSERT_EQ(three.size(), 3u) << "POCL_DEVICES=\"pthread pthread pthread\" must give three PoCL devices";
  }
  std::vector<Device> devices, three;
};

TEST_F(SplitMulti, EveryKernelSplitsAndVerifies) {
  struct Case {
    const char* kernel;
    const char* size;
    SplitDirection dir;
  };
  for (const Case& c :
       {Case{"matmul", "96x80x64", SplitDirection::y}, Case{"matmul", "96x80x64", SplitDirection::x},
        Case{"bilinear", "100", SplitDirection::auto_}, Case{"bilinear", "100", SplitDirection::y},
        Case{"sort", "1000", SplitDirection::auto_}, Case{"trapezoid", "4096", SplitDirection::auto_}}) {
    SCOPED_TRACE(std::string(c.kernel) + " " + c.size + " along " + std::string(to_string(c.dir)));
    const KernelSpec& k = kernel_spec(c.kernel);
    MultiDeviceRunner mr(devices, k, k.parse_size(c.size));
    const unsigned dim = split_dimension(k.dims(), k.priority(), c.dir);
    const std::size_t total = k.split_units(mr.problem(), dim);
    const auto blocks = align_blocks({0.37, 0.63}, total, dim, {1, 1});
    const SplitRunResult r = mr.run(blocks, {std::nullopt, std::nullopt}, quick);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.verdict.ok);
    ASSERT_EQ(r.slices.size(), 2u);
    EXPECT_EQ(r.makespan.size(), 2u);
    for (const auto& s : r.slices) {
      EXPECT_EQ(s.kernel.size(), 2u);
      EXPECT_EQ(s.wall.size(), 2u);
      EXPECT_GT(s.kernel.median(), 0);
    }
    EXPECT_GT(r.makespan.min(), 0);
    // How the wall times and the makespan compare with the kernel times is
    // a timing figure: bench_timing_checks.
  }
}

TEST_F(SplitMulti, OneDeviceAloneAndPerDeviceLocalSizes) {
  const KernelSpec& k = kernel_spec("matmul");
  MultiDeviceRunner mr(devices, k, k.parse_size("64"));
  auto r = mr.run(align_blocks({0.0, 1.0}, 64, 1, {1, 1}), {std::nullopt, std::nullopt}, quick);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.slices[0].kernel.size(), 0u);  // idle
  // Device 0 with 16x8 groups, device 1 with the driver's choice. matmul
  // guards its bounds, so device 0's slice need not be a multiple of 8 rows:
  // 37 rows run as 40 and verify.
  const std::vector<LocalSize> locals{Extent{16, 8, 2}, std::nullopt};
  EXPECT_EQ(split_granularity(k, 1, locals[0]), 1u);
  r = mr.run(shares_blocks(1, {37, 27}), locals, quick);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.verdict.ok);
  // A local size above the work-group limit is a constraint failure, not a crash.
  r = mr.run(align_blocks({0.5, 0.5}, 64, 1, {1, 1}), {Extent{128, 64, 2}, std::nullopt}, quick);
  EXPECT_EQ(r.status, TrialStatus::constraints);
  EXPECT_FALSE(r.error.empty());
  EXPECT_THROW((void)mr.run({Block{1, 0, 10}, Block{1, 10, 60}}, {std::nullopt, std::nullopt}, quick), UsageError);
}

TEST_F(SplitMulti, ModelsAndMeasuredCalibration) {
  const KernelSpec& k = kernel_spec("sort");
  MultiDeviceRunner mr(devices, k, k.parse_size("4096"));
  const std::vector<LocalSize> locals{std::nullopt, std::nullopt};
  for (auto m : {SplitModel::pe_ratio, SplitModel::proportional}) {
    const auto b = model_blocks(m, mr, 0, locals);
    EXPECT_EQ(b.back().end, 4096u);
    EXPECT_TRUE(mr.run(b, locals, quick).ok());
  }
  EXPECT_THROW((void)model_blocks(SplitModel::measured, mr, 0, locals), UsageError);
  Calibration cal = mr.calibrate_all(0, locals, quick);
  ASSERT_EQ(cal.devices.size(), 2u);
  for (const auto& d : cal.devices) {
    EXPECT_EQ(d.points.size(), 5u);
    EXPECT_GT(d.predict_ms(4096), 0);
  }
  EXPECT_EQ(calibration_from_json(to_json(cal)), cal);
  const auto b = refine_measured(mr, cal, locals, quick, 1);
  EXPECT_EQ(b.front().begin, 0u);
  EXPECT_EQ(b.back().end, 4096u);
  const auto r = mr.run(b, locals, quick);
  EXPECT_TRUE(r.ok()) << r.error;
}

TEST_F(SplitMulti, SweepFindsABestRatio) {
  const KernelSpec& k = kernel_spec("trapezoid");
  MultiDeviceRunner mr(devices, k, k.parse_size("8192"));
  const auto sweep = sweep_two(mr, 0, {std::nullopt, std::nullopt}, quick, 25, 12.5);
  ASSERT_GE(sweep.size(), 5u);
  EXPECT_DOUBLE_EQ(sweep.front().percent_first, 0);
  EXPECT_DOUBLE_EQ(sweep.back().percent_first, 100);
  // Sorted by share, each share once; the 12.5 % points refine around the
  // best of the 25 % points (within one coarse step of it).
  std::vector<SweepPoint> coarse;
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(sweep[i - 1].percent_first, sweep[i].percent_first);
    }
    if (std::fmod(sweep[i].percent_first, 25) == 0) coarse.push_back(sweep[i]);
  }
  EXPECT_EQ(coarse.size(), 5u);
  const SweepPoint* best = best_point(coarse);
  ASSERT_NE(best, nullptr);
  for (const auto& p : sweep) {
    if (std::fmod(p.percent_first, 25) != 0) {
      EXPECT_LT(std::abs(p.percent_first - best->percent_first), 25) << p.percent_first << " % refines no best";
    }
  }
  EXPECT_THROW((void)sweep_two(mr, 0, {std::nullopt, std::nullopt}, quick, 0), UsageError);
}

// The measured model refined online on two real devices: every probe ran and
// was verified, the budget holds, what it learned is folded into the
// calibration, and the chosen split, measured again interleaved with each
// device alone, is not worse than the better device alone (beyond a margin
// for the noise of a shared 2-core machine).
TEST_F(SplitMulti, RefinementIsVerifiedAndNotWorseThanTheBestDeviceAlone) {
  const KernelSpec& k = kernel_spec("trapezoid");
  MultiDeviceRunner mr(devices, k, k.parse_size("262144"));
  const std::vector<LocalSize> locals{std::nullopt, std::nullopt};
  const std::size_t total = 262144;
  Calibration cal = mr.calibrate_all(0, locals, quick);
  const Calibration solo = cal;
  RefineOptions opt;
  opt.max_points = 6;
  const TimingOptions probe_timing{1, 3};
  const SplitRefinement ref = refine_split(mr, cal, locals, probe_timing, opt);
  ASSERT_TRUE(ref.search.found());
  ASSERT_EQ(ref.search.units.size(), 2u);
  std::size_t distinct = 0;
  for (const auto& p : ref.search.probes) distinct += p.role != "confirm";
  EXPECT_LE(distinct, 6u);
  EXPECT_LE(ref.search.probes.size(), 6u + 2 * opt.rivals * opt.confirm);
  EXPECT_GE(distinct, 3u);  // start and both endpoints at least (equal devices)
  EXPECT_EQ(ref.concurrent_rounds, ref.search.probes.size() * 4);
  for (const auto& p : ref.search.probes) EXPECT_TRUE(std::isfinite(p.makespan_ms)) << p.units[0];
  ASSERT_EQ(ref.blocks.size(), 2u);
  EXPECT_EQ(ref.blocks[0].size(), ref.search.units[0]);
  EXPECT_EQ(ref.blocks[1].end, total);
  ASSERT_TRUE(ref.search.best_alone_ms.has_value());
  EXPECT_LE(ref.search.makespan_ms, *ref.search.best_alone_ms);
  if (ref.blocks[0].size() > 0 && ref.blocks[1].size() > 0) {
    // Both devices ran at once at the best split: their concurrency scales moved.
    EXPECT_NE(cal.devices[0].concurrency_scale, solo.devices[0].concurrency_scale);
    EXPECT_NE(cal.devices[1].concurrency_scale, solo.devices[1].concurrency_scale);
  }

  // The chosen split and each device alone run and verify. (Whether the split
  // is faster is a timing figure: bench_split and docs/results/split_*, not a
  // unit test on 2 shared cores.)
  const std::vector<std::vector<Block>> cands{ref.blocks, shares_blocks(0, {total, 0}), shares_blocks(0, {0, total})};
  for (const auto& c : cands) {
    const SplitRunResult r = mr.run(c, locals, probe_timing);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.verdict.ok);
  }
  // One calibration per device.
  Calibration extra = cal;
  extra.devices.push_back(cal.devices[0]);
  EXPECT_THROW((void)refine_split(mr, extra, locals, probe_timing, opt), UsageError);
}

// Three devices in one process: the measured model refined online (every
// probe run concurrently and its gathered output verified), the chosen
// device set, and the chosen split run again and verified.
TEST_F(SplitMulti, RefinementOnThreeDevicesChoosesASetAndVerifies) {
  const KernelSpec& k = kernel_spec("matmul");
  MultiDeviceRunner mr(three, k, k.parse_size("96x64x48"));
  const std::vector<LocalSize> locals(3, std::nullopt);
  const unsigned dim = split_dimension(k.dims(), k.priority(), SplitDirection::auto_);
  const std::size_t total = k.split_units(mr.problem(), dim);
  Calibration cal = mr.calibrate_all(dim, locals, quick);
  RefineOptions opt;
  opt.max_points = refine_points(3);
  const SplitRefinement ref = refine_split(mr, cal, locals, quick, opt);
  ASSERT_TRUE(ref.search.found());
  const SplitLattice lattice{total, split_granularities(k, mr.problem(), dim, locals)};
  std::set<Shares> distinct;
  for (const auto& p : ref.search.probes) {
    EXPECT_TRUE(std::isfinite(p.makespan_ms)) << "a probe failed or was wrong";
    EXPECT_TRUE(lattice.contains(p.units));
    if (p.role != "confirm") distinct.insert(p.units);
  }
  EXPECT_LE(distinct.size(), opt.max_points);
  EXPECT_GE(distinct.size(), 4u);  // the start and each device alone at least (equal devices)
  ASSERT_EQ(ref.blocks.size(), 3u);
  EXPECT_EQ(block_units(ref.blocks), ref.search.units);
  EXPECT_EQ(ref.blocks.back().end, total);
  EXPECT_FALSE(ref.search.devices().empty());
  ASSERT_TRUE(ref.search.best_alone_ms.has_value());
  EXPECT_LE(ref.search.makespan_ms, *ref.search.best_alone_ms);
  const SplitRunResult r = mr.run(ref.blocks, locals, quick);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.verdict.ok);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.slices[i].kernel.size() > 0, ref.blocks[i].size() > 0);
}

// The grid oracle on three devices: every point of a 25 % grid and its 12.5 %
// refinement runs and verifies, shares cover the range (which point is the
// best: BestPoint below). With pruning, the splits skipped are marked and each
// gives some device at least a slice that alone took longer than 1.5 × the
// best makespan.
TEST_F(SplitMulti, GridOracleOnThreeDevices) {
  const KernelSpec& k = kernel_spec("trapezoid");
  MultiDeviceRunner mr(three, k, k.parse_size("8192"));
  const std::vector<LocalSize> locals(3, std::nullopt);
  const auto grid = sweep_grid(mr, 0, locals, quick, GridOptions{4, 2, 0});
  EXPECT_GE(grid.size(), 15u);  // C(6, 2) coarse points, then the finer ones near the best
  const SweepPoint* best = best_point(grid);
  ASSERT_NE(best, nullptr);
  for (const auto& p : grid) {
    ASSERT_TRUE(p.result.ok()) << p.result.error;
    EXPECT_TRUE(p.result.verdict.ok);
    EXPECT_EQ(p.blocks.back().end, 8192u);
  }
  const auto pruned = sweep_grid(mr, 0, locals, quick, GridOptions{4, 2, 1.5});
  EXPECT_GE(pruned.size(), 15u);
  for (const auto& p : pruned) {
    if (p.result.ok()) continue;
    EXPECT_EQ(p.result.status, TrialStatus::timeout);
    EXPECT_EQ(p.result.error.rfind("not run:", 0), 0u) << p.result.error;
  }
  ASSERT_NE(best_point(pruned), nullptr);
  const std::string csv = grid_csv(grid);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "units_0,units_1,units_2,percent_0,percent_1,percent_2,devices,status,makespan_median_ms,makespan_min_ms");
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), grid.size() + 1);
  EXPECT_THROW((void)sweep_grid(mr, 0, {std::nullopt}, quick), UsageError);
}

// best_point: the smallest median makespan among the correct points; a
// failed point never wins however small its times, the first of equal
// medians does, and nothing correct gives nullptr.
TEST(BestPoint, SmallestMedianAmongCorrectPoints) {
  auto point = [](double percent, std::vector<double> ms, TrialStatus status = TrialStatus::correct) {
    SweepPoint p;
    p.percent_first = percent;
    p.result.status = status;
    p.result.makespan.ms = std::move(ms);
    return p;
  };
  const std::vector<SweepPoint> sweep{point(0, {0.5, 0.5, 0.5}, TrialStatus::correctness), point(25, {3, 2, 9}),
                                      point(50, {1, 8, 1}), point(75, {1, 1, 7}), point(100, {4, 4, 4})};
  const SweepPoint* best = best_point(sweep);
  ASSERT_NE(best, nullptr);
  EXPECT_DOUBLE_EQ(best->percent_first, 50);  // median 1 (min 1 too at 75: the first wins)
  EXPECT_EQ(best_point({point(0, {1}, TrialStatus::timeout), point(100, {1}, TrialStatus::runtime)}), nullptr);
  EXPECT_EQ(best_point({}), nullptr);
}
