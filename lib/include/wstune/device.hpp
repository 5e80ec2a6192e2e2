#pragma once

#include "wstune/export.h"
/// @file device.hpp
/// The OpenCL device model: platforms, devices, compute units (CU) and
/// processing elements (PE) per CU, and device selection.
/// Source: paper §2.1 (CU/PE model) and §3.1 (PE counts drive the split);
/// OpenCL 1.2 §4.2 clGetDeviceInfo.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CL/opencl.hpp>

namespace wstune {

/// Where a device's PEs-per-CU figure came from.
enum class PeSource {
  extension,  ///< a vendor extension query (NVIDIA cc table, AMD SIMD query, Intel EU query)
  table,      ///< a table keyed by a name or architecture
  estimate,   ///< a heuristic (CPU native float vector width, GPU preferred multiple)
  override_   ///< the user's override file or WSTUNE_PE_PER_CU
};

/// "extension", "table", "estimate" or "override".
WSTUNE_EXPORT std::string_view to_string(PeSource s) noexcept;

/// Everything wstune knows about one OpenCL device. Sizes in bytes, clocks in
/// MHz, work sizes in work-items.
struct WSTUNE_EXPORT DeviceInfo {
  unsigned platform_index = 0;                   ///< index in clGetPlatformIDs order
  unsigned device_index = 0;                     ///< index within its platform
  std::string platform;                          ///< CL_PLATFORM_NAME
  std::string name;                              ///< CL_DEVICE_NAME
  std::string vendor;                            ///< CL_DEVICE_VENDOR
  std::string type;                              ///< "gpu", "cpu", "accelerator", "custom" or "other"
  std::string driver_version;                    ///< CL_DRIVER_VERSION
  std::string opencl_version;                    ///< CL_DEVICE_VERSION
  std::string architecture;                      ///< "sm_90", "gfx90a", "intel-ip-…", or "" if unknown
  unsigned compute_units = 0;                    ///< CL_DEVICE_MAX_COMPUTE_UNITS
  unsigned pe_per_cu = 0;                        ///< processing elements per compute unit
  PeSource pe_source = PeSource::estimate;       ///< where pe_per_cu came from
  std::string pe_detail;                         ///< e.g. "cl_nv_device_attribute_query: cc 9.0"
  unsigned max_clock_mhz = 0;                    ///< CL_DEVICE_MAX_CLOCK_FREQUENCY
  std::size_t max_work_group_size = 0;           ///< CL_DEVICE_MAX_WORK_GROUP_SIZE
  std::vector<std::size_t> max_work_item_sizes;  ///< CL_DEVICE_MAX_WORK_ITEM_SIZES
  std::uint64_t local_mem_bytes = 0;             ///< CL_DEVICE_LOCAL_MEM_SIZE
  std::uint64_t global_mem_bytes = 0;            ///< CL_DEVICE_GLOBAL_MEM_SIZE
  std::size_t preferred_wg_multiple = 0;         ///< CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE of a trivial kernel
  unsigned native_float_width = 0;               ///< CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT
  std::vector<std::string> extensions;           ///< CL_DEVICE_EXTENSIONS, split
  /// The device runs NDRanges whose size is not a multiple of the local size
  /// (non-uniform work-groups: mandatory in OpenCL 2.x, optional in 3.0 as
  /// CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT; OpenCL 3.0 §4.2), for
  /// programs built with -cl-std=CL2.0 or later (non_uniform_std()).
  bool non_uniform_work_groups = false;

