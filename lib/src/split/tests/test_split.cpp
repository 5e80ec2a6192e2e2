// Split models (pure functions): the paper's PE-ratio correction model
// (Table 4, hand-worked 3- and 4-device continued ratios), proportional
// shares, alignment to local sizes, the measured model and its JSON form.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <numeric>

#include "kernel/kernel.hpp"
#include "split/split.hpp"
#include "wstune/error.hpp"

using namespace wstune;

namespace {
std::vector<std::size_t> sizes(const std::vector<Block>& b) {
  std::vector<std::size_t> s;
  for (const auto& x : b) s.push_back(x.size());
  return s;
}
}  // namespace

TEST(ComputeClass, PaperBoundaries) {
  EXPECT_EQ(compute_class(4e8), ComputeClass::small);
  EXPECT_EQ(compute_class(4.0001e8), ComputeClass::medium);
  EXPECT_EQ(compute_class(7.9e11), ComputeClass::medium);
  EXPECT_EQ(compute_class(8e11), ComputeClass::large);
  EXPECT_DOUBLE_EQ(correction_k(ComputeClass::small), 1.25);
  EXPECT_DOUBLE_EQ(correction_k(ComputeClass::medium), 0.75);
  EXPECT_DOUBLE_EQ(correction_k(ComputeClass::large), 0.25);
}

// Paper Table 4: at exactly 2:3 the smaller device gets 10 / 30 / 50 %.
TEST(PeRatio, Table4AtTwoToThree) {
  const std::vector<std::size_t> g{1, 1};
  EXPECT_EQ(sizes(align_blocks(pe_ratio_fractions({200, 300}, 1e12), 1000, 1, g)),
            (std::vector<std::size_t>{100, 900}));
  EXPECT_EQ(sizes(align_blocks(pe_ratio_fractions({200, 300}, 5e11), 1000, 1, g)),
            (std::vector<std::size_t>{300, 700}));
  EXPECT_EQ(sizes(align_blocks(pe_ratio_fractions({200, 300}, 4e8), 1000, 1, g)), (std::vector<std::size_t>{500, 500}));
  // Device order does not matter: the larger one listed first gets the rest.
  EXPECT_EQ(sizes(align_blocks(pe_ratio_fractions({300, 200}, 1e12), 1000, 1, g)),
            (std::vector<std::size_t>{900, 100}));
  // The paper's GPUs (Quadro 2000D 4×48 = 192 PEs, 8800GTS 16×8 = 128): 2:3 exactly.
  EXPECT_DOUBLE_EQ(pe_ratio_small_fraction(128, 192, ComputeClass::medium), 0.4 * 0.75);
}

TEST(PeRatio, EvenSplitWhenCloserThanTwoToThree) {
  EXPECT_DOUBLE_EQ(pe_ratio_small_fraction(201, 300, ComputeClass::large), 0.5);
  EXPECT_DOUBLE_EQ(pe_ratio_small_fraction(300, 300, ComputeClass::large), 0.5);
  EXPECT_LT(pe_ratio_small_fraction(199, 300, ComputeClass::large), 0.11);
  EXPECT_THROW((void)pe_ratio_small_fraction(300, 200, ComputeClass::large), UsageError);
  EXPECT_THROW((void)pe_ratio_fractions({0, 200}, 1), UsageError);
  EXPECT_THROW((void)pe_ratio_fractions({}, 1), UsageError);
}

// Eq. (3) floors the small device's share; eq. (4) gives the rest.
TEST(PeRatio, FloorOfEquationThree) {
  // PE 100:900, medium: 0.1 × 0.75 = 0.075 of 1001 = 75.075 → 75, rest 926.
  EXPECT_EQ(sizes(align_blocks(pe_ratio_fractions({100, 900}, 1e9), 1001, 0, {1, 1})),
            (std::vector<std::size_t>{75, 926}));
}

