#pragma once
/// @file shared_memory.hpp
/// Host memory that another process on the same host maps without a copy
/// (issue 18: a block's result crossed the isolated OpenCL process's socket
/// as 64 MB of bytes at matmul 4096, 22–25 ms of the daemon's overhead).
/// Each large allocation is a memory file (memfd_create(2), Linux ≥ 3.17)
/// mapped shared. PipeCommunicator (isolation.hpp) lends such a buffer to
/// its peer as the file's descriptor (SCM_RIGHTS, unix(7)); the peer maps
/// the same pages (PeerMemory) and returns the file when its buffer is
/// released. Files are reused, and each side keeps its mapping, so a
/// repeated job's result is neither copied nor faulted in again.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <utility>
#include <vector>

#include "kernel/host_buffer.hpp"

namespace wstune::daemon {

/// A std::pmr::memory_resource whose allocations of at least `min_bytes`
/// are memory files (sealed against shrinking) mapped MAP_SHARED; smaller
/// ones, and any whose file
/// cannot be made (e.g. EMFILE), come from the heap and travel as bytes. A
/// released file is kept for reuse (the smallest that fits) unless it is
/// lent to the peer; beyond `keep_free` free files the smallest are closed
/// and reported by take_forgotten(). Thread-safe. Must outlive every buffer
/// allocated from it.
class SharedMemory final : public std::pmr::memory_resource {
 public:
  /// Allocations below `min_bytes` (bytes) come from the heap; at most
  /// `keep_free` unused files are kept.
  explicit SharedMemory(std::size_t min_bytes = std::size_t{1} << 20, std::size_t keep_free = 4)
      : min_bytes_(min_bytes), keep_free_(keep_free) {}
  ~SharedMemory() override;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  /// A memory file lent to the peer: its descriptor (still owned by the
  /// resource), its id and its size in bytes; fd −1 when the memory is not
  /// one of this resource's files.
  struct Lent {
    int fd = -1;            ///< descriptor to attach (SCM_RIGHTS)
    std::uint64_t id = 0;   ///< the file's id (unique in this resource)
    std::size_t bytes = 0;  ///< the file's size
  };
  /// Lends the file whose allocation starts at `data` and holds at least
  /// `bytes` to the peer: it is not reused until returned(id) as often as
  /// it was lent.
  [[nodiscard]] Lent lend(const void* data, std::size_t bytes);
  /// The peer released its buffer of file `id`; unknown ids are ignored.
  void returned(std::uint64_t id);
  /// Ids of files closed since the last call (the peer drops its mappings).
  [[nodiscard]] std::vector<std::uint64_t> take_forgotten();
  /// Files created so far.
  [[nodiscard]] std::size_t files_made() const;
  /// Allocations served by a file made before (a reuse).
  [[nodiscard]] std::size_t reuses() const;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
  struct File {
    int fd = -1;
    void* data = nullptr;
    std::size_t bytes = 0;
    bool used = false;  // a buffer here holds it
    unsigned lent = 0;  // buffers of the peer's that hold it
    [[nodiscard]] bool free() const noexcept { return !used && lent == 0; }
  };
  using Files = std::map<std::uint64_t, File>;  // by id (a handful: a linear search by address is enough)
  void* reuse(std::size_t bytes);
  Files::iterator find(const void* data);
  void trim();
  std::size_t min_bytes_;
  std::size_t keep_free_;
  mutable std::mutex mutex_;
  Files files_;
  std::vector<std::uint64_t> forgotten_;
  std::uint64_t next_id_ = 1;
  std::size_t reuses_ = 0;
};

/// The receiving side of a peer's SharedMemory: each file mapped once
/// (shared, read-write, pre-faulted, not inherited by a fork) and kept
/// while the peer keeps the file, so a reused file costs neither a mapping
/// nor page faults. Buffers
/// adopt the mapping (no copy) and keep it alive after forget() or the
/// PeerMemory's end. Thread-safe.
class PeerMemory {
 public:
  PeerMemory();
  /// A buffer of the first `count` elements of `type` of the peer's file
  /// `id`, whose descriptor `fd` came with it (the caller closes `fd`).
  /// When the buffer is released, `id` is queued for take_returned().
  /// Throws ProtocolError when the file is smaller than the buffer (its
  /// pages could not be read), is not sealed against shrinking
  /// (F_SEAL_SHRINK), or cannot be mapped.
  HostBuffer adopt(std::uint64_t id, int fd, ElementType type, std::size_t count);
  /// Ids of files whose buffers were released since the last call (to tell the peer).
  [[nodiscard]] std::vector<std::uint64_t> take_returned();
  /// The peer closed these files: drop their mappings.
  void forget(const std::vector<std::uint64_t>& ids);
  /// Files mapped now.
  [[nodiscard]] std::size_t mapped() const;
  /// Mappings made so far (a file mapped again after forget() counts twice).
  [[nodiscard]] std::size_t mappings_made() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// A new memory file of `bytes` called `name` (memfd_create(2), close on
/// exec), sealed against shrinking (a peer's mapping can never lose pages
/// under it: a read past a shrunk file's end is SIGBUS) and mapped shared
/// read-write here: its descriptor and mapping, or {−1, nullptr} when one
/// cannot be made. The caller unmaps and closes it.
std::pair<int, void*> make_memory_file(const char* name, std::size_t bytes);

/// A memory file mapped here, unmapped with its last owner.
struct FileMapping {
  FileMapping(void* d, std::size_t b) : data(d), bytes(b) {}
  ~FileMapping();
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  void* data;         ///< the mapping
  std::size_t bytes;  ///< its length (the whole file)
};

/// Maps the whole memory file `fd` (which must hold at least `bytes` and be
/// sealed against shrinking) shared, read-write, pre-faulted and not
/// inherited by a fork. The caller keeps `fd`. Throws ProtocolError naming
/// what is wrong.
std::shared_ptr<FileMapping> map_memory_file(int fd, std::size_t bytes);

/// Sends the byte `mark` over the connected AF_UNIX socket `socket` with
/// the descriptor `fd` attached (SCM_RIGHTS, unix(7); nothing attached when
/// `fd` < 0). The caller keeps `fd`. Throws ProtocolError when the peer is
/// gone.
void send_marked(int socket, char mark, int fd);

/// Receives one byte from `socket` (blocking) and the descriptor attached to
/// it, or −1 when none came (received with O_CLOEXEC; the caller closes it).
/// Throws ProtocolError when the peer closed the socket or the descriptor
/// was cut off (MSG_CTRUNC).
std::pair<char, int> recv_marked(int socket);

}  // namespace wstune::daemon
