#pragma once
/// @file shared_memory.hpp
/// Host memory that another process on the same host maps without a copy
/// (issue 18: a block's result crossed the isolated OpenCL process's socket
/// as 64 MB of bytes at matmul 4096, 22–25 ms of the daemon's overhead).
/// Each large allocation is its own memory file (memfd_create(2), Linux
/// ≥ 3.17) mapped shared; PipeCommunicator (isolation.hpp) passes such a
/// buffer as its file descriptor (SCM_RIGHTS, unix(7)) and the receiver
/// maps the same pages (map_shared()).

#include <cstddef>
#include <map>
#include <memory_resource>
#include <mutex>
#include <utility>

#include "wstune/host_buffer.hpp"

namespace wstune::daemon {

/// A std::pmr::memory_resource whose allocations of at least `min_bytes`
/// are each a memfd mapped MAP_SHARED (zeroed pages, faulted in on first
/// touch); smaller ones, and any whose memfd cannot be made (e.g. EMFILE),
/// come from the heap and then travel as bytes. Thread-safe. Must outlive
/// every buffer allocated from it.
class SharedMemory final : public std::pmr::memory_resource {
 public:
  /// Allocations below `min_bytes` (bytes) come from the heap.
  explicit SharedMemory(std::size_t min_bytes = std::size_t{1} << 20) : min_bytes_(min_bytes) {}
  ~SharedMemory() override;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  /// The memfd of the allocation that starts at `data` and holds at least
  /// `bytes`, or −1 (not one of this resource's shared allocations). The
  /// descriptor stays owned by the resource.
  [[nodiscard]] int fd_of(const void* data, std::size_t bytes) const;
  /// Shared allocations made so far (memfds created), for tests and logs.
  [[nodiscard]] std::size_t shared_allocations() const;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
  struct Mapping {
    int fd = -1;
    std::size_t bytes = 0;
  };
  std::size_t min_bytes_;
  mutable std::mutex mutex_;
  std::map<const void*, Mapping> live_;
  std::size_t made_ = 0;
};

/// Maps the first `count` elements of `type` of the memory file `fd` (one
/// SharedMemory allocation received from another process) shared and
/// read-write, pre-faulted (MAP_POPULATE), as a HostBuffer that unmaps it
/// when released: no copy of the bytes. Does not close `fd`. Throws
/// ProtocolError when the file is smaller than the buffer (its pages could
/// not be read) or the mapping fails.
HostBuffer map_shared(int fd, ElementType type, std::size_t count);

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