// Hand-worked: PEs 600, 100, 300, medium (k = 0.75).
// Pair (100, 300): ratio 1/4 → 0.1875 → 3 : 13. Pair (300, 600): 1/3 → 0.25 → 1 : 3.
// Continued ratio 3 : 13 : 39 (sum 55), listed in the input order 39, 3, 13.
TEST(PeRatio, FloorOfEquationThreeWhenTheFractionIsAboveOneHalf) {
  // PE 2:8, medium: 0.2 × 0.75 = 0.15 of 1024 = 153.6 → floor 153 (eq. 3),
  // the larger device gets the rest, 871 (eq. 4) — never 154 / 870.
  EXPECT_EQ(sizes(align_blocks(pe_ratio_fractions({2, 8}, 1e9), 1024, 1, {1, 1})),
            (std::vector<std::size_t>{153, 871}));
  EXPECT_EQ(sizes(align_blocks(pe_ratio_fractions({2, 8}, 1e9), 13, 1, {1, 1})), (std::vector<std::size_t>{1, 12}));
}

TEST(PeRatio, ThreeDevicesContinuedRatio) {
  const auto f = pe_ratio_fractions({600, 100, 300}, 1e10);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_NEAR(f[0], 39.0 / 55, 1e-12);
  EXPECT_NEAR(f[1], 3.0 / 55, 1e-12);
  EXPECT_NEAR(f[2], 13.0 / 55, 1e-12);
  EXPECT_EQ(sizes(align_blocks(f, 5500, 1, {1, 1, 1})), (std::vector<std::size_t>{3900, 300, 1300}));
}

// Hand-worked: PEs 100, 120, 300, 300, small (k = 1.25).
// (100, 120): 100/220 > 2/5 → even 1 : 1. (120, 300): 2/7 × 1.25 = 5/14 → 5 : 9.
// (300, 300): even. Continued ratio 5 : 5 : 9 : 9 (sum 28).
TEST(PeRatio, FourDevicesContinuedRatio) {
  const auto f = pe_ratio_fractions({100, 120, 300, 300}, 1e6);
  EXPECT_NEAR(f[0], 5.0 / 28, 1e-12);
  EXPECT_NEAR(f[1], 5.0 / 28, 1e-12);
  EXPECT_NEAR(f[2], 9.0 / 28, 1e-12);
  EXPECT_NEAR(f[3], 9.0 / 28, 1e-12);
  EXPECT_EQ(sizes(align_blocks(f, 2800, 0, {1, 1, 1, 1})), (std::vector<std::size_t>{500, 500, 900, 900}));
}

TEST(Proportional, SharesByPe) {
  const auto f = proportional_fractions({128, 192});
  EXPECT_DOUBLE_EQ(f[0], 0.4);
  EXPECT_DOUBLE_EQ(f[1], 0.6);
}

TEST(Align, SlicesAreMultiplesOfTheGranularity) {
  // 1000 rows, device 0 local 16 along y, device 1 null: 0.3 → 300 → 288 (18 × 16), rest 712.
  const auto b = align_blocks({0.3, 0.7}, 1000, 1, {16, 1});
  EXPECT_EQ(sizes(b), (std::vector<std::size_t>{288, 712}));
  EXPECT_EQ(b[0].begin, 0u);
  EXPECT_EQ(b[1].begin, 288u);
  EXPECT_EQ(b[1].end, 1000u);
  EXPECT_EQ(b[1].dim, 1u);
  // Both 16-aligned: the remainder goes 16 at a time to the one below its target.
  EXPECT_EQ(sizes(align_blocks({0.3, 0.7}, 1024, 1, {16, 16})), (std::vector<std::size_t>{304, 720}));
  // 1000 is no multiple of 16: nothing can take the last 8 rows.
  EXPECT_THROW((void)align_blocks({0.5, 0.5}, 1000, 1, {16, 16}), UsageError);
  EXPECT_THROW((void)align_blocks({0.5}, 1000, 1, {1, 1}), UsageError);
  // A zero fraction leaves a device empty.
  EXPECT_EQ(sizes(align_blocks({0.0, 1.0}, 64, 0, {1, 1})), (std::vector<std::size_t>{0, 64}));
}

