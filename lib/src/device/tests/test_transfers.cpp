// The split's data path (issue 18) on real OpenCL (PoCL): pinned host memory,
// read-backs straight into caller memory, the bytes a split moves and the
// bandwidth measurement.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "device/bandwidth.hpp"
#include "device/pinned_memory.hpp"
#include "split/multi_device.hpp"
#include "test_pocl_util.hpp"
#include "wstune/error.hpp"

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
  EXPECT_EQ(r.h2d_bytes, 4000u);  // the keys only: the device pads the block to 1024 elements
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
  const SplitRunResult t =
      mt.run({Block{0, 0, 3000}, Block{0, 3000, 10000}}, {LocalSize{Extent{10, 1, 1}}, std::nullopt}, quick);
  ASSERT_TRUE(t.ok()) << t.error;
  EXPECT_EQ(t.slices[0].d2h_bytes, 12u * 4);  // chunks 0..11
  EXPECT_EQ(t.slices[1].d2h_bytes, 29u * 4);  // chunks 11..39
  EXPECT_EQ(t.slices[0].h2d_bytes, 0u);
}

// set_overlap(): each device's block runs as chunks over two queues and the
// gathered output still verifies, with the same bytes moved as a whole
// block (matmul's B, which every chunk shares, uploaded once): along y
// (outputs read straight to their place), along x (rows at the output's
// pitch), bilinear along y (overlapping input rows), trapezoid (partial sums
// placed after the rounds); sort, whose blocks are merged on the host
// (KernelSpec::merges_blocks), keeps its blocks whole.
TEST(Overlap, ChunksVerifyAndMoveTheBlocksBytes) {
  const auto devices = pocl_devices(2);
  ASSERT_EQ(devices.size(), 2u);
  struct Case {
    const char* kernel;
    const char* size;
    unsigned dim;
    LocalSize local;
    std::size_t chunks;  // expected on each device
  };
  const LocalSize l4{Extent{4, 4, 1, 2}};
  for (const Case& c :
       {Case{"matmul", "64x48x32", 1, std::nullopt, 3}, Case{"matmul", "64x48x32", 0, l4, 3},
        Case{"bilinear", "37x29:150x130", 1, std::nullopt, 3},
        Case{"trapezoid", "10000:8", 0, LocalSize{Extent{10, 1, 1}}, 3}, Case{"sort", "1000", 0, std::nullopt, 1}}) {
    SCOPED_TRACE(fmt::format("{} {} dim {}", c.kernel, c.size, c.dim));
    const KernelSpec& k = kernel_spec(c.kernel);
    MultiDeviceRunner mr(devices, k, k.parse_size(c.size));
    const std::size_t units = k.split_units(mr.problem(), c.dim);
    const std::size_t cut = c.kernel == std::string("sort") ? 512 : units / 3 / 4 * 4;
    const std::vector<Block> blocks{Block{c.dim, 0, cut}, Block{c.dim, cut, units}};
    const SplitRunResult whole = mr.run(blocks, {c.local, c.local}, quick);
    ASSERT_TRUE(whole.ok()) << whole.error;
    mr.set_overlap(3);
    EXPECT_EQ(mr.overlap(), 3u);
    const SplitRunResult r = mr.run(blocks, {c.local, c.local}, quick);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.verdict.ok) << r.verdict.detail;
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(r.slices[i].chunks, c.chunks) << i;
      EXPECT_EQ(whole.slices[i].chunks, 1u);
      if (c.kernel == std::string("bilinear")) {  // chunks share no input: each uploads its own halo rows
        EXPECT_GT(r.slices[i].h2d_bytes, whole.slices[i].h2d_bytes) << i;
        EXPECT_EQ((r.slices[i].h2d_bytes - whole.slices[i].h2d_bytes) % (37 * 4), 0u) << i;  // whole input rows
      } else {
        EXPECT_EQ(r.slices[i].h2d_bytes, whole.slices[i].h2d_bytes) << i;
      }
      if (c.kernel != std::string("trapezoid")) {  // chunks of 256 work-items cut by a sub-block are read twice
        EXPECT_EQ(r.slices[i].d2h_bytes, whole.slices[i].d2h_bytes) << i;
      }
      EXPECT_EQ(r.slices[i].kernel.size(), whole.slices[i].kernel.size());
    }
  }
  const KernelSpec& mm = kernel_spec("matmul");
  MultiDeviceRunner mr(devices, mm, mm.parse_size("8x8x8"));
  EXPECT_THROW(mr.set_overlap(0), UsageError);
}

