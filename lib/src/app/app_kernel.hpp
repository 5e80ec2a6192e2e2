#pragma once
// What wstune learns about an app's kernel from OpenCL queries (private to
// the library): its identity, work-group attributes and argument info.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CL/cl.h>

#include "wstune/device.hpp"
#include "wstune/lookup.hpp"
#include "wstune/store.hpp"

namespace wstune::detail {

/// One kernel argument from clGetKernelArgInfo (OpenCL 1.2 §5.7.3).
struct ArgFacts {
  std::string name;                                                         ///< CL_KERNEL_ARG_NAME
  std::string type;                                                         ///< CL_KERNEL_ARG_TYPE_NAME, e.g. "float*"
  cl_kernel_arg_address_qualifier address = CL_KERNEL_ARG_ADDRESS_PRIVATE;  ///< __global, __local, …
  bool is_const = false;                                                    ///< CL_KERNEL_ARG_TYPE_CONST
  bool writable_image = false;  ///< an image that is write_only or read_write
  /// A __global pointer that is not const: the kernel may write through it.
  [[nodiscard]] bool written() const noexcept { return address == CL_KERNEL_ARG_ADDRESS_GLOBAL && !is_const; }
};

/// What one kernel is and allows on one device.
struct KernelFacts {
  KernelKey key;                        ///< name, program hash, build options
  std::size_t max_items = 0;            ///< CL_KERNEL_WORK_GROUP_SIZE
  std::uint64_t local_mem_bytes = 0;    ///< CL_KERNEL_LOCAL_MEM_SIZE (with __local args as set now)
  std::size_t required[3] = {0, 0, 0};  ///< CL_KERNEL_COMPILE_WORK_GROUP_SIZE (0: none)
  bool non_uniform = false;             ///< the device and the program's -cl-std allow non-uniform work-groups
  bool arg_info = false;                ///< clGetKernelArgInfo answered
  std::vector<ArgFacts> args;           ///< per argument (empty without arg info)
  cl_uint num_args = 0;                 ///< CL_KERNEL_NUM_ARGS
  /// The kernel's reqd_work_group_size as a local size of `dims` dimensions, if it has one.
  [[nodiscard]] LocalSize required_local(unsigned dims) const;
  /// Indices of __local pointer arguments ("" names when unknown).
  [[nodiscard]] std::vector<cl_uint> local_args() const;
};

/// Queries `k` on `dev` (`info` is the device's model). Throws ClError when
/// a handle is invalid.
KernelFacts kernel_facts(cl_kernel k, cl_device_id dev, const DeviceInfo& info);

/// True when `device` runs a program built with `build_options` with
/// non-uniform work-groups: the device has them
/// (DeviceInfo::non_uniform_work_groups: OpenCL 2.x, or 3.0 reporting
/// CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT) and the options ask for
/// -cl-std=CL2.0 or later without -cl-uniform-work-group-size (OpenCL 3.0
/// API §5.10 clEnqueueNDRangeKernel, §5.8.6 build options).
bool non_uniform_allowed(const DeviceInfo& device, const std::string& build_options);

/// The device of a command queue. Throws ClError.
cl_device_id queue_device(cl_command_queue q);

}  // namespace wstune::detail

namespace wstune::detail {

/// clEnqueueNDRangeKernel of `k` over `global` (1 to 3 dimensions) with
/// `local` (NULL for nullopt; a shape of fewer dimensions is padded with 1).
/// Returns the OpenCL error code.
cl_int enqueue_ndrange(cl_command_queue q, cl_kernel k, const Extent& global, const LocalSize& local,
                       cl_event* event) noexcept;

}  // namespace wstune::detail