// blocks_tile(): contiguous blocks from 0 along one dimension that end at
// the range's end; empty blocks may sit anywhere in the order.
TEST(Blocks, TileTheRangeInOrder) {
  EXPECT_TRUE(blocks_tile({Block{1, 0, 40}, Block{1, 40, 40}, Block{1, 40, 100}}, 1, 100));
  EXPECT_TRUE(blocks_tile({Block{0, 0, 100}}, 0, 100));
  EXPECT_FALSE(blocks_tile({}, 0, 0));
  EXPECT_FALSE(blocks_tile({Block{1, 0, 40}, Block{1, 41, 100}}, 1, 100));  // a gap
  EXPECT_FALSE(blocks_tile({Block{1, 0, 40}, Block{1, 30, 100}}, 1, 100));  // an overlap
  EXPECT_FALSE(blocks_tile({Block{1, 0, 40}, Block{1, 40, 90}}, 1, 100));   // short of the end
  EXPECT_FALSE(blocks_tile({Block{1, 0, 40}, Block{0, 40, 100}}, 1, 100));  // another dimension
  EXPECT_FALSE(blocks_tile({Block{1, 0, 40}, Block{1, 40, 100}}, 0, 100));
  EXPECT_FALSE(blocks_tile({Block{1, 10, 100}}, 1, 100));  // not from 0
}

// chunk_blocks(): consecutive sub-blocks covering the block, every one but
// the last a multiple of the granularity, sizes within one granule of each
// other; fewer when the block holds fewer granules.
TEST(ChunkBlocks, CoverTheBlockInGranules) {
  const Block b{1, 100, 1133};  // 1033 units: 64 granules of 16 and 9 left over
  const auto c = chunk_blocks(b, 5, 16);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c.front().begin, 100u);
  EXPECT_EQ(c.back().end, 1133u);
  for (std::size_t s = 0; s < c.size(); ++s) {
    EXPECT_EQ(c[s].dim, 1u);
    if (s) {
      EXPECT_EQ(c[s].begin, c[s - 1].end);
    }
    if (s + 1 < c.size()) {
      EXPECT_EQ(c[s].size() % 16, 0u) << s;
    }
    EXPECT_GE(c[s].size(), 12u * 16) << s;
    EXPECT_LE(c[s].size(), 13u * 16 + 9) << s;
  }
  EXPECT_EQ(c.back().size(), 12u * 16 + 9);  // 64 = 13 + 13 + 13 + 13 + 12 granules; the rest to the last
  EXPECT_EQ(chunk_blocks(Block{0, 0, 40}, 8, 16).size(), 2u);  // two whole granules
  EXPECT_EQ(chunk_blocks(Block{0, 0, 20}, 8, 16), (std::vector<Block>{Block{0, 0, 20}}));
  EXPECT_EQ(chunk_blocks(Block{0, 5, 5}, 3, 1), (std::vector<Block>{Block{0, 5, 5}}));
  EXPECT_THROW((void)chunk_blocks(b, 0, 16), UsageError);
  EXPECT_THROW((void)chunk_blocks(b, 2, 0), UsageError);
}

TEST(Align, SortHasTwoElementsPerWorkItem) {
  const KernelSpec& sort = kernel_spec("sort");
  EXPECT_EQ(split_granularity(sort, 0, Extent{64, 1, 1}), 128u);
  EXPECT_EQ(split_granularity(sort, 0, std::nullopt), 2u);
  // matmul guards its bounds (its NDRange is rounded up to the local size):
  // any slice runs with any local size.
  const KernelSpec& mm = kernel_spec("matmul");
  ASSERT_TRUE(mm.guards_bounds());
  EXPECT_EQ(split_granularity(mm, 1, Extent{32, 8, 2}), 1u);
  EXPECT_EQ(split_granularity(mm, 0, Extent{32, 8, 2}), 1u);
  // 4096 elements, 2 per work-item: the driver's choice keeps to 8 work-items
  // (16 elements, 256 granules; 16 work-items would leave 128).
  EXPECT_EQ(split_granularities(sort, sort.parse_size("4096"), 0, {Extent{64, 1, 1}, std::nullopt}),
            (std::vector<std::size_t>{128, 16}));
  EXPECT_EQ(split_granularity(mm, mm.parse_size("64"), 1, Extent{32, 8, 2}), 1u);
}

