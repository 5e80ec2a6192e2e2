#pragma once
// Tuner::build_best's state and work (tuner.hpp): tuning files read once,
// programs built once per device, context and options. Internal to libwstune.
#include <map>
#include <memory>
#include <string>

#include "kernel/kernel.hpp"
#include "runner/program_build.hpp"
#include "wstune/tuner.hpp"

namespace wstune::detail {

/// Builds tuning-file kernels with the parameter chain's configuration.
class BestKernelBuilder {
 public:
  /// See Tuner::build_best; `device` is `queue`'s device model.
  BuiltKernel build(const Store& store, const LookupOptions& options, const DeviceInfo& device, cl_command_queue queue,
                    const std::string& tuning_file, const std::string& size);

 private:
  std::map<std::string, std::shared_ptr<const KernelSpec>> specs_;  // by file path
  std::map<std::string, BuiltProgram> programs_;                    // by device, context and program key
};

}  // namespace wstune::detail
