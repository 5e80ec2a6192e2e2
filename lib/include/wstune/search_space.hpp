#pragma once
/// @file search_space.hpp
/// The local-work-size search space of one kernel on one device for one
/// global work size: every (x), (x, y) or (x, y, z) with x | global.x,
/// y | global.y and z | global.z
/// (all divisors, not only powers of two), within the device's max work-item
/// sizes, x·y ≤ min(device max work-group size, CL_KERNEL_WORK_GROUP_SIZE),
/// and the work-group's local memory fitting. Pure: no OpenCL calls.
/// Source: paper §2.3 (a local dimension must divide the global one),
/// OpenCL 1.2 §5.8 clEnqueueNDRangeKernel (CL_INVALID_WORK_GROUP_SIZE,
/// CL_INVALID_WORK_ITEM_SIZE), §5.7.3 clGetKernelWorkGroupInfo.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wstune/types.hpp"

namespace wstune {

/// The device and kernel limits that bound a local work size.
struct SpaceLimits {
  std::size_t max_work_group_size = 0;      ///< CL_DEVICE_MAX_WORK_GROUP_SIZE (work-items); 0 = no limit
  std::size_t kernel_work_group_size = 0;   ///< CL_KERNEL_WORK_GROUP_SIZE of the built kernel; 0 = unknown
  std::vector<std::size_t> max_work_item_sizes;  ///< CL_DEVICE_MAX_WORK_ITEM_SIZES per dimension; missing = no limit
  std::uint64_t local_mem_bytes = 0;        ///< CL_DEVICE_LOCAL_MEM_SIZE (bytes); 0 = not checked
  std::uint64_t kernel_local_mem_bytes = 0; ///< CL_KERNEL_LOCAL_MEM_SIZE: fixed local memory of one work-group (bytes)
  std::uint64_t local_mem_per_item_bytes = 0;  ///< local memory one work-item adds (bytes; 0 for wstune's kernels)

  /// min(max_work_group_size, kernel_work_group_size), ignoring zeros (no
  /// limit); SIZE_MAX when both are zero.
  [[nodiscard]] std::size_t max_items() const noexcept;
};

/// All divisors of n in ascending order; empty for n == 0. O(√n).
std::vector<std::size_t> divisors(std::size_t n);

/// True when `local` can run `global` under `limits`: at least global.dims
/// dimensions and 1 beyond them (a shape (x, 1) runs a 1-D NDRange), each
/// dimension non-zero and dividing the global one,
/// within max_work_item_sizes, count ≤ max_items(), local memory fitting.
bool fits(const Extent& local, const Extent& global, const SpaceLimits& limits) noexcept;

/// Every local size that fits(), ordered by z, then y, then x (ascending),
/// with global.dims dimensions. Empty when global has a zero.
std::vector<Extent> enumerate_local_sizes(const Extent& global, const SpaceLimits& limits);

/// The shapes in `space` with exactly `items` work-items, ordered by x
/// ascending (e.g. for 8: (1,8), (2,4), (4,2), (8,1); paper §2.3).
std::vector<Extent> shapes_of(std::size_t items, const std::vector<Extent>& space);

}  // namespace wstune