// Slices run with the driver's choice of local size keep to a power of two of
// work-items, so the driver never has only a prime extent to divide (bilinear's
// 2789 of 4096 columns ran 140x slower on an H200), within the caps and never
// below 256 granules of the whole range.
TEST(Align, DriverChoiceKeepsSlicesToAPowerOfTwo) {
  const KernelSpec& bl = kernel_spec("bilinear");
  const KernelSpec& tz = kernel_spec("trapezoid");
  const KernelSpec& mm = kernel_spec("matmul");
  const Problem big = bl.parse_size("2048x2048:4096x4096");
  // bilinear splits along x (split direction auto: its work-groups are tall)
  EXPECT_EQ(split_granularity(bl, big, 0, std::nullopt), kDriverAlignmentNd);  // 4096 columns: 16 (256 granules)
  EXPECT_EQ(split_granularity(bl, bl.parse_size("512x512:1024x1024"), 0, std::nullopt), 4u);  // 1024 columns
  EXPECT_EQ(split_granularity(bl, bl.parse_size("128x128:256x256"), 0, std::nullopt), 1u);    // 256 columns
  EXPECT_EQ(split_granularity(mm, mm.parse_size("4096"), 1, std::nullopt), kDriverAlignmentNd);
  EXPECT_EQ(split_granularity(mm, mm.parse_size("4099"), 1, std::nullopt), 1u);  // 4099 = 4099: nothing divides
  EXPECT_EQ(split_granularity(mm, mm.parse_size("4100"), 1, std::nullopt), 4u);  // 4100 = 4 x 1025
  EXPECT_EQ(split_granularity(tz, tz.parse_size("16777216"), 0, std::nullopt), kDriverAlignment1d);
  // A set local size is unchanged: 1 for kernels that guard their bounds.
  ASSERT_TRUE(bl.guards_bounds());
  EXPECT_EQ(split_granularity(bl, big, 0, Extent{32, 8, 1}), 1u);
  EXPECT_EQ(split_granularity(mm, mm.parse_size("4096"), 1, Extent{32, 8, 1}), 1u);
}

// Next to a device with a set local size that is no power of two (a kernel
// that does not guard its bounds), the driver's-choice device keeps to a
// power of two dividing it, so it can take any remainder: 96 work-items of
// sort leave 32 for the null device, and every split of the range aligns.
TEST(Align, DriverChoiceNextToASetLocalSizeTakesTheRemainder) {
  const KernelSpec& sort = kernel_spec("sort");
  ASSERT_FALSE(sort.guards_bounds());
  const Problem p = sort.parse_size("65536");
  ASSERT_EQ(split_granularity(sort, p, 0, std::nullopt), 128u);  // alone: 64 work-items of 2 keys
  const auto g = split_granularities(sort, p, 0, {Extent{96, 1, 1}, std::nullopt});
  EXPECT_EQ(g, (std::vector<std::size_t>{192, 64}));
  for (const double f : {0.1, 0.33, 0.5, 0.681, 0.999}) {
    const auto blocks = align_blocks({f, 1 - f}, 65536, 0, g);
    EXPECT_TRUE(blocks_tile(blocks, 0, 65536)) << f;
    EXPECT_EQ(blocks[0].size() % 192, 0u) << f;
    EXPECT_EQ(blocks[1].size() % 64, 0u) << f;
  }
  // Only null devices: each keeps the alignment it has alone.
  EXPECT_EQ(split_granularities(sort, p, 0, {std::nullopt, std::nullopt}), (std::vector<std::size_t>{128, 128}));
}

RC_GTEST_PROP(Align, CoversTheRangeAligned, ()) {
  const auto n = *rc::gen::inRange<std::size_t>(1, 6);
  std::vector<double> f;
  std::vector<std::size_t> g;
  for (std::size_t i = 0; i < n; ++i) {
    f.push_back(*rc::gen::inRange(0, 1000) / 1000.0);
    g.push_back(i == 0 ? 1 : *rc::gen::element<std::size_t>(1, 2, 8, 16, 64));
  }
  const double s = std::accumulate(f.begin(), f.end(), 0.0);
  RC_PRE(s > 0);
  for (auto& x : f) x /= s;
  const auto total = *rc::gen::inRange<std::size_t>(1, 100000);
  const auto b = align_blocks(f, total, 0, g);
  std::size_t pos = 0;
  for (std::size_t i = 0; i < n; ++i) {
    RC_ASSERT(b[i].begin == pos);
    RC_ASSERT(b[i].size() % g[i] == 0 || i == 0);
    pos = b[i].end;
  }
  RC_ASSERT(pos == total);
}

