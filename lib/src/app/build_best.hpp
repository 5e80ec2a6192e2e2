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
  /// See Tuner::build_best; `device` is `queue`'s device model, `online`
  /// the online tuning of the parameters (checked by the Tuner).
  BuiltKernel build(Store& store, const LookupOptions& options, const BuildBestOnline& online, const DeviceInfo& device,
                    cl_command_queue queue, const std::string& tuning_file, const std::string& size);

 private:
  std::map<std::string, std::shared_ptr<const KernelSpec>> specs_;  // by file path
  std::map<std::string, BuiltProgram> programs_;                    // by device, context and program key
  std::map<std::string, bool> tried_online_;  // device, file and size tuned online (or tried) in this Tuner
};

}  // namespace wstune::detail