// Sort splits over two devices under set_overlap(2) and (3): its blocks
// run whole (a host merge per chunk costs more than the overlap gains,
// KernelSpec::merges_blocks), the merged whole verifies, and each device
// uploads and reads back exactly its block's keys (a view, padded on the
// device). run_overlapped() below still sorts chunks when asked directly.
TEST(Overlap, SortBlocksStayWholeAndVerify) {
  const auto devices = pocl_devices(2);
  ASSERT_EQ(devices.size(), 2u);
  const KernelSpec& k = kernel_spec("sort");
  EXPECT_TRUE(k.merges_blocks());
  EXPECT_FALSE(kernel_spec("matmul").merges_blocks());
  MultiDeviceRunner mr(devices, k, k.parse_size("10001"));
  const std::vector<Block> blocks{Block{0, 0, 4000}, Block{0, 4000, 10001}};
  const std::vector<LocalSize> locals{LocalSize{Extent{8, 1, 1}}, std::nullopt};
  for (std::size_t chunks : {2u, 3u}) {
    SCOPED_TRACE(chunks);
    mr.set_overlap(chunks);
    const SplitRunResult r = mr.run(blocks, locals, quick);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.verdict.ok) << r.verdict.detail;
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(r.slices[i].chunks, 1u) << i;
      EXPECT_EQ(r.slices[i].h2d_bytes, blocks[i].size() * sizeof(float)) << i;
      EXPECT_EQ(r.slices[i].d2h_bytes, blocks[i].size() * sizeof(float)) << i;
    }
  }
}

// run_overlapped() of a sort block as three uneven chunks: each lands
// sorted at its place, finish() merges them as blocks, and only the keys
// are uploaded. A second run reuses the queues' buffers, which still hold
// the first run's keys, with another local size.
TEST(Overlap, SortBlockRunsOverlapped) {
  const auto devices = pocl_devices(1);
  ASSERT_EQ(devices.size(), 1u);
  const KernelSpec& k = kernel_spec("sort");
  const Problem p = k.parse_size("5000");
  const auto inputs = k.generate_inputs(p, 5);
  const auto ref = k.reference(p, inputs);
  DeviceRunner runner(devices[0], k);
  const std::vector<Block> subs = chunk_blocks(k.whole(p), 3, 2 * 8);
  ASSERT_EQ(subs.size(), 3u);
  for (const LocalSize& local : {LocalSize{}, LocalSize{Extent{8, 1, 1}}}) {
    std::vector<HostBuffer> full = k.empty_outputs(p);
    std::vector<OverlapChunk> chunks;
    for (const Block& sub : subs) {
      const std::size_t at = sub.begin * sizeof(float), bytes = sub.size() * sizeof(float);
      chunks.push_back(OverlapChunk{sub, k.block_inputs(p, inputs, sub), {ReadTarget{full[0].data() + at, bytes}}});
    }
    const RunResult r = runner.run_overlapped(p, chunks, local);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.h2d_bytes, 5000u * sizeof(float));
    EXPECT_EQ(r.d2h_bytes, 5000u * sizeof(float));
    EXPECT_FALSE(k.verify(p, full, ref).ok) << "three sorted runs, not yet merged";
    k.finish(p, subs, full);
    EXPECT_TRUE(k.verify(p, full, ref).ok);
  }
}