RC_GTEST_PROP(PeRatio, FractionsArePositiveAndSumToOne, ()) {
  const auto pe = *rc::gen::container<std::vector<std::uint64_t>>(*rc::gen::inRange<std::size_t>(1, 7),
                                                                  rc::gen::inRange<std::uint64_t>(1, 20000));
  const double c = std::pow(10.0, *rc::gen::inRange(6, 14));
  const auto f = pe_ratio_fractions(pe, c);
  RC_ASSERT(std::abs(std::accumulate(f.begin(), f.end(), 0.0) - 1.0) < 1e-9);
  for (double x : f) RC_ASSERT(x > 0);
}

TEST(Direction, AutoKeepsTheSharingDirectionWhole) {
  EXPECT_EQ(split_dimension(2, Priority::x, SplitDirection::auto_), 1u);  // matmul: row blocks
  EXPECT_EQ(split_dimension(2, Priority::y, SplitDirection::auto_), 0u);  // bilinear: column blocks
  EXPECT_EQ(split_dimension(1, Priority::none, SplitDirection::auto_), 0u);
  EXPECT_EQ(split_dimension(2, Priority::y, SplitDirection::y), 1u);
  EXPECT_THROW((void)split_dimension(1, Priority::none, SplitDirection::y), UsageError);
  EXPECT_EQ(parse_split_direction("auto"), SplitDirection::auto_);
  EXPECT_THROW((void)parse_split_direction("z"), UsageError);
  EXPECT_EQ(parse_split_model("pe-ratio"), SplitModel::pe_ratio);
  for (auto m : {SplitModel::pe_ratio, SplitModel::proportional, SplitModel::measured, SplitModel::even})
    EXPECT_EQ(parse_split_model(to_string(m)), m);
  EXPECT_EQ(to_string(SplitModel::even), "even");
  EXPECT_THROW((void)parse_split_model("magic"), UsageError);
}

TEST(Measured, FitIsExactOnALine) {
  std::vector<CalibrationPoint> pts;
  for (double w : {100.0, 200.0, 400.0}) pts.push_back(CalibrationPoint{0, w, 2 + 0.01 * w, 0.5, 0.5});
  const LinearFit f = fit_linear(pts);
  EXPECT_NEAR(f.a_ms, 3.0, 1e-9);
  EXPECT_NEAR(f.b_ms_per_item, 0.01, 1e-12);
  // Falling times are noise: a constant, never a negative slope.
  const LinearFit c = fit_linear({CalibrationPoint{0, 100, 5, 0, 0}, CalibrationPoint{0, 200, 3, 0, 0}});
  EXPECT_DOUBLE_EQ(c.b_ms_per_item, 0);
  EXPECT_DOUBLE_EQ(c.a_ms, 4);
  EXPECT_THROW((void)fit_linear({}), UsageError);
}

TEST(Measured, PredictionInterpolatesAndNeverFalls) {
  DeviceCalibration d;
  d.points = {CalibrationPoint{0, 100, 10, 0, 0}, CalibrationPoint{0, 200, 8, 0, 0},
              CalibrationPoint{0, 400, 30, 0, 0}};
  d.fit = fit_linear(d.points);
  EXPECT_DOUBLE_EQ(d.predict_ms(0), 0);
  EXPECT_DOUBLE_EQ(d.predict_ms(200), 10);  // 8 raised to 10: non-decreasing
  EXPECT_DOUBLE_EQ(d.predict_ms(300), 20);
  EXPECT_GT(d.predict_ms(800), 30);
  double prev = 0;
  for (double w = 1; w < 1000; w += 7) {
    EXPECT_GE(d.predict_ms(w), prev);
    prev = d.predict_ms(w);
  }
  d.concurrency_scale = 2;
  EXPECT_DOUBLE_EQ(d.predict_ms(300), 40);
  observe_concurrent(d, 300, 30);
  EXPECT_DOUBLE_EQ(d.concurrency_scale, 1.5);
}

