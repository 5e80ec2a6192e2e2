#pragma once
/// @file best_configuration.hpp
/// The look-up chain for tuning-parameter configurations: what to build a
/// kernel with (its parameters' values, local size and build options) for
/// a problem size on a device, whatever the store holds. Levels, in order:
/// exact (this device, kernel and size), nearest (another size on this
/// device), architecture, vendor-type (the stored levels of the local-size
/// chain, one implementation: store/stored_chain.hpp, with the same
/// distance bound and the same rule that only a best that beat its
/// baseline, the reference configuration, serves other sizes), the tuning
/// file's Default values, the reference configuration. A stored
/// configuration serves another size only when it is valid there (its
/// values among the file's Values, the Conditions hold at the new size, its
/// NDRange evaluates, its local size fits the device and the NDRange).
/// Models: CLBlast's database (device, architecture, vendor, default) and
/// Kernel Launcher's wisdom files (nearest size, then other devices).

#include <optional>
#include <string>

#include "kernel/kernel.hpp"
#include "wstune/configuration.hpp"
#include "wstune/lookup.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// A configuration ready to build with, and where it came from.
struct StoredConfiguration {
  Configuration config;  ///< its parameters and local size (nullopt: the driver's choice)
  /// "-cl-std=CL1.2", the kernel's own options (T1 CompilerOptions) and the
  /// parameters' -D values, for an application that builds the kernel
  /// file's source as it is (wstune's own builds put the values in #define
  /// lines before it instead, KernelSpec::source_defines()).
  std::string build_options;
  BestConfig row;                          ///< the stored row (stored levels; empty for default and reference)
  LookupLevel level = LookupLevel::exact;  ///< exact, nearest, architecture, vendor_type, defaults or reference
  double distance = 0;                     ///< problem_distance() to the stored row's size (0 otherwise)
};

/// The current best configuration of `spec` (identity: kernel_key()) for
/// problem `p` (its size text) on `device` (its fingerprint), or nullopt
/// when none is stored: the chain's exact level alone. Throws StoreError.
std::optional<StoredConfiguration> stored_configuration(const Store& store, const KernelSpec& spec, const Problem& p,
                                                        const DeviceInfo& device);

/// The chain's answer for `spec` at problem `p` on `device`: always one
/// (the reference configuration at worst); `store` may be null (then the
/// Default and reference levels only). `options`: max_distance and
/// min_speedup as for local sizes. Throws StoreError on a database
/// failure, UsageError when no configuration of `spec` is valid at `p`.
StoredConfiguration best_configuration(const Store* store, const KernelSpec& spec, const Problem& p,
                                       const DeviceInfo& device, const LookupOptions& options = {});

/// The configuration (`params`, stored local size `local`) as it runs `spec`
/// at `p` on `device`, or nullopt when it is not valid there (see the file
/// comment): the local size is the one the parameters set (T1 LocalSize),
/// else `local`. Never throws for an invalid configuration.
std::optional<Configuration> configuration_at(const KernelSpec& spec, const Problem& p, const DeviceInfo& device,
                                              const nlohmann::json& params, const LocalSize& local);

}  // namespace wstune
