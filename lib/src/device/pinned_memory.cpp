#include "device/pinned_memory.hpp"

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

PinnedMemory::PinnedMemory(const cl::Context& context, const cl::Device& device, std::size_t keep_bytes)
    : context_(context), keep_bytes_(keep_bytes) {
  cl_int err = CL_SUCCESS;
  queue_ = cl::CommandQueue(context_, device, 0, &err);
  check(err, "clCreateCommandQueue(pinned memory)");
}

PinnedMemory::~PinnedMemory() {
  const std::lock_guard lock(mutex_);
  for (auto& [ptr, m] : mapped_) check_nothrow(queue_.enqueueUnmapMemObject(m.buffer, ptr), "clEnqueueUnmapMemObject");
  for (auto& [bytes, kept] : kept_)
    check_nothrow(queue_.enqueueUnmapMemObject(kept.second.buffer, kept.first), "clEnqueueUnmapMemObject");
  check_nothrow(queue_.finish(), "clFinish(pinned memory)");
}

std::size_t PinnedMemory::fallbacks() const {
  const std::lock_guard lock(mutex_);
  return fallbacks_;
}

std::string PinnedMemory::last_error() const {
  const std::lock_guard lock(mutex_);
  return last_error_;
}

void PinnedMemory::release(void* p, Mapping& m) {
  check_nothrow(queue_.enqueueUnmapMemObject(m.buffer, p), "clEnqueueUnmapMemObject");
  check_nothrow(queue_.finish(), "clFinish(pinned memory)");
}

void* PinnedMemory::do_allocate(std::size_t bytes, std::size_t alignment) {
  bytes = std::max<std::size_t>(bytes, 1);
  {
    const std::lock_guard lock(mutex_);
    const auto it = kept_.lower_bound(bytes);  // the smallest kept buffer that holds it
    if (it != kept_.end() && it->first / 2 <= bytes &&
        reinterpret_cast<std::uintptr_t>(it->second.first) % alignment == 0) {
      auto node = kept_.extract(it);
      kept_bytes_ -= node.key();
      void* p = node.mapped().first;
      mapped_.emplace(p, std::move(node.mapped().second));
      return p;
    }
  }
  cl_int err = CL_SUCCESS;
  cl::Buffer buf(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
  void* ptr = nullptr;
  if (err == CL_SUCCESS) {
    ptr = queue_.enqueueMapBuffer(buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, nullptr, nullptr, &err);
  }
  const bool aligned = ptr && reinterpret_cast<std::uintptr_t>(ptr) % alignment == 0;
  const std::lock_guard lock(mutex_);
  if (err != CL_SUCCESS || !aligned) {
    ++fallbacks_;
    last_error_ = err != CL_SUCCESS ? fmt::format("pinned allocation of {} bytes: {}", bytes, cl_error_name(err))
                                    : fmt::format("mapped pointer not aligned to {} bytes", alignment);
    if (ptr) check_nothrow(queue_.enqueueUnmapMemObject(buf, ptr), "clEnqueueUnmapMemObject");
    return std::pmr::new_delete_resource()->allocate(bytes, alignment);
  }
  mapped_.emplace(ptr, Mapping{std::move(buf), bytes});
  return ptr;
}

void PinnedMemory::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  std::unique_lock lock(mutex_);
  const auto it = mapped_.find(p);
  if (it == mapped_.end()) {
    lock.unlock();
    std::pmr::new_delete_resource()->deallocate(p, std::max<std::size_t>(bytes, 1), alignment);
    return;
  }
  auto node = mapped_.extract(it);
  const std::size_t size = node.mapped().bytes;
  if (size > keep_bytes_) {
    release(p, node.mapped());
    return;
  }
  // Keep it; make room by releasing the largest kept buffers.
  while (kept_bytes_ + size > keep_bytes_ && !kept_.empty()) {
    auto largest = kept_.extract(std::prev(kept_.end()));
    release(largest.mapped().first, largest.mapped().second);
    kept_bytes_ -= largest.key();
  }
  kept_.emplace(size, std::pair{p, std::move(node.mapped())});
  kept_bytes_ += size;
}

}  // namespace wstune