namespace {
DeviceCalibration line(double a, double b) {
  DeviceCalibration d;
  for (double w : {125.0, 250.0, 500.0, 1000.0}) d.points.push_back(CalibrationPoint{0, w, a + b * w, 0, 0});
  d.fit = fit_linear(d.points);
  return d;
}
}  // namespace

TEST(Measured, DevicesFinishTogether) {
  Calibration cal{"matmul", "1000", 1, {line(1, 0.01), line(1, 0.03)}};
  auto w = [](std::size_t, std::size_t u) { return static_cast<double>(u); };
  const auto b = measured_blocks(cal, 1000, 1, {1, 1}, w);
  // 1 + 0.01 n0 = 1 + 0.03 (1000 − n0) → n0 = 750.
  EXPECT_EQ(sizes(b), (std::vector<std::size_t>{750, 250}));
  const double t = predicted_makespan_ms(cal, b, w);
  EXPECT_NEAR(t, 8.5, 0.02);
  EXPECT_LT(t, cal.devices[0].predict_ms(1000));
  // A device whose fixed cost exceeds the other's whole run gets nothing.
  Calibration slow{"matmul", "1000", 1, {line(1, 0.01), line(50, 0.001)}};
  EXPECT_EQ(sizes(measured_blocks(slow, 1000, 1, {1, 1}, w)), (std::vector<std::size_t>{1000, 0}));
  // Granularities are kept.
  for (const auto& blk : measured_blocks(cal, 1024, 1, {16, 16}, w)) EXPECT_EQ(blk.size() % 16, 0u);
}

// observe_job(): a finished job's time beyond the prediction becomes the
// device's fixed cost, which every non-empty slice then pays; a device
// whose fixed cost exceeds its share's saving gets nothing, one with a
// smaller fixed cost gets less; the JSON form keeps it.
TEST(Measured, FixedCostFromAJobMovesWorkAway) {
  auto w = [](std::size_t, std::size_t u) { return static_cast<double>(u); };
  Calibration cal{"bilinear", "1000", 1, {line(1, 0.01), line(1, 0.03)}};
  EXPECT_EQ(sizes(measured_blocks(cal, 1000, 1, {1, 1}, w)), (std::vector<std::size_t>{750, 250}));
  DeviceCalibration& cpu = cal.devices[1];
  const double predicted = cpu.predict_ms(250);  // 8.5 ms
  observe_job(cpu, 250, predicted + 3);
  EXPECT_NEAR(cpu.fixed_ms, 3, 1e-9);
  EXPECT_NEAR(cpu.predict_ms(250), predicted + 3, 1e-9);
  EXPECT_DOUBLE_EQ(cpu.predict_ms(0), 0);  // an unused device costs nothing
  const auto fewer = sizes(measured_blocks(cal, 1000, 1, {1, 1}, w));
  EXPECT_GT(fewer[0], 750u);  // 1 + 0.01 n0 = 4 + 0.03 (1000 − n0) → n0 = 825
  EXPECT_NEAR(static_cast<double>(fewer[0]), 825, 1);
  observe_job(cpu, 250, predicted + 20);  // more than the whole job on the first device saves
  EXPECT_EQ(sizes(measured_blocks(cal, 1000, 1, {1, 1}, w)), (std::vector<std::size_t>{1000, 0}));
  observe_job(cpu, 250, predicted - 2);  // faster than predicted: no negative fixed cost
  EXPECT_DOUBLE_EQ(cpu.fixed_ms, 0);
  observe_job(cpu, 0, 50);  // nothing ran: nothing learned
  EXPECT_DOUBLE_EQ(cpu.fixed_ms, 0);
  cpu.fixed_ms = 2.5;
  EXPECT_EQ(device_calibration_from_json(to_json(cpu)), cpu);
  // observe_concurrent() scales only the part the points predict.
  observe_concurrent(cpu, 250, 2.5 + 2 * (predicted));
  EXPECT_NEAR(cpu.concurrency_scale, 2, 1e-9);
  observe_concurrent(cpu, 250, 2.0);  // no more than the fixed cost: nothing to scale
  EXPECT_NEAR(cpu.concurrency_scale, 2, 1e-9);
}

