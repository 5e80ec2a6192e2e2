// The one planner of a split (model_blocks(), pure): what `wstune split` and
// wstuned's master both cut a job with. Each model's blocks tile the range,
// every slice keeps to its device's granularity (split_granularities() of
// the planning local sizes), the models differ as the paper's rules say, the
// even model ignores the devices, and a range with a partial last step (an
// odd-length sort) gives that step to the block that ends the range.
#include <gtest/gtest.h>

#include "kernel/kernel.hpp"
#include "split/model_blocks.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"
#include "wstune_config.hpp"

using namespace wstune;

namespace {

// Every block's size, in device order.
Shares units(const std::vector<Block>& blocks) {
  return block_units(blocks);
}

// A synthetic calibration of `ms_per_item` per work-item, no fixed cost.
DeviceCalibration linear(double ms_per_item) {
  DeviceCalibration d;
  for (double w : {1024.0, 4096.0, 16384.0}) d.points.push_back(CalibrationPoint{0, w, ms_per_item * w, 0, 0});
  d.fit = fit_linear(d.points);
  return d;
}

// Asserts that `blocks` tile `spec`'s range of `p` along `dim` and that every
// block but the one ending the range is a multiple of its device's granularity.
void expect_aligned(const std::vector<Block>& blocks, const KernelSpec& spec, const Problem& p, unsigned dim,
                    const std::vector<LocalSize>& locals) {
  const std::size_t total = spec.split_units(p, dim);
  ASSERT_TRUE(blocks_tile(blocks, dim, total));
  const auto g = split_granularities(spec, p, dim, locals);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].end == total) continue;  // it may hold the range's partial last step
    EXPECT_EQ(blocks[i].size() % g[i], 0u) << i << ": granularity " << g[i];
  }
}

}  // namespace

// The case: matmul 64 on PoCL's basic (16 PEs) and pthread (32 PEs)
// devices with the driver's choice: 64 rows leave no power-of-two alignment
// (fewer than 256 granules), so the models' rows are the paper's floors.
// wstuned planned 16/48 before (its own 16-row granularity).
TEST(ModelBlocks, ModelsDifferAsThePaperSays) {
  const KernelSpec& mm = kernel_spec("matmul");
  const Problem p = mm.parse_size("64");
  const std::vector<LocalSize> null2{std::nullopt, std::nullopt};
  // pe-ratio: not closer than 2:3 (3·16 ≤ 2·32): 16/48 × k 1.25 (small class) = 0.4167 → 26 rows.
  EXPECT_EQ(units(model_blocks(SplitModel::pe_ratio, mm, p, 1, {16, 32}, null2)), (Shares{26, 38}));
  EXPECT_EQ(units(model_blocks(SplitModel::proportional, mm, p, 1, {16, 32}, null2)), (Shares{21, 43}));
  EXPECT_EQ(units(model_blocks(SplitModel::even, mm, p, 1, {16, 32}, null2)), (Shares{32, 32}));
  // Along x the same shares of 64 columns.
  EXPECT_EQ(units(model_blocks(SplitModel::pe_ratio, mm, p, 0, {16, 32}, null2)), (Shares{26, 38}));
  EXPECT_EQ(model_blocks(SplitModel::pe_ratio, mm, p, 0, {16, 32}, null2)[0].dim, 0u);
}

// The even model gives 1/n whatever the PEs (a device of 0 PEs too, which
// pe-ratio and proportional refuse); the remainder goes as align_blocks() gives it.
TEST(ModelBlocks, EvenIgnoresTheDevices) {
  const KernelSpec& mm = kernel_spec("matmul");
  const Problem p = mm.parse_size("64");
  EXPECT_EQ(units(model_blocks(SplitModel::even, mm, p, 1, {1, 1000}, {std::nullopt, std::nullopt})), (Shares{32, 32}));
  const std::vector<LocalSize> null3(3, std::nullopt);
  const auto three = model_blocks(SplitModel::even, mm, p, 1, {0, 16, 32}, null3);
  EXPECT_TRUE(blocks_tile(three, 1, 64));
  for (const auto& b : three) EXPECT_TRUE(b.size() == 21 || b.size() == 22) << b.size();
  EXPECT_THROW((void)model_blocks(SplitModel::pe_ratio, mm, p, 1, {0, 16, 32}, null3), UsageError);
  EXPECT_EQ(model_fractions(SplitModel::even, mm, p, {7, 9, 11, 13}), (std::vector<double>(4, 0.25)));
  EXPECT_THROW((void)model_fractions(SplitModel::measured, mm, p, {7, 9}), UsageError);
}

// Every slice is a multiple of its device's granularity from the planning
// local sizes: a set local size (sort: × 2 elements per work-item), the
// driver's choice aligned to a power of two that divides the other
// device's; matmul guards its bounds, so a set local size leaves it free.
TEST(ModelBlocks, SlicesKeepToEachDevicesGranularity) {
  const KernelSpec& sort = kernel_spec("sort");
  const Problem p = sort.parse_size("4096");
  const std::vector<std::vector<LocalSize>> cases{{Extent{64, 1, 1}, std::nullopt},
                                                  {Extent{96, 1, 1}, std::nullopt},
                                                  {Extent{64, 1, 1}, Extent{32, 1, 1}},
                                                  {std::nullopt, std::nullopt}};
  for (const auto& locals : cases) {
    for (auto m : {SplitModel::pe_ratio, SplitModel::proportional, SplitModel::even}) {
      SCOPED_TRACE(std::string(to_string(m)) + " " + to_string(locals[0]) + "/" + to_string(locals[1]));
      const auto blocks = model_blocks(m, sort, p, 0, {16, 48}, locals);
      expect_aligned(blocks, sort, p, 0, locals);
      EXPECT_EQ(blocks.back().end, 4096u);
    }
  }
  // 64 work-items of 2 keys: 128-element steps; pe-ratio's 0.3125 × 4096 = 1280 keeps to them.
  EXPECT_EQ(units(model_blocks(SplitModel::pe_ratio, sort, p, 0, {16, 48}, {Extent{64, 1, 1}, Extent{64, 1, 1}})),
            (Shares{1280, 2816}));
  // No alignment fits 1000 keys in steps of 128: the usage error names the fix.
  EXPECT_THROW((void)model_blocks(SplitModel::even, sort, sort.parse_size("1000"), 0, {16, 16},
                                  {Extent{64, 1, 1}, Extent{64, 1, 1}}),
               UsageError);
  const KernelSpec& mm = kernel_spec("matmul");
  EXPECT_EQ(units(model_blocks(SplitModel::pe_ratio, mm, mm.parse_size("64"), 1, {16, 32},
                               {Extent{16, 16, 1}, std::nullopt})),
            (Shares{26, 38}));
}

