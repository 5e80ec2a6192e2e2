#pragma once
/// @file pinned_memory.hpp
/// Pinned (page-locked) host memory through OpenCL: buffers created with
/// CL_MEM_ALLOC_HOST_PTR and mapped (OpenCL 1.2 §5.2.1 clCreateBuffer flags,
/// §5.4.2 clEnqueueMapBuffer), which is how NVIDIA's OpenCL and PoCL hand out
/// host memory their DMA engines copy from and to without a staging copy.
/// A std::pmr::memory_resource, so HostBuffer (host_buffer.hpp) can live in it.

#include <cstddef>
#include <map>
#include <memory_resource>
#include <mutex>
#include <string>

#include <CL/opencl.hpp>

namespace wstune {

/// Allocates host memory as mapped CL_MEM_ALLOC_HOST_PTR buffers of one
/// context. An allocation the driver refuses falls back to the default heap
/// (counted in fallbacks(); never throws for that). Thread-safe. Must outlive
/// every allocation from it. Pinning is slow (tens of ms per 100 MB on
/// NVIDIA), so a freed buffer is kept, up to `keep_bytes` in all, and
/// handed out again for a request of at least half its size; the rest are
/// unmapped and released.
class PinnedMemory final : public std::pmr::memory_resource {
 public:
  /// Memory of `context`, mapped through a queue of its own on `device`.
  /// Throws ClError when the queue cannot be created.
  PinnedMemory(const cl::Context& context, const cl::Device& device, std::size_t keep_bytes = std::size_t{1} << 31);
  ~PinnedMemory() override;
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;

  /// Allocations that fell back to the heap (the driver refused a pinned one).
  [[nodiscard]] std::size_t fallbacks() const;
  /// Why the last fallback happened ("" when none did).
  [[nodiscard]] std::string last_error() const;

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  struct Mapping {
    cl::Buffer buffer;
    std::size_t bytes = 0;
  };
  void release(void* p, Mapping& m);  // unmaps (mutex held)

  cl::Context context_;
  cl::CommandQueue queue_;
  std::size_t keep_bytes_;
  mutable std::mutex mutex_;
  std::map<void*, Mapping> mapped_;                             // in use: mapped pointer → its buffer
  std::multimap<std::size_t, std::pair<void*, Mapping>> kept_;  // kept for reuse: bytes → pointer and buffer
  std::size_t kept_bytes_ = 0;
  std::size_t fallbacks_ = 0;
  std::string last_error_;
};

}  // namespace wstune
