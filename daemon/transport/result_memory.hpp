#pragma once
/// @file result_memory.hpp
/// Block results that reach a master on the same host without an MPI copy
/// (issue 18: with two GPU workers the master received each 32 MB result
/// of matmul 4096 in about 5 ms, one after the other, so the second
/// worker's result arrived 5 ms late whatever Open MPI's settings).
///
/// The master keeps one memory file (memfd_create(2)) per worker rank on
/// its host, sealed against shrinking, and names it in the run_block
/// message (ResultSlot: /proc/PID/fd/N, proc(5)). The worker, or its
/// isolated OpenCL process, opens and maps that file and reads its block's
/// outputs back straight into it (ResultTarget is the memory resource of
/// the read-back); the block_result then carries only where each output
/// lies (SharedOutput), and the master views the bytes in place
/// (ResultMemory::view). Each file starts with a header holding a random
/// nonce the worker checks, so a worker on another host that happens to
/// open the same path (or a reused descriptor number) is noticed; it then
/// says why in BlockResult::shared_error and sends its outputs as bytes, and
/// the master stops offering it a slot. An output that does not fit the
/// slot travels as bytes too. Linux only (memfd_create, /proc).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "kernel/host_buffer.hpp"
#include "transport/shared_memory.hpp"

namespace wstune::daemon {

/// Bytes before a result file's data: the magic and the nonce, padded to
/// 64 KiB, a multiple of the page size on the kernels wstuned runs on (4 KiB
/// on x86-64, up to 64 KiB on aarch64 and ppc64le), so the data and each
/// output placed at a page boundary from it are page-aligned.
inline constexpr std::size_t kResultHeaderBytes = std::size_t{1} << 16;

/// Where a worker may leave its block's outputs (RunBlock::result_slot).
struct ResultSlot {
  std::string path;         ///< the master's memory file: /proc/PID/fd/N
  std::uint64_t bytes = 0;  ///< the data's size after the header, bytes
  std::uint64_t nonce = 0;  ///< the header's nonce (identifies the file)
};
/// {"path","bytes","nonce"}.
nlohmann::json to_json(const ResultSlot& s);
/// Inverse of to_json(ResultSlot); throws nlohmann::json errors when a field is missing.
ResultSlot result_slot_from_json(const nlohmann::json& j);

/// One output left in the slot (BlockResult::shared).
struct SharedOutput {
  std::size_t index = 0;     ///< its position among the block's outputs (chunk order)
  std::uint64_t offset = 0;  ///< byte offset from the data's start (after the header)
  ElementType type;          ///< element type
  std::uint64_t count = 0;   ///< elements
};
/// {"index","offset","type","count"} (type as its T1 name).
nlohmann::json to_json(const SharedOutput& s);
/// Inverse of to_json(SharedOutput); throws ProtocolError for an unknown
/// type name, nlohmann::json errors for a missing field.
SharedOutput shared_output_from_json(const nlohmann::json& j);

/// The master's side: one memory file per worker rank, grown when a block's
/// outputs need more, kept for the daemon's life (a reused file is neither
/// made nor faulted in again). Thread-safe.
class ResultMemory {
 public:
  ResultMemory();
  ~ResultMemory();
  ResultMemory(const ResultMemory&) = delete;
  ResultMemory& operator=(const ResultMemory&) = delete;
  /// A slot of at least `bytes` data bytes for `rank`: its file, replaced
  /// by a larger one (a new nonce) when smaller. std::nullopt when no file
  /// can be made (the outputs then travel as bytes). The slot's bytes must
  /// not be in use (views of an earlier result released).
  [[nodiscard]] std::optional<ResultSlot> slot(int rank, std::size_t bytes);
  /// A buffer over output `out` of rank's file, without a copy; valid until
  /// the next slot() for that rank. Throws ProtocolError when the rank has
  /// no file or the output lies outside its data or is misaligned for its type.
  [[nodiscard]] HostBuffer view(int rank, const SharedOutput& out) const;

 private:
  struct File {
    int fd = -1;
    std::shared_ptr<FileMapping> map;  // header included
    std::size_t bytes = 0;             // data bytes after the header
    std::uint64_t nonce = 0;
    [[nodiscard]] std::byte* base() const noexcept { return static_cast<std::byte*>(map->data); }
  };
  mutable std::mutex mutex_;
  std::map<int, File> files_;
  std::mt19937_64 random_;
};

/// The worker's side: the master's file mapped (one at a time, kept while
/// the master names the same file), and a std::pmr::memory_resource that
/// places allocations one after another in its data, each at a page
/// boundary, and sends what does not fit to `upstream`. Allocations in the file are never freed one by
/// one: begin() starts the next block's outputs at the data's start. Not
/// thread-safe; must outlive every buffer allocated from it.
class ResultTarget final : public std::pmr::memory_resource {
 public:
  /// What does not fit the slot comes from `upstream` (the heap when null;
  /// it must outlive this).
  explicit ResultTarget(std::pmr::memory_resource* upstream = nullptr);
  ~ResultTarget() override;
  ResultTarget(const ResultTarget&) = delete;
  ResultTarget& operator=(const ResultTarget&) = delete;
  /// Maps `slot` (kept when it names the file mapped now) and starts
  /// placing at its data's start. Returns "" when ready, else why not (the
  /// file cannot be opened or mapped, is smaller than the slot, or its
  /// nonce differs: another host's file); every allocation then goes to
  /// upstream. Buffers placed after the last begin() must be gone.
  [[nodiscard]] std::string begin(const ResultSlot& slot);
  /// No slot for this block: every allocation goes to upstream.
  void clear() noexcept;
  /// The byte offset of `data` from the slot's data start when the
  /// `bytes` bytes from it lie in the slot mapped now.
  [[nodiscard]] std::optional<std::uint64_t> offset_of(const std::byte* data, std::size_t bytes) const noexcept;
  /// The master's files mapped so far (a file kept across blocks counts
  /// once; one refused for its nonce does not count).
  [[nodiscard]] std::size_t mappings_made() const noexcept { return mappings_; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
  void unmap() noexcept;
  std::pmr::memory_resource* upstream_;
  std::string path_;
  std::uint64_t nonce_ = 0;
  std::shared_ptr<FileMapping> map_;  // the master's file, header included
  [[nodiscard]] std::byte* base() const noexcept { return static_cast<std::byte*>(map_->data); }
  bool active_ = false;   // begin() succeeded for the current block
  std::size_t used_ = 0;  // data bytes placed since begin()
  std::size_t mappings_ = 0;
};

}  // namespace wstune::daemon