// run_overlapped() runs chunks whose outputs land in the caller's memory,
// uploading B, which both share, once; it refuses, as data, what it cannot
// run: a chunk the local size cannot run (constraints), a read target of
// the wrong size and an empty chunk list (runtime).
TEST(Overlap, RefusesWhatCannotRunAsData) {
  const auto devices = pocl_devices(1);
  ASSERT_EQ(devices.size(), 1u);
  const KernelSpec& mm = kernel_spec("matmul");
  const Problem p = mm.parse_size("16x16x16");
  const auto inputs = mm.generate_inputs(p, 1);
  std::vector<HostBuffer> full = mm.empty_outputs(p);
  DeviceRunner runner(devices[0], mm);
  auto chunk = [&](std::size_t a, std::size_t b) {
    const Block sub{1, a, b};
    const std::size_t row = 16 * 4;
    return OverlapChunk{
        sub, mm.block_inputs(p, inputs, sub), {ReadTarget{full[0].data() + a * row, (b - a) * row, 0, 0}}};
  };
  // Moved in: a copy of a chunk copies its input views to the heap, and B
  // would no longer be one buffer that both chunks share.
  std::vector<OverlapChunk> halves;
  halves.push_back(chunk(0, 8));
  halves.push_back(chunk(8, 16));
  const RunResult ok = runner.run_overlapped(p, halves, LocalSize{Extent{4, 4, 1, 2}});
  ASSERT_TRUE(ok.ok()) << ok.error;
  EXPECT_TRUE(mm.verify(p, full, mm.reference(p, inputs)).ok);
  EXPECT_EQ(ok.h2d_bytes, (16 * 16 + 16 * 16) * 4u);  // A's rows once, B once
  EXPECT_EQ(ok.d2h_bytes, 16 * 16 * 4u);
  EXPECT_EQ(ok.kernel.size(), 1u);
  const RunResult too_big = runner.run_overlapped(p, halves, LocalSize{Extent{128, 128, 1, 2}});
  EXPECT_EQ(too_big.status, TrialStatus::constraints) << too_big.error;
  EXPECT_NE(too_big.error.find("chunk [0, 8) along y"), std::string::npos) << too_big.error;
  auto bad = chunk(0, 16);
  bad.targets[0].bytes = 12;
  const RunResult wrong = runner.run_overlapped(p, {bad}, std::nullopt);
  EXPECT_EQ(wrong.status, TrialStatus::runtime);
  EXPECT_NE(wrong.error.find("read target"), std::string::npos) << wrong.error;
  EXPECT_EQ(runner.run_overlapped(p, {}, std::nullopt).status, TrialStatus::runtime);
}

namespace {
// The spans of `r` named `what` of `chunk`.
std::vector<RunSpan> spans_of(const RunResult& r, const std::string& what, int chunk) {
  std::vector<RunSpan> out;
  for (const RunSpan& s : r.spans)
    if (s.what == what && s.chunk == chunk) out.push_back(s);
  return out;
}
double host_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
// matmul 16x16x16 on one PoCL device: its runner and its inputs of `seed`.
struct Matmul16 {
  explicit Matmul16(std::uint64_t seed)
      : devices(pocl_devices(1)), p(mm.parse_size("16x16x16")), inputs(mm.generate_inputs(p, seed)) {}
  const KernelSpec& mm = kernel_spec("matmul");
  std::vector<Device> devices;
  Problem p;
  std::vector<HostBuffer> inputs;
  const Block whole{1, 0, 16};
};
// matmul 16x16x16's rows [a, b) as an overlapped chunk reading into `full` (the caller's).
OverlapChunk mm_chunk(const KernelSpec& mm, const Problem& p, const std::vector<HostBuffer>& inputs,
                      std::vector<HostBuffer>& full, std::size_t a, std::size_t b) {
  const Block sub{1, a, b};
  const std::size_t row = 16 * 4;
  return OverlapChunk{
      sub, mm.block_inputs(p, inputs, sub), {ReadTarget{full[0].data() + a * row, (b - a) * row, 0, 0}}};
}
}  // namespace