  /// compute_units × pe_per_cu: the paper's "total PEs" (Table 2).
  [[nodiscard]] std::uint64_t total_pe() const noexcept { return std::uint64_t{compute_units} * pe_per_cu; }
  /// The -cl-std option that enables non-uniform work-groups on this device
  /// ("-cl-std=CL2.0" or "-cl-std=CL3.0"), "" when it has none.
  [[nodiscard]] std::string non_uniform_std() const;
  /// "P:D", the selector that picks exactly this device.
  [[nodiscard]] std::string id() const;
  /// A stable identity for the database: vendor, name, driver version and
  /// CU count, hashed to 16 hex digits (FNV-1a 64). Independent of index order.
  [[nodiscard]] std::string fingerprint() const;
};

/// FP32 cores per streaming multiprocessor for an NVIDIA compute capability
/// (major.minor), from NVIDIA's CUDA C Programming Guide, "Arithmetic
/// Instructions" throughput table: 1.x → 8, 2.0 → 32, 2.1 → 48, 3.x → 192,
/// 5.x → 128, 6.0 → 64, 6.1/6.2 → 128, 7.x → 64, 8.0 → 64, 8.6/8.7/8.9 → 128,
/// 9.0 → 128, 10.x/12.x → 128. std::nullopt for an unknown capability.
WSTUNE_EXPORT std::optional<unsigned> nvidia_fp32_cores_per_sm(unsigned major, unsigned minor) noexcept;

/// PEs per CU for AMD from cl_amd_device_attribute_query: SIMDs per CU ×
/// SIMD width × instruction width (e.g. GCN: 4 × 16 × 1 = 64).
WSTUNE_EXPORT unsigned amd_pe_per_cu(unsigned simd_per_cu, unsigned simd_width, unsigned instruction_width) noexcept;

/// User overrides of PEs per CU, keyed by a device-name substring
/// (case-insensitive; the longest matching key wins).
///
/// Sources, later ones winning: the file named by WSTUNE_PE_FILE, else
/// $XDG_CONFIG_HOME/wstune/pe.conf (~/.config/wstune/pe.conf); then the
/// environment variable WSTUNE_PE_PER_CU="substring=N[;substring=N…]".
/// File format (Boost.Program_options config syntax, '#' comments):
/// @code
/// [pe_per_cu]
/// H100 = 128
/// pthread = 8
/// @endcode
class WSTUNE_EXPORT PeOverrides {
 public:
  /// No overrides.
  PeOverrides() = default;
  /// Reads the file and environment as described above. Throws UsageError
  /// naming the file or variable when an entry is malformed.
  static PeOverrides from_environment();
  /// Parses config-file text (format above). `origin` names it in errors.
  static PeOverrides parse_file_text(std::string_view text, std::string_view origin);
  /// Parses "substring=N;substring=N". `origin` names it in errors.
  static PeOverrides parse_env_text(std::string_view text, std::string_view origin);
  /// Adds or replaces one override.
  void set(std::string key, unsigned pe_per_cu);
  /// Adds all of `other`'s entries, replacing equal keys.
  void merge(const PeOverrides& other);
  /// The override for a device name, if a key matches.
  [[nodiscard]] std::optional<unsigned> lookup(std::string_view device_name) const;
  /// Number of entries.
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

 private:
  std::map<std::string, unsigned> entries_;  // lower-case key → PEs per CU
};

/// One OpenCL device with its model.
struct Device {
  cl::Platform platform;  ///< its platform
  cl::Device device;      ///< the OpenCL handle
  DeviceInfo info;        ///< the queried model
};

/// Queries the model of one device. PE-per-CU resolution order: user
/// override, vendor extension, CPU estimate, GPU estimate. Throws ClError.
WSTUNE_EXPORT DeviceInfo query_device_info(const cl::Platform& platform, const cl::Device& device,
                                           unsigned platform_index, unsigned device_index,
                                           const PeOverrides& overrides);

/// Every device of every platform, in (platform, device) index order. An
/// absent ICD or no platform gives an empty list, not an error.
WSTUNE_EXPORT std::vector<Device> enumerate_devices(const PeOverrides& overrides = PeOverrides::from_environment());

/// Picks devices by a selector: "P:D" (platform:device index), "cpu", "gpu",
/// "all", or a case-insensitive substring of the device or platform name.
/// "default" (or empty) picks the first GPU, else the first device.
/// Throws UsageError that lists the devices when nothing matches.
WSTUNE_EXPORT std::vector<Device> select_devices(const std::vector<Device>& all, std::string_view selector);

/// select_devices() that must match exactly one device, the first of several
/// when the selector is "cpu", "gpu" or a name; throws UsageError otherwise.
WSTUNE_EXPORT Device select_device(const std::vector<Device>& all, std::string_view selector);

}  // namespace wstune
