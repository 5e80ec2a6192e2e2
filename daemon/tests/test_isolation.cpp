// The isolated OpenCL process's data path (issue 18): large buffers cross
// its socket as shared memory files, not as bytes; malformed announcements
// are protocol errors; a real block result (PoCL) reaches the rank mapped
// from the child's memory and verifies. Its own executable: the parent
// process must not initialise OpenCL before IsolatedDevice forks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "app.hpp"
#include "protocol/kernel_source.hpp"
#include "transport/result_memory.hpp"
#include "transport/shared_memory.hpp"
#include "worker/isolation.hpp"

using namespace wstune;
using namespace wstune::daemon;

namespace {

struct SocketPair {
  SocketPair() {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw std::runtime_error("socketpair");
    a = sv[0];
    b = sv[1];
  }
  int a = -1, b = -1;
};

// Bytes queued for the reader of `fd`.
int queued(int fd) {
  int n = -1;
  ::ioctl(fd, FIONREAD, &n);
  return n;
}

// Mappings of SharedMemory files in this process.
int memory_file_mappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);)
    if (line.find("memfd:wstune-result") != std::string::npos) ++n;
  return n;
}

Message result_with(std::vector<HostBuffer> buffers) {
  BlockResult r;
  r.job = 7;
  r.block = Block{1, 0, 64};
  return r.to_message(std::move(buffers));
}

}  // namespace

// A real isolated OpenCL process (PoCL) and matmul 512 to run through it.
class Isolation : public ::testing::Test {
 protected:
  static IsolationOptions options() {
    IsolationOptions io;
    io.request_timeout = std::chrono::seconds(120);
    return io;
  }
  void SetUp() override { ASSERT_TRUE(isolated.device()) << isolated.error(); }
  // A run_block of the whole problem, one timed run.
  RunBlock whole_block(std::uint64_t job, std::uint64_t seed) const {
    RunBlock rb;
    rb.job = job;
    rb.kernel = "matmul";
    rb.size = "512";
    rb.block = spec->whole(p);
    rb.repetitions = 1;
    rb.seed = seed;
    return rb;
  }
  // The whole block's `outputs` placed and checked against `reference`.
  Verdict verdict(const std::vector<HostBuffer>& outputs, const std::vector<HostBuffer>& reference) const {
    std::vector<HostBuffer> full = spec->empty_outputs(p);
    spec->place_block(p, spec->whole(p), outputs, full);
    return spec->verify(p, full, reference);
  }
  IsolatedDevice isolated{options()};
  std::shared_ptr<const KernelSpec> spec = worker_kernel("matmul", nullptr);
  Problem p = job_problem(*spec, "512", nlohmann::json::object());
};

// A buffer of SharedMemory crosses as its memory file (a few bytes on the
// socket) and arrives with its contents, mapped; a small one (below the
// threshold) and a heap one cross as bytes. Once the receiver released it
// (told with its next message), the file is reused and not mapped again;
// a file still lent is never reused.
TEST(SharedBuffers, ALargeBufferCrossesAsItsMemoryFileAndIsReusedOnceReturned) {
  SocketPair sp;
  SharedMemory shared(std::size_t{1} << 20);
  PipeCommunicator child(sp.b, 1, &shared);
  PipeCommunicator rank(sp.a, 0);
  // Non-blocking: 4 MiB sent as bytes would fail the send instead of
  // waiting for a reader that is this very thread.
  ASSERT_EQ(::fcntl(sp.b, F_SETFL, ::fcntl(sp.b, F_GETFL) | O_NONBLOCK), 0);
  const HostBuffer small = HostBuffer::of(std::vector<float>(1000, 0.5f));  // 4000 bytes: below the threshold
  auto send_big = [&](float base) {
    HostBuffer big = HostBuffer::uninitialized(kFloat32, 1 << 20, &shared);  // 4 MiB
    for (std::size_t i = 0; i < big.size(); ++i) big.as<float>()[i] = base + static_cast<float>(i % 1000);
    const HostBuffer want = big;
    std::vector<HostBuffer> buffers;  // moved in (an initializer list would copy them to the heap)
    buffers.push_back(std::move(big));
    buffers.push_back(small);
    child.send(0, result_with(std::move(buffers)));
    return want;
  };
  const HostBuffer want1 = send_big(0.f);
  const int on_socket = queued(sp.a);
  EXPECT_LT(on_socket, static_cast<int>(small.bytes()) + 1024) << "4 MiB went through the socket as bytes";
  EXPECT_GT(on_socket, static_cast<int>(small.bytes())) << "the small buffer did not go as bytes";
  auto got = rank.recv(1, std::chrono::seconds(5));
  ASSERT_TRUE(got);
  ASSERT_EQ(got->message.buffers.size(), 2u);
  EXPECT_EQ(got->message.buffers[0], want1);
  EXPECT_EQ(got->message.buffers[1], small);
  EXPECT_EQ(BlockResult::from(got->message).job, 7u);
  EXPECT_EQ(memory_file_mappings(), 2) << "one mapping in each process (here: both)";
  got.reset();  // released: returned with the rank's next message
  rank.send(1, Message{Tag::shutdown, nlohmann::json::object(), {}});
  ASSERT_TRUE(child.recv(0, std::chrono::seconds(5)));
  const HostBuffer want2 = send_big(7.f);
  EXPECT_EQ(shared.files_made(), 1u);
  EXPECT_EQ(shared.reuses(), 1u) << "the returned file was not reused";
  got = rank.recv(1, std::chrono::seconds(5));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->message.buffers[0], want2);
  EXPECT_EQ(memory_file_mappings(), 2);
  EXPECT_EQ(rank.peer_memory().mappings_made(), 1u) << "the reused file was mapped again";
  // Still lent (the rank holds it): the next buffer needs a new file.
  (void)send_big(9.f);
  EXPECT_EQ(shared.files_made(), 2u);
  auto third = rank.recv(1, std::chrono::seconds(5));
  ASSERT_TRUE(third);
  EXPECT_NE(third->message.buffers[0].data(), got->message.buffers[0].data());
  EXPECT_EQ(got->message.buffers[0], want2) << "a lent file was written while the rank held it";
  EXPECT_EQ(rank.peer_memory().mappings_made(), 2u);
}

