#include "wstune/pinned_memory.hpp"

#include <fmt/format.h>

#include "wstune/error.hpp"

namespace wstune {

PinnedMemory::PinnedMemory(const cl::Context& context, const cl::Device& device) : context_(context) {
  cl_int err = CL_SUCCESS;
  queue_ = cl::CommandQueue(context_, device, 0, &err);
  check(err, "clCreateCommandQueue(pinned memory)");
}

PinnedMemory::~PinnedMemory() {
  const std::lock_guard lock(mutex_);
  for (auto& [ptr, buf] : mapped_) check_nothrow(queue_.enqueueUnmapMemObject(buf, ptr), "clEnqueueUnmapMemObject");
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

void* PinnedMemory::do_allocate(std::size_t bytes, std::size_t alignment) {
  bytes = std::max<std::size_t>(bytes, 1);
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
  mapped_.emplace(ptr, std::move(buf));
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
  check_nothrow(queue_.enqueueUnmapMemObject(it->second, p), "clEnqueueUnmapMemObject");
  check_nothrow(queue_.finish(), "clFinish(pinned memory)");
  mapped_.erase(it);
}

}  // namespace wstune
