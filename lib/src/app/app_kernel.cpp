// Kernel facts for the app-facing tuner (see app_kernel.hpp).
#include "app/app_kernel.hpp"

#include <algorithm>
#include <cstdio>

#include "wstune/error.hpp"

namespace wstune::detail {

namespace {

// OpenCL 2.1 query names by value: the library compiles against the
// 1.2 API (CL_TARGET_OPENCL_VERSION=120) and asks them only where they exist.
constexpr cl_program_info kProgramIl = 0x1169;  // CL_PROGRAM_IL (2.1)

// A string-valued OpenCL info query through `get(size, value, size_ret)`;
// nullopt when the query fails (e.g. CL_KERNEL_ARG_INFO_NOT_AVAILABLE).
template <class Get>
std::optional<std::string> info_string(Get get) {
  std::size_t n = 0;
  if (get(0, nullptr, &n) != CL_SUCCESS) return std::nullopt;
  std::string s(n, '\0');
  if (n && get(n, s.data(), nullptr) != CL_SUCCESS) return std::nullopt;
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\n");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The device's binary of `prog` (CL_PROGRAM_BINARIES), "" when unavailable.
std::string program_binary(cl_program prog, cl_device_id dev) {
  cl_uint n = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, nullptr) != CL_SUCCESS || n == 0) return {};
  std::vector<cl_device_id> devs(n);
  std::vector<std::size_t> sizes(n);
  if (clGetProgramInfo(prog, CL_PROGRAM_DEVICES, n * sizeof(cl_device_id), devs.data(), nullptr) != CL_SUCCESS ||
      clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, n * sizeof(std::size_t), sizes.data(), nullptr) != CL_SUCCESS)
    return {};
  std::vector<std::string> bins(n);
  std::vector<unsigned char*> ptrs(n);
  for (cl_uint i = 0; i < n; ++i) {
    bins[i].resize(sizes[i]);
    ptrs[i] = reinterpret_cast<unsigned char*>(bins[i].data());
  }
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, n * sizeof(unsigned char*), ptrs.data(), nullptr) != CL_SUCCESS)
    return {};
  const auto it = std::find(devs.begin(), devs.end(), dev);
  return it == devs.end() ? std::string() : bins[static_cast<std::size_t>(it - devs.begin())];
}

// The program's identity hash: its source, else its IL (OpenCL ≥ 2.1), else
// the device's binary (see KernelKey).
std::string program_hash(cl_program prog, cl_device_id dev) {
  if (auto src = info_string(
          [&](std::size_t n, void* v, std::size_t* r) { return clGetProgramInfo(prog, CL_PROGRAM_SOURCE, n, v, r); });
      src && !src->empty())
    return fnv1a_hex(*src);
  if (auto il = info_string([&](std::size_t n, void* v, std::size_t* r) {
        return clGetProgramInfo(prog, kProgramIl, n, v, r);  // an error below 2.1: skipped
      });
      il && !il->empty())
    return "il:" + fnv1a_hex(*il);
  const std::string bin = program_binary(prog, dev);
  return bin.empty() ? std::string() : "bin:" + fnv1a_hex(bin);
}

std::vector<ArgFacts> arg_facts(cl_kernel k, cl_uint n) {
  std::vector<ArgFacts> args(n);
  for (cl_uint i = 0; i < n; ++i) {
    ArgFacts& a = args[i];
    cl_kernel_arg_type_qualifier tq = 0;
    cl_kernel_arg_access_qualifier acc = CL_KERNEL_ARG_ACCESS_NONE;
    if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof a.address, &a.address, nullptr) !=
            CL_SUCCESS ||
        clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, nullptr) != CL_SUCCESS ||
        clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof acc, &acc, nullptr) != CL_SUCCESS)
      return {};
    a.is_const = (tq & CL_KERNEL_ARG_TYPE_CONST) != 0;
    a.writable_image = acc == CL_KERNEL_ARG_ACCESS_WRITE_ONLY || acc == CL_KERNEL_ARG_ACCESS_READ_WRITE;
    auto get = [&](cl_kernel_arg_info what) {
      return info_string(
                 [&](std::size_t sz, void* v, std::size_t* r) { return clGetKernelArgInfo(k, i, what, sz, v, r); })
          .value_or("");
    };
    a.name = get(CL_KERNEL_ARG_NAME);
    a.type = get(CL_KERNEL_ARG_TYPE_NAME);
  }
  return args;
}