// With no free file kept, a returned file is closed at once; the child's
// next message tells the rank, which drops its mapping.
TEST(SharedBuffers, AClosedFileIsForgottenByThePeerOverTheSocket) {
  SocketPair sp;
  SharedMemory shared(std::size_t{1} << 20, 0);
  PipeCommunicator child(sp.b, 1, &shared);
  PipeCommunicator rank(sp.a, 0);
  std::vector<HostBuffer> buffers;
  buffers.push_back(HostBuffer::uninitialized(kFloat32, 1 << 18, &shared));
  child.send(0, result_with(std::move(buffers)));
  auto got = rank.recv(1, std::chrono::seconds(5));
  ASSERT_TRUE(got);
  EXPECT_EQ(rank.peer_memory().mapped(), 1u);
  EXPECT_EQ(memory_file_mappings(), 2) << "one mapping on each side";
  got.reset();
  rank.send(1, Message{Tag::shutdown, nlohmann::json::object(), {}});  // returns the file
  ASSERT_TRUE(child.recv(0, std::chrono::seconds(5)));                 // closes it
  child.send(0, Message{Tag::bye, nlohmann::json::object(), {}});      // says so
  ASSERT_TRUE(rank.recv(1, std::chrono::seconds(5)));
  EXPECT_EQ(rank.peer_memory().mapped(), 0u);
  EXPECT_EQ(memory_file_mappings(), 0);
}

// Free files beyond keep_free are closed, smallest first, and reported so
// the peer drops its mappings; a peer's buffer keeps its mapping alive
// after forget().
TEST(SharedBuffers, FreeFilesBeyondTheLimitAreClosedAndForgotten) {
  SharedMemory shared(4096, 1);
  std::vector<HostBuffer> held;
  for (std::size_t n : {2048u, 4096u, 8192u}) held.push_back(HostBuffer::uninitialized(kFloat32, n, &shared));
  EXPECT_EQ(shared.files_made(), 3u);
  EXPECT_EQ(memory_file_mappings(), 3);
  const SharedMemory::Lent lent = shared.lend(held[2].data(), held[2].bytes());
  ASSERT_GE(lent.fd, 0);
  PeerMemory peer;
  std::optional<HostBuffer> mapped = peer.adopt(lent.id, lent.fd, kFloat32, 8192);
  held[0].as<float>()[0] = 1.f;
  held.clear();  // the two unlent files are free: one is kept (the larger), one closed
  EXPECT_EQ(shared.take_forgotten(), std::vector<std::uint64_t>{1});
  EXPECT_TRUE(shared.take_forgotten().empty());
  const HostBuffer again = HostBuffer::uninitialized(kFloat32, 4096, &shared);
  EXPECT_EQ(shared.reuses(), 1u);
  peer.forget({lent.id});
  EXPECT_EQ(peer.mapped(), 0u);
  mapped->as<float>()[8191] = 3.f;  // still mapped: the buffer owns its mapping
  EXPECT_TRUE(peer.take_returned().empty());
  mapped.reset();
  EXPECT_EQ(peer.take_returned(), std::vector<std::uint64_t>{lent.id});
}

