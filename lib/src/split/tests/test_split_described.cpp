// Kernels described by T1 tuning files split across devices in one process
// (three PoCL devices: POCL_DEVICES="pthread pthread pthread"): the
// wstune.Split description, global work offsets, halo rows, verification of
// the gathered outputs, and files without a Split refused by name.
#include <gtest/gtest.h>

#include <cstdlib>

#include <fmt/format.h>

#include "split/multi_device.hpp"
#include "test_pocl_util.hpp"
#include "tuning_file/tuning_file.hpp"
#include "wstune/error.hpp"
#include "wstune_config.hpp"

using namespace wstune;
using nlohmann::json;
using wstune::test::pocl_devices;

namespace {

const bool env_set = test::use_pocl_pthread_devices(3, true);

std::string example(const std::string& name) {
  return std::string(WSTUNE_SOURCE_SHARE_DIR) + "/examples/kernels/" + name;
}

}  // namespace

TEST(SplitDescribed, StencilWithHaloOverTwoAndThreeDevices) {
  ASSERT_TRUE(env_set);
  const auto k = load_tuning_file(example("stencil5.json"));
  for (const std::size_t n : {2u, 3u}) {
    const auto devs = pocl_devices(n);
    ASSERT_EQ(devs.size(), n);
    for (const json& params : {json{{"WPTX", 1}, {"WPTY", 1}}, json{{"WPTX", 2}, {"WPTY", 4}}}) {
      SCOPED_TRACE(fmt::format("{} devices, {}", n, params.dump()));
      const Problem p = with_params(k->parse_size("70x61"), params);
      MultiDeviceRunner mr(devs, *k, p);
      ASSERT_EQ(k->split_units(p, 1), 61u);  // rows
      const std::size_t g = split_granularity(*k, p, 1, std::nullopt);
      EXPECT_EQ(g, params["WPTY"].get<std::size_t>());
      std::vector<double> shares(n, 1.0 / static_cast<double>(n));
      std::vector<std::size_t> gran(n, g);
      gran.back() = 1;  // the last device takes the rows that do not fill a granule
      const auto blocks = align_blocks(shares, 61, 1, gran);
      std::vector<LocalSize> locals(n, LocalSize{Extent{4, 2, 2}});
      locals[0] = std::nullopt;
      const SplitRunResult r = mr.run(blocks, locals, TimingOptions{0, 2});
      ASSERT_TRUE(r.ok()) << r.error;
      EXPECT_TRUE(r.verdict.ok) << r.verdict.detail;
      for (const auto& s : r.slices) EXPECT_GT(s.block.size(), 0u);
      // The same blocks as chunks over two queues: halo rows and absolutely
      // indexed buffers per chunk, outputs placed after the rounds.
      mr.set_overlap(2);
      const SplitRunResult o = mr.run(blocks, locals, TimingOptions{0, 2});
      ASSERT_TRUE(o.ok()) << o.error;
      EXPECT_TRUE(o.verdict.ok) << o.verdict.detail;
      for (const auto& s : o.slices) EXPECT_EQ(s.chunks, 2u);
    }
  }
}

TEST(SplitDescribed, MatmulFileSplitsByRowsAndFilesWithoutSplitAreRefused) {
  const auto mm = load_tuning_file(std::string(WSTUNE_SOURCE_SHARE_DIR) + "/../kernels/matmul.json");
  const auto devs = pocl_devices(2);
  ASSERT_EQ(devs.size(), 2u);
  MultiDeviceRunner mr(devs, *mm, mm->parse_size("37x41x29"));
  const auto blocks = align_blocks({0.4, 0.6}, 37, 1, {1, 1});
  const SplitRunResult r = mr.run(blocks, {LocalSize{Extent{8, 4, 2}}, std::nullopt}, TimingOptions{0, 1});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.verdict.ok) << r.verdict.detail;
  // The reduction has no wstune.Split: a slice is refused, naming what is missing.
  const auto red = load_tuning_file(example("reduction.json"));
  MultiDeviceRunner mr2(devs, *red, red->parse_size("1000"));
  try {
    (void)mr2.run({Block{0, 0, 400}, Block{0, 400, 1000}}, {LocalSize{Extent{8, 1, 1}}, LocalSize{Extent{8, 1, 1}}},
                  TimingOptions{0, 1});
    FAIL() << "expected the split to be refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("needs wstune.Split"), std::string::npos) << e.what();
  }
}

// A described kernel's block inputs are views of the problem's inputs (the
// rows of the block and its halo, in place): a new block copies nothing.
TEST(SplitDescribed, BlockInputsAreViewsOfTheProblemsInputs) {
  const auto k = load_tuning_file(example("stencil5.json"));
  const Problem p = with_params(k->parse_size("70x61"), json{{"WPTX", 1}, {"WPTY", 1}});
  const auto in = k->generate_inputs(p, 5);
  const Block b{1, 10, 30};
  const auto place = k->input_placement(p, b);
  const auto views = k->block_inputs(p, in, b);
  ASSERT_EQ(views.size(), in.size());
  ASSERT_EQ(place.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_LT(views[i].size(), in[i].size()) << "block rows and halo only";
    EXPECT_EQ(views[i].data(), in[i].data() + place[i].offset * in[i].type().bytes()) << i;
  }
  const Block whole{1, 0, 61};
  const auto all = k->block_inputs(p, in, whole);
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(all[i].data(), in[i].data()) << i;
}