// A job of many kernel runs per upload and read-back: the kernel-bound
// device's share shrinks, the transfer-bound one's grows (for_kernel_runs).
TEST(Measured, KernelRunsWeighTheKernelNotTheTransfers) {
  auto device = [](double kernel_per_item, double transfer_per_item) {
    DeviceCalibration d;
    for (double w : {125.0, 250.0, 500.0, 1000.0})
      d.points.push_back(CalibrationPoint{0, w, kernel_per_item * w, transfer_per_item * w, 0});
    d.fit = fit_linear(d.points);
    return d;
  };
  // Per run, both take 0.01 ms per item: an even split. Device 0's time is all transfer, device 1's all kernel.
  const Calibration cal{"bilinear", "1000", 1, {device(0, 0.01), device(0.01, 0)}};
  auto w = [](std::size_t, std::size_t u) { return static_cast<double>(u); };
  EXPECT_EQ(sizes(measured_blocks(cal, 1000, 1, {1, 1}, w)), (std::vector<std::size_t>{500, 500}));
  EXPECT_EQ(for_kernel_runs(cal, 0), cal) << "0 runs count as 1";
  const Calibration five = for_kernel_runs(cal, 5);
  EXPECT_DOUBLE_EQ(five.devices[1].points.back().kernel_ms, 5 * 10.0);
  EXPECT_DOUBLE_EQ(five.devices[0].points.back().h2d_ms, 10.0) << "transfers happen once";
  EXPECT_NEAR(five.devices[1].fit.b_ms_per_item, 0.05, 1e-12) << "fits redone";
  // 0.01 n0 = 0.05 (1000 − n0) → n0 = 833.
  const auto b = sizes(measured_blocks(five, 1000, 1, {1, 1}, w));
  EXPECT_NEAR(static_cast<double>(b[0]), 833, 1);
  EXPECT_EQ(b[0] + b[1], 1000u);
}

TEST(Measured, StepFunctionsLikeSortPadding) {
  // Cost follows the padded power-of-two length: 600 of 1024 costs as much as 1024.
  auto w = [](std::size_t, std::size_t u) { return u == 0 ? 0.0 : static_cast<double>(std::bit_ceil(u)); };
  Calibration cal{"sort", "1024", 0, {line(0, 0.01), line(0, 0.012)}};
  const auto b = measured_blocks(cal, 1024, 0, {2, 2}, w);
  // An even 512/512 keeps both at 512 padded; anything larger on one side pads to 1024.
  EXPECT_EQ(sizes(b), (std::vector<std::size_t>{512, 512}));
}

TEST(Measured, CalibrationJsonRoundTrip) {
  Calibration cal{"bilinear", "1024", 0, {line(1, 0.01), line(2, 0.5)}};
  cal.devices[0].device_id = "0:1";
  cal.devices[0].device_name = "pthread";
  cal.devices[0].fingerprint = "0123456789abcdef";
  cal.devices[0].local = "32x8";
  cal.devices[1].concurrency_scale = 1.25;
  const auto j = to_json(cal);
  EXPECT_EQ(calibration_from_json(nlohmann::json::parse(j.dump())), cal);
  EXPECT_EQ(j.at("devices").at(0).at("fingerprint"), "0123456789abcdef");
  EXPECT_THROW((void)calibration_from_json(nlohmann::json{{"kernel", "x"}}), nlohmann::json::exception);
}

TEST(Measured, CalibrationSizes) {
  EXPECT_EQ(calibration_sizes(1024, 1), (std::vector<std::size_t>{128, 256, 512, 768, 1024}));
  EXPECT_EQ(calibration_sizes(1000, 16), (std::vector<std::size_t>{112, 240, 496, 736, 992}));
  EXPECT_EQ(calibration_sizes(8, 8), (std::vector<std::size_t>{8}));
}

