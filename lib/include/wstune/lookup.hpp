#pragma once
/// @file lookup.hpp
/// The look-up chain that turns (device, kernel, global size) into a local
/// work size from the store: forced (WSTUNE_FORCE_LOCAL) → exact match →
/// nearest stored problem size → same architecture → same vendor and device
/// type → the paper's rule (§3.2.3) → NULL (the driver's choice). The answer
/// says which level matched. Details and the distance: docs/store.md.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "wstune/device.hpp"
#include "wstune/store.hpp"
#include "wstune/types.hpp"

namespace wstune {

/// Which level of the look-up chain answered.
enum class LookupLevel {
  forced,        ///< WSTUNE_FORCE_LOCAL (or LookupOptions::forced) named the kernel
  exact,         ///< a stored best for this device, kernel and global size
  nearest,       ///< this device and kernel, the nearest stored global size whose shape is valid here
  architecture,  ///< another device of the same DeviceInfo::architecture
  vendor_type,   ///< another device of the same vendor and device type
  rule,          ///< the paper's §3.2.3 rule
  null_          ///< the driver's choice (a NULL local_work_size)
};

/// "forced", "exact", "nearest", "architecture", "vendor-type", "rule", "null".
std::string_view to_string(LookupLevel l) noexcept;

/// A look-up's answer.
struct LookupResult {
  LocalSize local;                       ///< the local size to enqueue with (nullopt = NULL)
  LookupLevel level = LookupLevel::null_;  ///< which level answered
  std::optional<BestConfig> from;        ///< the stored best it came from (stored levels only)
  double distance = 0;                   ///< problem_distance() to `from` (0 for exact)
};

/// The paper's rule as a pluggable function: the local size for a device,
/// kernel name and global size, with at most `max_items` work-items per
/// group; nullopt when the rule has no answer (the chain then says NULL).
using RuleFunction = std::function<std::optional<LocalSize>(const DeviceInfo& device, std::string_view kernel,
                                                            const Extent& global, std::size_t max_items)>;

/// The default rule level: the paper's §3.2.3 rule (wstune/rules.hpp) with
/// the kernel's priority (x for unknown 2-D kernels); an empty function
/// (skip to NULL) in builds without it.
RuleFunction paper_rule_function();

/// Distance between two global sizes of the same dimensionality, used to
/// pick the nearest stored problem: Σ over dimensions of |log2(a_d / b_d)|
/// (so 512 vs 1024 and 2048 vs 1024 are both 1; 1024x1024 vs 2048x512 is 2).
double problem_distance(const Extent& a, const Extent& b);

/// True when `local` may run `global` on `device`: each local dimension
/// divides the global one and is ≤ CL_DEVICE_MAX_WORK_ITEM_SIZES, the product
/// is ≤ CL_DEVICE_MAX_WORK_GROUP_SIZE and ≤ `max_items` (0 = no kernel
/// limit), and the dimensionality matches. NULL always fits.
/// Source: OpenCL 1.2 §5.8 (clEnqueueNDRangeKernel errors).
bool local_fits(const LocalSize& local, const Extent& global, const DeviceInfo& device, std::size_t max_items = 0);

/// Parses "kernel=X[,Y];kernel=null;…" (the WSTUNE_FORCE_LOCAL syntax).
/// Throws UsageError naming `origin` when malformed.
std::map<std::string, LocalSize, std::less<>> parse_forced(std::string_view text, std::string_view origin);

/// How Lookup behaves.
struct LookupOptions {
  RuleFunction rule = paper_rule_function();  ///< the rule level; empty = skip to NULL
  /// Forced local sizes per kernel name; default: parsed from WSTUNE_FORCE_LOCAL.
  std::optional<std::map<std::string, LocalSize, std::less<>>> forced;
  bool cache = true;                 ///< keep answers in memory
};

/// The look-up chain over one Store, with an in-process cache (dropped when
/// this process records a best configuration through the same Store; call
/// clear_cache() to see other processes' new results). Not thread-safe: one
/// Lookup per thread, like Store.
class Lookup {
 public:
  /// Uses `store` (not owned; must outlive this). Throws UsageError when
  /// WSTUNE_FORCE_LOCAL is malformed.
  explicit Lookup(Store& store, LookupOptions options = {});
  ~Lookup();
  Lookup(const Lookup&) = delete;
  Lookup& operator=(const Lookup&) = delete;

  /// The local size for `kernel` (its function name) over `global` on
  /// `device`; `max_items` is the kernel's CL_KERNEL_WORK_GROUP_SIZE (0 =
  /// only the device limits). Throws StoreError on a database failure.
  LookupResult find(const DeviceInfo& device, std::string_view kernel, const Extent& global,
                    std::size_t max_items = 0);
  /// Forgets cached answers.
  void clear_cache();
  /// Number of cached answers.
  [[nodiscard]] std::size_t cache_size() const;
  /// The store.
  [[nodiscard]] Store& store() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wstune