// A memory file announced without a descriptor, one smaller than its
// buffer (whose pages could not be read), one its sender could shrink, or an
// unknown mark is a ProtocolError, not a crash.
TEST(SharedBuffers, BadAnnouncementsAreProtocolErrors) {
  // What the rank's receive of a buffer of `floats` floats announced as
  // `mark` (with a memory file of `file_bytes`, none when < 0) throws: the
  // ProtocolError's text, or "" when it was accepted.
  auto refusal = [](char mark, long file_bytes, std::size_t floats) -> std::string {
    SocketPair sp;
    PipeCommunicator rank(sp.a, 0);
    const int memfd = file_bytes < 0 ? -1 : ::memfd_create("unsealed", MFD_CLOEXEC);
    if (file_bytes >= 0 && (memfd < 0 || ::ftruncate(memfd, file_bytes) != 0)) return "no memory file for the test";
    BlockResult r;
    r.job = 1;
    const Message m = r.to_message({HostBuffer::floats(floats)});
    const std::vector<std::uint8_t> header = encode_header(m);
    const auto tag = static_cast<std::uint32_t>(m.tag);
    const auto len = static_cast<std::uint64_t>(header.size());
    const std::uint64_t id = 5;
    const bool written = ::write(sp.b, &tag, sizeof tag) == sizeof tag &&
                         ::write(sp.b, &len, sizeof len) == sizeof len &&
                         ::write(sp.b, header.data(), header.size()) == static_cast<ssize_t>(header.size());
    send_marked(sp.b, mark, memfd);
    if (!written || (memfd >= 0 && ::write(sp.b, &id, sizeof id) != sizeof id)) return "the test's write failed";
    std::string text;
    try {
      (void)rank.recv(1, std::chrono::seconds(5));
    } catch (const ProtocolError& e) {
      text = e.what();
    }
    if (memfd >= 0) ::close(memfd);
    ::close(sp.b);
    return text;
  };
  EXPECT_NE(refusal('F', -1, 1000), "") << "a memory file without a descriptor was accepted";
  // 4000 bytes announced, 100 in the file.
  EXPECT_NE(refusal('F', 100, 1000).find("memory file of 100 bytes"), std::string::npos) << refusal('F', 100, 1000);
  // Big enough, but the sender could shrink it under the mapping.
  EXPECT_NE(refusal('F', 4000, 1000).find("F_SEAL_SHRINK"), std::string::npos) << refusal('F', 4000, 1000);
  EXPECT_NE(refusal('X', -1, 10), "") << "an unknown mark was accepted";
}

// A real block through the isolated process (PoCL): matmul 512's 1 MiB
// result arrives mapped from the child's memory file and verifies against
// the CPU reference; the repeated job's result reuses the returned file.
TEST_F(Isolation, ABlockResultReachesTheRankInSharedMemoryAndVerifies) {
  const RunBlock rb = whole_block(3, 11);
  const auto reference = spec->reference(p, spec->generate_inputs(p, rb.seed));
  for (int round = 0; round < 2; ++round) {  // the second reuses the child's runner and inputs
    Received req{0, rb.to_message(), 0};
    Message answer = isolated.handle(req);
    ASSERT_EQ(answer.tag, Tag::block_result) << answer.body.dump();
    ASSERT_EQ(answer.buffers.size(), 1u);
    EXPECT_EQ(answer.buffers[0].bytes(), std::size_t{512} * 512 * 4);
    // One mapping in this process: the second round's result comes in the
    // file the first round returned, mapped once.
    EXPECT_EQ(memory_file_mappings(), 1) << "round " << round;
    const Verdict v = verdict(answer.buffers, reference);
    EXPECT_TRUE(v.ok) << v.detail << " error " << v.max_error;
  }
  EXPECT_EQ(isolated.children_started(), 1u);
}