TEST(Measured, CalibrationLadder) {
  EXPECT_EQ(calibration_ladder(1024, 1), (std::vector<std::size_t>{16, 32, 64, 128, 256, 512, 768, 1024}));
  EXPECT_EQ(calibration_ladder(1000, 16), (std::vector<std::size_t>{16, 48, 112, 240, 496, 736, 992}));
  EXPECT_EQ(calibration_ladder(8, 8), (std::vector<std::size_t>{8}));
  EXPECT_TRUE(calibration_ladder(0, 1).empty());
}

namespace {
// A synthetic device: t = a + b·units ms per slice; records what was measured.
struct LinearDevice {
  LinearDevice(double a_ms, double b_ms) : a(a_ms), b(b_ms) {}
  double a, b;
  std::vector<std::size_t> asked;
  double operator()(std::size_t u) {
    asked.push_back(u);
    return a + b * static_cast<double>(u);
  }
};
std::vector<std::size_t> capped(std::size_t total, double cap, LinearDevice& dev) {
  return capped_calibration_sizes(total, 1, cap, [&](std::size_t u) { return dev(u); });
}
}  // namespace

TEST(Measured, CappedCalibrationSizes) {
  {  // no cap: exactly calibration_sizes(), every one measured
    LinearDevice d{1, 1};
    EXPECT_EQ(capped(1024, 0, d), calibration_sizes(1024, 1));
    EXPECT_EQ(d.asked, calibration_sizes(1024, 1));
  }
  {  // a fast device never reaches the cap: the whole ladder
    LinearDevice d{0.05, 1e-4};
    EXPECT_EQ(capped(1024, 250, d), calibration_ladder(1024, 1));
  }
  {  // 1 ms per unit, cap 100 ms: 16, 32, 64 measured; 128 is predicted at
     // 64 × 2 = 128 ms > 100 and not run
    LinearDevice d{0, 1};
    EXPECT_EQ(capped(1024, 100, d), (std::vector<std::size_t>{16, 32, 64}));
    EXPECT_EQ(d.asked, (std::vector<std::size_t>{16, 32, 64}));
  }
  {  // a large fixed cost makes the proportional prediction pessimistic:
     // t(32) = 90 ms, so 64 is predicted at 180 ms and not run
    LinearDevice d{80, 0.3125};
    EXPECT_EQ(capped(1024, 100, d), (std::vector<std::size_t>{16, 32}));
  }
  {  // even the 1/64 slice is over the cap: the two smallest slices, no more
    LinearDevice d{0, 10};
    EXPECT_EQ(capped(1024, 100, d), (std::vector<std::size_t>{16, 32}));
  }
  {  // a slice measured over the cap (under-predicted: t grows as n²) ends it
    std::vector<std::size_t> asked;
    const auto got = capped_calibration_sizes(1024, 1, 130, [&](std::size_t u) {
      asked.push_back(u);
      return static_cast<double>(u * u) / 64;  // 4, 16, 64, then 256 ms at 128 (predicted 128)
    });
    EXPECT_EQ(got, (std::vector<std::size_t>{16, 32, 64, 128}));
    EXPECT_EQ(asked, got);
  }
  {  // slices that cannot run are skipped, not counted
    std::vector<std::size_t> asked;
    const auto got = capped_calibration_sizes(1024, 1, 100, [&](std::size_t u) {
      asked.push_back(u);
      return u == 32 ? -1.0 : static_cast<double>(u);
    });
    EXPECT_EQ(got, (std::vector<std::size_t>{16, 64}));
    EXPECT_EQ(asked, (std::vector<std::size_t>{16, 32, 64}));
  }
}

TEST(Measured, CappedCalibrationPredictsTheFullSizeOfALinearDevice) {
  // The fit over the capped points extrapolates to the whole range.
  const double a = 2, b = 0.5;  // ms, ms per work-item
  DeviceCalibration d;
  const auto sizes = capped_calibration_sizes(4096, 1, 200, [&](std::size_t u) {
    const double w = static_cast<double>(u);
    d.points.push_back(CalibrationPoint{u, w, a + b * w, 0, 0});
    return a + b * w;
  });
  ASSERT_EQ(sizes, (std::vector<std::size_t>{64, 128, 256}));
  d.fit = fit_linear(d.points);
  EXPECT_NEAR(d.predict_ms(4096), a + b * 4096, 1e-6);
}
