#pragma once
/// @file program_build.hpp
/// The one program build of libwstune: a kernel's program for one
/// configuration (its build options and the #define lines of its parameter
/// values), compiled for one device in one context, with its kernel object
/// and what OpenCL says about it, or the build log as data when it fails.
/// DeviceRunner builds every trial's program through it, and Tuner::build_best
/// the app's kernel in the app's own context, both through the persistent
/// program binary cache (program_cache/program_cache.hpp: keyed by device,
/// driver version, options and source). Internal to libwstune.

#include <string>

#include <CL/opencl.hpp>

#include "kernel/kernel.hpp"
#include "runner/runner.hpp"

namespace wstune {

/// What one program is built from.
struct ProgramSource {
  std::string options;  ///< clBuildProgram options
  std::string defines;  ///< lines put before the kernel's source (KernelSpec::source_defines), "" for none
  /// The program's key: distinct configurations are distinct programs.
  [[nodiscard]] std::string key() const { return defines.empty() ? options : options + '\n' + defines; }
};

/// The program source of `spec` for p.params on `device`: "-cl-std=CL1.2"
/// (the device's non-uniform standard when `non_uniform`), the kernel's own
/// options for p, `extra_options`, and its parameters' #define lines.
ProgramSource program_source(const KernelSpec& spec, const Problem& p, const DeviceInfo& device, bool non_uniform,
                             const std::string& extra_options = {});

/// One built program, or why it is not.
struct BuiltProgram {
  cl::Program program;       ///< the program (also after a failed build, for its log)
  cl::Kernel kernel;         ///< spec.entry_point() in it (empty when the build failed)
  KernelVariantInfo info;    ///< its options, work-group facts and clBuildProgram time
  std::string error;         ///< non-empty: the build failed (the call, the error name and the log)
  std::string call, log;     ///< of a failed build
  cl_int code = CL_SUCCESS;  ///< clBuildProgram's error of a failed build (CL_SUCCESS for other failures)
};

/// Builds `spec`'s program from `source` for `device` in `context` into
/// `out` through the program binary cache (a failed build or a missing
/// kernel is data: BuiltProgram::error); `warm` as the cache's
/// build_program() (the build pool's builders).
/// Thread-safe for distinct `out` objects (clBuildProgram of distinct
/// program objects; OpenCL 1.2 appendix A.2). Throws ClError when an
/// OpenCL call other than the build fails.
void build_program(const cl::Context& context, const cl::Device& device, const KernelSpec& spec,
                   const ProgramSource& source, BuiltProgram& out, bool warm = false);

}  // namespace wstune
