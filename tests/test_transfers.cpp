// The split's data path (issue 18) on real OpenCL (PoCL): pinned host memory,
// read-backs straight into caller memory, the bytes a split moves and the
// bandwidth measurement.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "test_pocl_util.hpp"
#include "wstune/bandwidth.hpp"
#include "wstune/error.hpp"
#include "wstune/multi_device.hpp"
#include "wstune/pinned_memory.hpp"

using namespace wstune;
using wstune::test::pocl_devices;

namespace {

// Two PoCL devices; set before the ICD loader first asks for platforms.
const bool env_set = test::use_pocl_pthread_devices(2, false);

const TimingOptions quick{1, 2};

}  // namespace

// A HostBuffer in pinned memory holds what is written, survives a move with
// its memory, copies to the heap, and round-trips through a device buffer.
TEST(PinnedMemory, HostBufferLivesInMappedMemory) {
  ASSERT_TRUE(env_set);
  const auto devices = pocl_devices(1);
  ASSERT_EQ(devices.size(), 1u);
  cl::Context ctx(devices[0].device);
  cl::CommandQueue q(ctx, devices[0].device);
  PinnedMemory memory(ctx, devices[0].device);
  HostBuffer a(kFloat32, 1000, &memory);
  for (std::size_t i = 0; i < 1000; ++i) a.as<float>()[i] = static_cast<float>(i);
  const std::byte* where = a.data();
  HostBuffer moved = std::move(a);
  EXPECT_EQ(moved.data(), where);  // a move keeps the pinned bytes
  const HostBuffer copy = moved;   // a copy is an ordinary heap buffer with equal contents
  EXPECT_NE(copy.data(), moved.data());
  EXPECT_EQ(copy, moved);
  cl::Buffer dev(ctx, CL_MEM_READ_WRITE, moved.bytes());
  ASSERT_EQ(q.enqueueWriteBuffer(dev, CL_TRUE, 0, moved.bytes(), moved.data()), CL_SUCCESS);
  HostBuffer back(kFloat32, 1000, &memory);
  ASSERT_EQ(q.enqueueReadBuffer(dev, CL_TRUE, 0, back.bytes(), back.data()), CL_SUCCESS);
  EXPECT_EQ(back, copy);
  EXPECT_EQ(memory.fallbacks(), 0u) << memory.last_error();
}

// A freed pinned buffer is kept and handed out again for a request that it
// holds (at least half its size); a larger one gets a fresh buffer, and with
// no room to keep, nothing is kept.
TEST(PinnedMemory, FreedBuffersAreReused) {
  const auto devices = pocl_devices(1);
  ASSERT_EQ(devices.size(), 1u);
  cl::Context ctx(devices[0].device);
  PinnedMemory memory(ctx, devices[0].device);
  void* a = memory.allocate(1 << 20, 64);
  memory.deallocate(a, 1 << 20, 64);
  void* b = memory.allocate(700000, 64);
  EXPECT_EQ(b, a);
  void* c = memory.allocate(2 << 20, 64);
  EXPECT_NE(c, a);
  memory.deallocate(b, 700000, 64);
  memory.deallocate(c, 2 << 20, 64);
  PinnedMemory none(ctx, devices[0].device, 0);
  void* d = none.allocate(4096, 64);
  std::memset(d, 1, 4096);
  none.deallocate(d, 4096, 64);
  EXPECT_EQ(none.fallbacks(), 0u);
}

// read_into(): the output lands in the caller's memory and RunResult keeps
// an empty buffer; a target of the wrong size is a runtime failure, not a crash.
TEST(ReadInto, OutputLandsInTheTarget) {
  const auto devices = pocl_devices(1);
  ASSERT_EQ(devices.size(), 1u);
  const KernelSpec& k = kernel_spec("sort");
  const Problem p = k.parse_size("1000");
  const auto inputs = k.generate_inputs(p, 3);
  DeviceRunner runner(devices[0], k);
  const Block b{0, 0, 1000};
  runner.upload(p, b, k.block_inputs(p, inputs, b));
  std::vector<HostBuffer> full = k.empty_outputs(p);
  runner.read_into({ReadTarget{full[0].data(), full[0].bytes()}});
  const RunResult r = runner.run(p, b, std::nullopt, quick);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.outputs.at(0).empty());
  EXPECT_EQ(r.d2h_bytes, 4000u);
  EXPECT_EQ(r.h2d_bytes, 4096u);  // the block padded to 1024 elements
  EXPECT_TRUE(k.verify(p, full, k.reference(p, inputs)).ok);
  runner.read_into({ReadTarget{full[0].data(), 12}});
  const RunResult bad = runner.run(p, b, std::nullopt, quick);
  EXPECT_EQ(bad.status, TrialStatus::runtime);
  EXPECT_NE(bad.error.find("read target"), std::string::npos) << bad.error;
  runner.read_into({});
  const RunResult plain = runner.run(p, b, std::nullopt, quick);
  ASSERT_TRUE(plain.ok()) << plain.error;
  EXPECT_EQ(plain.outputs.at(0).size(), 1000u);
}