// RunResult::spans (the per-worker timeline's source): run() reports the
// upload, each kernel run and the read-back in that order on the host's
// clock, within the calls' wall clock; run_overlapped() per chunk its
// upload before its kernels before its read-back, the shared B's upload
// before every kernel.
TEST(Spans, UploadBeforeKernelBeforeDownload) {
  const Matmul16 m(1);
  ASSERT_EQ(m.devices.size(), 1u);
  const auto& [mm, devices, p, inputs, whole] = m;
  DeviceRunner runner(devices[0], mm);
  const double before = host_ms();
  runner.upload(p, whole, mm.block_inputs(p, inputs, whole));
  const RunResult r = runner.run(p, whole, std::nullopt, TimingOptions{1, 2});
  const double after = host_ms();
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.spans.size(), 5u);  // upload, 3 kernel runs, download
  EXPECT_EQ(r.spans.front().what, "upload");
  EXPECT_EQ(r.spans.back().what, "download");
  const double slack = 2;  // ms: the anchor's error is the host's time to enqueue one command
  for (std::size_t i = 0; i < r.spans.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_LE(r.spans[i].start_ms, r.spans[i].end_ms);
    EXPECT_GE(r.spans[i].start_ms, before - slack);
    EXPECT_LE(r.spans[i].end_ms, after + slack);
    if (i > 0) {
      EXPECT_LE(r.spans[i - 1].end_ms, r.spans[i].start_ms + slack);
    }
    if (i > 0 && i < 4) {
      EXPECT_EQ(r.spans[i].what, "kernel");
    }
  }
  std::vector<HostBuffer> full = mm.empty_outputs(p);
  std::vector<OverlapChunk> chunks;
  for (const auto& [a, b] : {std::pair<std::size_t, std::size_t>{0, 4}, {4, 12}, {12, 16}})
    chunks.push_back(mm_chunk(mm, p, inputs, full, a, b));
  const RunResult o = runner.run_overlapped(p, chunks, std::nullopt, 2);
  ASSERT_TRUE(o.ok()) << o.error;
  const auto shared = spans_of(o, "upload", -1);
  ASSERT_EQ(shared.size(), 1u);  // B, once
  for (int c = 0; c < 3; ++c) {
    SCOPED_TRACE(c);
    const auto up = spans_of(o, "upload", c), k = spans_of(o, "kernel", c), down = spans_of(o, "download", c);
    ASSERT_EQ(up.size(), 1u);
    ASSERT_EQ(k.size(), 2u);
    ASSERT_EQ(down.size(), 1u);
    EXPECT_LE(up[0].end_ms, k[0].start_ms + slack);
    EXPECT_LE(shared[0].end_ms, k[0].start_ms + slack);
    EXPECT_LE(k[0].end_ms, k[1].start_ms + slack);
    EXPECT_LE(k[1].end_ms, down[0].start_ms + slack);
  }
}

// Inputs kept on the device (a resident id): a second upload() of the same
// id, block and parameters writes nothing and the run gives the same
// outputs; a second run_overlapped() of the same id and chunks writes
// nothing and its chunks still verify, as the whole block's outputs do;
// another id, or none, writes again.
TEST(Spans, ResidentInputsAreNotWrittenAgain) {
  const Matmul16 m(3);
  ASSERT_EQ(m.devices.size(), 1u);
  const auto& [mm, devices, p, inputs, whole] = m;
  const auto ref = mm.reference(p, inputs);
  DeviceRunner runner(devices[0], mm);
  runner.upload(p, whole, mm.block_inputs(p, inputs, whole), "seed 3");
  const RunResult first = runner.run(p, whole, std::nullopt, TimingOptions{0, 1});
  ASSERT_TRUE(first.ok()) << first.error;
  EXPECT_GT(first.h2d_bytes, 0u);
  runner.upload(p, whole, mm.block_inputs(p, inputs, whole), "seed 3");
  const RunResult again = runner.run(p, whole, std::nullopt, TimingOptions{0, 1});
  ASSERT_TRUE(again.ok()) << again.error;
  EXPECT_EQ(again.h2d_bytes, 0u);
  EXPECT_TRUE(spans_of(again, "upload", -1).empty());
  EXPECT_EQ(again.outputs, first.outputs);
  EXPECT_TRUE(mm.verify(p, again.outputs, ref).ok);
  runner.upload(p, whole, mm.block_inputs(p, inputs, whole), "seed 4");
  EXPECT_GT(runner.run(p, whole, std::nullopt, TimingOptions{0, 1}).h2d_bytes, 0u);

  for (const char* id : {"seed 3", "seed 3", "", "seed 3"}) {
    SCOPED_TRACE(id);
    std::vector<HostBuffer> full = mm.empty_outputs(p);
    std::vector<OverlapChunk> chunks;
    chunks.push_back(mm_chunk(mm, p, inputs, full, 0, 8));
    chunks.push_back(mm_chunk(mm, p, inputs, full, 8, 16));
    static int call = 0;
    const RunResult r = runner.run_overlapped(p, chunks, std::nullopt, 1, id);
    ASSERT_TRUE(r.ok()) << r.error;
    // Written on the first call of an id, and after a call without one.
    EXPECT_EQ(r.h2d_bytes == 0, call == 1) << r.h2d_bytes;
    EXPECT_EQ(full, first.outputs) << "chunked, resident or not, gives the whole block's outputs";
    ++call;
  }
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
