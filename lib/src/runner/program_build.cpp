// The one program build (program_build.hpp).
#include "runner/program_build.hpp"

#include <array>
#include <chrono>

#include <fmt/format.h>

#include "program_cache/program_cache.hpp"
#include "wstune/error.hpp"
#include "wstune/timing.hpp"

namespace wstune {

ProgramSource program_source(const KernelSpec& spec, const Problem& p, const DeviceInfo& device, bool non_uniform,
                             const std::string& extra_options) {
  std::string o = non_uniform ? device.non_uniform_std() : std::string("-cl-std=CL1.2");
  for (const std::string& extra : {spec.build_options(p), extra_options})
    if (!extra.empty()) o += ' ' + extra;
  return {o, spec.source_defines(p)};
}

void build_program(const cl::Context& context, const cl::Device& device, const KernelSpec& spec,
                   const ProgramSource& source, BuiltProgram& out, bool warm) {
  const std::string& options = source.options;
  out.info.build_options = options;
  // The defines, then the source from its line 1 (build logs give the kernel file's line numbers).
  const std::string text =
      source.defines.empty() ? std::string(spec.source()) : source.defines + "#line 1\n" + std::string(spec.source());
  ProgramBuild built = build_program(context, device, text, options, nullptr, warm);
  out.program = std::move(built.program);
  out.info.compile_ms = built.ms;
  out.info.from_cache = built.origin != ProgramOrigin::source;
  if (built.code != CL_SUCCESS) {
    out.log = std::move(built.log);
    std::string values;  // the parameters' values, from their #define lines
    for (std::size_t at = 0; (at = source.defines.find("#define ", at)) != std::string::npos;) {
      const std::size_t end = source.defines.find('\n', at);
      std::string d = source.defines.substr(at + 8, end - at - 8);
      if (const auto sp = d.find(' '); sp != std::string::npos) d[sp] = '=';
      values += (values.empty() ? "" : ",") + d;
      at = end;
    }
    out.call = values.empty() ? fmt::format("clBuildProgram({}, \"{}\")", spec.source_name(), options)
                              : fmt::format("clBuildProgram({} with {}, \"{}\")", spec.source_name(), values, options);
    out.code = built.code;
    out.error = fmt::format("{}\n{}", BuildError(out.call, out.code, out.log).what(), out.log);
    return;
  }
  cl_int err = CL_SUCCESS;
  out.kernel = cl::Kernel(out.program, std::string(spec.entry_point()).c_str(), &err);
  if (err != CL_SUCCESS) {
    out.error =
        fmt::format("clCreateKernel({}): {} — is the kernel name right?", spec.entry_point(), cl_error_name(err));
    return;
  }
  WSTUNE_CL_CHECK(out.kernel.getWorkGroupInfo(device, CL_KERNEL_WORK_GROUP_SIZE, &out.info.work_group_size));
  cl_ulong lmem = 0;
  WSTUNE_CL_CHECK(out.kernel.getWorkGroupInfo(device, CL_KERNEL_LOCAL_MEM_SIZE, &lmem));
  out.info.local_mem_bytes = lmem;
  std::array<std::size_t, 3> reqd{};
  WSTUNE_CL_CHECK(clGetKernelWorkGroupInfo(out.kernel(), device(), CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof reqd,
                                           reqd.data(), nullptr));
  if (reqd[0] != 0)
    out.info.required_local = Extent{reqd[0], reqd[1], reqd[2], reqd[2] > 1 ? 3u : reqd[1] > 1 ? 2u : 1u};
}

}  // namespace wstune