// The master's result file per rank: kept for a slot that fits (same path
// and nonce), replaced by a larger file with a new nonce; a view out of the
// slot's bounds, misaligned, or of a rank without a slot is a protocol error.
TEST(ResultSlots, AFileIsKeptWhileItFitsAndViewsStayInsideIt) {
  ResultMemory memory;
  const auto a = memory.slot(1, 10'000);
  ASSERT_TRUE(a);
  EXPECT_GE(a->bytes, 10'000u);
  EXPECT_EQ(a->path.rfind(fmt::format("/proc/{}/fd/", ::getpid()), 0), 0u) << a->path;
  const auto again = memory.slot(1, 5'000);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->path, a->path);
  EXPECT_EQ(again->nonce, a->nonce);
  const auto other = memory.slot(2, 5'000);
  ASSERT_TRUE(other);
  EXPECT_NE(other->nonce, a->nonce);
  const auto grown = memory.slot(1, a->bytes + 1);
  ASSERT_TRUE(grown);
  EXPECT_GT(grown->bytes, a->bytes);
  EXPECT_NE(grown->nonce, a->nonce);
  EXPECT_EQ(memory.view(1, SharedOutput{0, 64, kFloat32, 16}).size(), 16u);
  EXPECT_THROW((void)memory.view(1, SharedOutput{0, grown->bytes - 8, kFloat32, 4}), ProtocolError);
  EXPECT_THROW((void)memory.view(1, SharedOutput{0, 2, kFloat32, 1}), ProtocolError);
  EXPECT_THROW((void)memory.view(3, SharedOutput{0, 0, kFloat32, 1}), ProtocolError);
}

// The worker's side: allocations land one after another in the slot, what
// does not fit goes to upstream, begin() starts over in the same mapping;
// a slot whose nonce differs, or a path that does not open, is refused with
// the reason and every allocation then goes upstream.
TEST(ResultSlots, TheWorkersTargetPlacesInTheSlotAndRefusesAnotherFile) {
  ResultMemory memory;
  const auto slot = memory.slot(1, 1 << 16);
  ASSERT_TRUE(slot);
  ResultTarget target;
  ASSERT_EQ(target.begin(*slot), "");
  HostBuffer first = HostBuffer::uninitialized(kFloat32, 1000, &target);
  HostBuffer second = HostBuffer::uninitialized(kFloat32, 1000, &target);
  const auto at1 = target.offset_of(first.data(), first.bytes());
  const auto at2 = target.offset_of(second.data(), second.bytes());
  ASSERT_TRUE(at1 && at2);
  EXPECT_EQ(*at1, 0u);
  EXPECT_GE(*at2, *at1 + first.bytes());
  HostBuffer big = HostBuffer::uninitialized(kFloat32, slot->bytes, &target);  // 4× the slot
  EXPECT_FALSE(target.offset_of(big.data(), big.bytes()));
  // What the worker writes, the master reads in place.
  for (std::size_t i = 0; i < 1000; ++i) second.as<float>()[i] = static_cast<float>(i);
  const HostBuffer seen = memory.view(1, SharedOutput{1, *at2, kFloat32, 1000});
  EXPECT_EQ(seen.as<float>()[999], 999.f);
  first = HostBuffer();
  second = HostBuffer();
  ASSERT_EQ(target.begin(*slot), "");
  HostBuffer next = HostBuffer::uninitialized(kFloat32, 10, &target);
  EXPECT_EQ(target.offset_of(next.data(), next.bytes()), std::optional<std::uint64_t>(0));
  EXPECT_EQ(target.mappings_made(), 1u);
  next = HostBuffer();

  ResultSlot wrong = *slot;
  wrong.nonce += 2;
  EXPECT_NE(target.begin(wrong).find("nonce differs"), std::string::npos);
  HostBuffer elsewhere = HostBuffer::uninitialized(kFloat32, 10, &target);
  EXPECT_FALSE(target.offset_of(elsewhere.data(), elsewhere.bytes()));
  ResultSlot gone = *slot;
  gone.path = "/proc/self/fd/999999";
  EXPECT_NE(target.begin(gone).find("cannot open"), std::string::npos);
}

// A real block through the isolated process (PoCL) with a result slot: the
// child reads matmul 512's result back straight into this process's file,
// the answer carries no bytes, and the view verifies; a spoiled slot is
// answered with the reason and the result as a buffer, which verifies too.
TEST_F(Isolation, ABlockResultLandsInTheMastersSlotAndVerifies) {
  ResultMemory memory;
  RunBlock rb = whole_block(4, 12);
  rb.result_slot = memory.slot(1, std::size_t{512} * 512 * 4);
  ASSERT_TRUE(rb.result_slot);
  const auto reference = spec->reference(p, spec->generate_inputs(p, rb.seed));
  for (bool spoiled : {false, true}) {
    SCOPED_TRACE(spoiled ? "spoiled slot" : "slot");
    RunBlock sent = rb;
    if (spoiled) sent.result_slot->nonce += 2;
    Received req{0, sent.to_message(), 0};
    Message answer = isolated.handle(req);
    ASSERT_EQ(answer.tag, Tag::block_result) << answer.body.dump();
    const BlockResult br = BlockResult::from(answer);
    std::vector<HostBuffer> outputs;
    if (spoiled) {
      EXPECT_NE(br.shared_error.find("nonce differs"), std::string::npos) << br.shared_error;
      EXPECT_TRUE(br.shared.empty());
      ASSERT_EQ(answer.buffers.size(), 1u);
      outputs = std::move(answer.buffers);
    } else {
      EXPECT_EQ(br.shared_error, "");
      EXPECT_TRUE(answer.buffers.empty());
      ASSERT_EQ(br.shared.size(), 1u);
      EXPECT_EQ(br.shared[0].count, std::size_t{512} * 512);
      outputs.push_back(memory.view(1, br.shared[0]));
    }
    const Verdict v = verdict(outputs, reference);
    EXPECT_TRUE(v.ok) << v.detail << " error " << v.max_error;
  }
}