// A split moves exactly its blocks' bytes and verifies, along y (outputs read
// straight into the whole output) and along x (placed after the rounds);
// trapezoid reads back one float per chunk of 256 work-items it touches.
TEST(SplitTransfers, BytesPerDeviceAndVerifiedGather) {
  const auto devices = pocl_devices(2);
  ASSERT_EQ(devices.size(), 2u);
  const KernelSpec& mm = kernel_spec("matmul");
  MultiDeviceRunner mr(devices, mm, mm.parse_size("64x48x32"));  // M=64 rows, N=48 columns, K=32
  for (unsigned dim : {1u, 0u}) {
    const std::size_t units = mm.split_units(mr.problem(), dim), cut = units / 4 * 1;
    const std::vector<Block> blocks{Block{dim, 0, cut}, Block{dim, cut, units}};
    const SplitRunResult r = mr.run(blocks, {std::nullopt, std::nullopt}, quick);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.verdict.ok) << r.verdict.detail;
    for (std::size_t i = 0; i < 2; ++i) {
      const auto& s = r.slices[i];
      const std::size_t outs = (dim == 1 ? 48 : 64) * s.block.size() * 4;
      const std::size_t ins = dim == 1 ? (s.block.size() * 32 + 32 * 48) * 4 : (64 * 32 + 32 * 48) * 4;
      EXPECT_EQ(s.d2h_bytes, outs) << dim << " " << i;
      EXPECT_EQ(s.h2d_bytes, ins) << dim << " " << i;
      EXPECT_GT(s.h2d_gbps(), 0);
      EXPECT_GT(s.d2h_gbps(), 0);
    }
  }
  const KernelSpec& tr = kernel_spec("trapezoid");
  MultiDeviceRunner mt(devices, tr, tr.parse_size("10000:8"));
  const SplitRunResult t = mt.run({Block{0, 0, 3000}, Block{0, 3000, 10000}}, {LocalSize{Extent{10, 1, 1}}, std::nullopt},
                                  quick);
  ASSERT_TRUE(t.ok()) << t.error;
  EXPECT_EQ(t.slices[0].d2h_bytes, 12u * 4);  // chunks 0..11
  EXPECT_EQ(t.slices[1].d2h_bytes, 29u * 4);  // chunks 11..39
  EXPECT_EQ(t.slices[0].h2d_bytes, 0u);
}

// measure_bandwidth() on a PoCL device: every kind timed the asked number of
// times with positive rates; a zero size is a usage error.
TEST(Bandwidth, MeasuresEveryKind) {
  const auto devices = pocl_devices(1);
  ASSERT_EQ(devices.size(), 1u);
  const DeviceBandwidth b = measure_bandwidth(devices[0], BandwidthOptions{1 << 20, 1, 3});
  ASSERT_TRUE(b.ok()) << b.error;
  EXPECT_EQ(b.bytes, 1u << 20);
  for (const TransferSamples* t : {&b.pageable_h2d, &b.pageable_d2h, &b.pinned_h2d, &b.pinned_d2h}) {
    EXPECT_EQ(t->event.size(), 3u);
    EXPECT_EQ(t->wall.size(), 3u);
    EXPECT_GT(t->wall_gbps(b.bytes), 0);
  }
  EXPECT_FALSE(b.pinned_fallback);
  const nlohmann::json j = to_json(b);
  EXPECT_EQ(j.at("device_id"), devices[0].info.id());
  EXPECT_TRUE(j.at("pinned_h2d").contains("gbps"));
  EXPECT_THROW((void)measure_bandwidth(devices[0], BandwidthOptions{0, 1, 3}), UsageError);
}