// Argument info from a private copy of the program built from its source
// with -cl-kernel-arg-info (drivers such as PoCL keep it only then); empty
// when the program has no source or the copy does not build.
std::vector<ArgFacts> arg_facts_rebuilt(cl_program prog, cl_device_id dev, const std::string& name,
                                        const std::string& options, cl_uint n) {
  const auto src = info_string(
      [&](std::size_t sz, void* v, std::size_t* r) { return clGetProgramInfo(prog, CL_PROGRAM_SOURCE, sz, v, r); });
  cl_context ctx = nullptr;
  if (!src || src->empty() || clGetProgramInfo(prog, CL_PROGRAM_CONTEXT, sizeof ctx, &ctx, nullptr) != CL_SUCCESS)
    return {};
  const char* text = src->c_str();
  cl_int err = CL_SUCCESS;
  cl_program copy = clCreateProgramWithSource(ctx, 1, &text, nullptr, &err);
  if (err != CL_SUCCESS) return {};
  std::vector<ArgFacts> out;
  const std::string opts = options + " -cl-kernel-arg-info";
  if (clBuildProgram(copy, 1, &dev, opts.c_str(), nullptr, nullptr) == CL_SUCCESS) {
    if (cl_kernel k = clCreateKernel(copy, name.c_str(), &err); err == CL_SUCCESS) {
      out = arg_facts(k, n);
      clReleaseKernel(k);
    }
  }
  clReleaseProgram(copy);
  return out;
}

}  // namespace

bool non_uniform_allowed(const DeviceInfo& device, const std::string& build_options) {
  if (!device.non_uniform_work_groups) return false;
  if (build_options.find("-cl-uniform-work-group-size") != std::string::npos) return false;
  return build_options.find("-cl-std=CL2.") != std::string::npos ||
         build_options.find("-cl-std=CL3.") != std::string::npos;
}

LocalSize KernelFacts::required_local(unsigned dims) const {
  if (required[0] == 0) return std::nullopt;
  return Extent{required[0], required[1], required[2], dims};
}

std::vector<cl_uint> KernelFacts::local_args() const {
  std::vector<cl_uint> out;
  for (cl_uint i = 0; i < args.size(); ++i)
    if (args[i].address == CL_KERNEL_ARG_ADDRESS_LOCAL) out.push_back(i);
  return out;
}

cl_device_id queue_device(cl_command_queue q) {
  cl_device_id d = nullptr;
  WSTUNE_CL_CHECK(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, nullptr));
  return d;
}

KernelFacts kernel_facts(cl_kernel k, cl_device_id dev, const DeviceInfo& info) {
  KernelFacts f;
  f.key.name = info_string([&](std::size_t n, void* v, std::size_t* r) {
                 return clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, n, v, r);
               }).value_or("");
  if (f.key.name.empty()) check(CL_INVALID_KERNEL, "clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME)");
  cl_program prog = nullptr;
  WSTUNE_CL_CHECK(clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof prog, &prog, nullptr));
  f.key.source_hash = program_hash(prog, dev);
  f.key.build_options = trim(info_string([&](std::size_t n, void* v, std::size_t* r) {
                               return clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_OPTIONS, n, v, r);
                             }).value_or(""));
  WSTUNE_CL_CHECK(
      clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof f.max_items, &f.max_items, nullptr));
  cl_ulong lm = 0;
  WSTUNE_CL_CHECK(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lm, &lm, nullptr));
  f.local_mem_bytes = lm;
  WSTUNE_CL_CHECK(
      clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof f.required, f.required, nullptr));
  WSTUNE_CL_CHECK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof f.num_args, &f.num_args, nullptr));
  f.args = arg_facts(k, f.num_args);
  if (f.args.empty() && f.num_args) f.args = arg_facts_rebuilt(prog, dev, f.key.name, f.key.build_options, f.num_args);
  f.arg_info = f.num_args == 0 || !f.args.empty();
  f.non_uniform = non_uniform_allowed(info, f.key.build_options);
  return f;
}

}  // namespace wstune::detail

namespace wstune::detail {

cl_int enqueue_ndrange(cl_command_queue q, cl_kernel k, const Extent& global, const LocalSize& local,
                       cl_event* event) noexcept {
  const std::size_t g[3] = {global.x, global.y, global.z};
  const std::size_t l[3] = {local ? local->x : 1, local ? local->y : 1, local ? local->z : 1};
  return clEnqueueNDRangeKernel(q, k, global.dims, nullptr, g, local ? l : nullptr, 0, nullptr, event);
}

}  // namespace wstune::detail
