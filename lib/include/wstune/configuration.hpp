#pragma once

#include "wstune/export.h"
/// @file configuration.hpp
/// Tuning parameters and configurations: what one trial runs. A
/// configuration is a value for each tuning parameter of a kernel (T1
/// `ConfigurationSpace.TuningParameters`; the `-D` values of its build and the
/// expressions of its NDRange) and a local work size. wstune's built-in
/// kernels and apps' kernels have no parameters: their configurations are
/// local sizes only.
/// Sources: TuningSchema T1 (ConfigurationSpace), Kernel Tuner's T4 results
/// schema ("configuration" objects), OpenCL 1.2 §5.8 (local_work_size).

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wstune/types.hpp"

namespace wstune {

/// One tuning parameter (T1 `TuningParameters[]`): a name and its values.
struct WSTUNE_EXPORT TuningParameter {
  std::string name;                    ///< a C identifier, passed to the build as `-D name=value`
  std::string type = "int";            ///< T1 Type: "int", "uint", "float", "bool" or "string"
  std::vector<nlohmann::json> values;  ///< the values, each a JSON number, bool or string, in file order
  /// The value's `-D` text: integers as written, floats in shortest
  /// round-trip form, bools as 1/0, strings as they are (a macro body).
  [[nodiscard]] static std::string define_text(const nlohmann::json& value);
};

/// One configuration: tuning parameter values and a local work size.
struct WSTUNE_EXPORT Configuration {
  /// name → value (JSON number, bool or string); empty without parameters.
  nlohmann::json params = nlohmann::json::object();
  /// The local work size (nullopt: the driver's choice, a NULL local_work_size).
  LocalSize local;
  /// configuration_key(params, local).
  [[nodiscard]] std::string key() const;
  friend bool operator==(const Configuration&, const Configuration&) = default;
};

/// The key of one configuration (the store's trials.config column and every
/// map of measured configurations): the local size ("null", "256", "32x8",
/// "8x4x2") when `params` is empty, else "NAME=VALUE,…;LOCAL" with the
/// parameters in name order and each value as JSON (e.g.
/// `MODE="a",TILE=16,VEC=true;16x16`). Unique per configuration.
WSTUNE_EXPORT std::string configuration_key(const nlohmann::json& params, const LocalSize& local);

/// "TILE=16 VEC=4 local=16x16" for people (parameters in name order).
WSTUNE_EXPORT std::string to_string(const Configuration& c);

/// `-D NAME=VALUE` options for every parameter (space-separated, name order),
/// for clBuildProgram (OpenCL 1.2 §5.6.4.1 preprocessor options).
WSTUNE_EXPORT std::string define_options(const nlohmann::json& params);

/// The same values as `#define NAME VALUE` lines, one per parameter, each
/// ending in a newline ("" without parameters): what wstune puts before a
/// described kernel's source when it builds a configuration (after the
/// OpenCL implementation's implicit header, so a parameter named like an
/// identifier of that header, e.g. `read_only`, cannot break it).
WSTUNE_EXPORT std::string define_lines(const nlohmann::json& params);

}  // namespace wstune