// An odd-length sort (2 keys per work-item) has a partial last step: it is
// planned without it, and the block ending the range takes it, as the whole
// problem's last work-item does (wstuned split such a sort in steps of 1 before).
TEST(ModelBlocks, APartialLastStepGoesToTheBlockEndingTheRange) {
  const KernelSpec& sort = kernel_spec("sort");
  const Problem p = sort.parse_size("4097");
  const std::vector<LocalSize> null2{std::nullopt, std::nullopt};
  const auto even = model_blocks(SplitModel::even, sort, p, 0, {16, 16}, null2);
  EXPECT_EQ(units(even), (Shares{2048, 2049}));
  const auto pe = model_blocks(SplitModel::pe_ratio, sort, p, 0, {16, 48}, null2);
  ASSERT_TRUE(blocks_tile(pe, 0, 4097));
  EXPECT_EQ(pe[0].size() % 2, 0u);
  // A last device with nothing: the tail goes to the last device with a block.
  Calibration cal{"sort", "4097", 0, {linear(0.001), linear(1000)}};
  const auto measured = model_blocks(SplitModel::measured, sort, p, 0, {16, 16}, null2, &cal);
  EXPECT_EQ(units(measured), (Shares{4097, 0}));
  EXPECT_TRUE(blocks_tile(measured, 0, 4097));
}

// The measured model: the devices finish together under their calibrations,
// each slice aligned; it needs a calibration of every device.
TEST(ModelBlocks, MeasuredFromTheCalibration) {
  const KernelSpec& mm = kernel_spec("matmul");
  const Problem p = mm.parse_size("4096");  // 4096 rows: the driver's choice keeps to 16
  const std::vector<LocalSize> null2{std::nullopt, std::nullopt};
  Calibration cal{"matmul", "4096", 1, {linear(0.002), linear(0.001)}};  // device 1 twice as fast
  const auto blocks = model_blocks(SplitModel::measured, mm, p, 1, {16, 16}, null2, &cal);
  expect_aligned(blocks, mm, p, 1, null2);
  EXPECT_EQ(units(blocks), (Shares{1360, 2736}));  // 1/3 of 4096 = 1365.3, to 16 rows
  // A work function of its own: device 0's slices count 4 × as many work-items.
  const auto heavy = model_blocks(SplitModel::measured, mm, p, 1, {16, 16}, null2, &cal,
                                  [](std::size_t i, std::size_t u) { return (i == 0 ? 4.0 : 1.0) * u * 4096; });
  EXPECT_LT(heavy[0].size(), blocks[0].size());
  EXPECT_THROW((void)model_blocks(SplitModel::measured, mm, p, 1, {16, 16}, null2), UsageError);
  Calibration one{"matmul", "4096", 1, {linear(0.001)}};
  EXPECT_THROW((void)model_blocks(SplitModel::measured, mm, p, 1, {16, 16}, null2, &one), UsageError);
  EXPECT_THROW((void)model_blocks(SplitModel::even, mm, p, 1, {16, 16}, {std::nullopt}), UsageError);
}

// A tuning file's wstune.Split.Dimension fixes the split dimension
// (split_dimension(), used by `wstune split` and wstuned alike) whatever the
// direction asked; a file without wstune.Split fixes none, and the direction
// decides: auto keeps a kernel's data-sharing direction whole.
TEST(ModelBlocks, ATuningFilesSplitDimensionFixesBothPaths) {
  const std::string dir = std::string(WSTUNE_SOURCE_SHARE_DIR) + "/examples/kernels/";
  const auto stencil = load_tuning_file(dir + "stencil5.json");  // 2-D, Split.Dimension Y
  EXPECT_EQ(described_split_dim(*stencil), 1u);
  EXPECT_EQ(split_dimension(*stencil, SplitDirection::x), 1u);
  const auto reduction = load_tuning_file(dir + "reduction.json");  // 1-D, no Split
  EXPECT_FALSE(described_split_dim(*reduction).has_value());
  EXPECT_EQ(split_dimension(*reduction, SplitDirection::auto_), 0u);
  EXPECT_EQ(split_dimension(*reduction, SplitDirection::x), 0u);
  EXPECT_THROW((void)split_dimension(*reduction, SplitDirection::y), UsageError);
  EXPECT_FALSE(described_split_dim(kernel_spec("matmul")).has_value());
  EXPECT_EQ(split_dimension(kernel_spec("matmul"), SplitDirection::auto_), 1u);    // x-priority: row blocks
  EXPECT_EQ(split_dimension(kernel_spec("bilinear"), SplitDirection::auto_), 0u);  // y-priority: column blocks
}
