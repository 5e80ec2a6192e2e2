#pragma once

#include "wstune/export.h"
/// @file lookup.hpp
/// The look-up chain that turns (device, kernel, global size) into a local
/// work size from the store: forced (WSTUNE_FORCE_LOCAL) → exact match →
/// nearest stored problem size → same architecture → same vendor and device
/// type → the paper's rule (§3.2.3) → NULL (the driver's choice). The answer
/// says which level matched. A kernel is its whole KernelKey (function name,
/// program hash, build options). Stored answers for other sizes are reused
/// only when they are near (problem_distance() ≤ a bound) and were a real
/// choice there (reusable()). Details and the distance: docs/store.md.
/// Tuning-parameter configurations of a kernel described by a tuning file
/// have the same stored levels (exact, nearest, architecture, vendor-type,
/// one implementation), then the file's Default values and the reference
/// configuration (Tuner::build_best, docs/app.md).

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
  required,      ///< the kernel's reqd_work_group_size (CL_KERNEL_COMPILE_WORK_GROUP_SIZE); set by Tuner, not by Lookup
  forced,        ///< WSTUNE_FORCE_LOCAL (or LookupOptions::forced) named the kernel
  exact,         ///< a stored best for this device, kernel and global size
  nearest,       ///< this device and kernel, the nearest stored global size whose shape is valid here
  architecture,  ///< another device of the same DeviceInfo::architecture
  vendor_type,   ///< another device of the same vendor and device type
  rule,          ///< the paper's §3.2.3 rule
  null_,         ///< the driver's choice (a NULL local_work_size)
  online,        ///< the fastest so far of an online session in progress (set by Tuner;
                 ///< TunerOptions::online_trials_per_launch); for Tuner::build_best, the
                 ///< best its online tuning stored in that call (BuildBestOnline)
  defaults,      ///< parameter chain: the tuning file's Default values (the first valid
                 ///< configuration at this size that takes every Default)
  reference      ///< parameter chain: the reference configuration (wstune.ReferenceConfiguration,
                 ///< else the first valid one at this size)
};

/// "required", "forced", "exact", "nearest", "architecture", "vendor-type", "rule", "null", "online",
/// "default", "reference".
WSTUNE_EXPORT std::string_view to_string(LookupLevel l) noexcept;

/// A look-up's answer.
struct LookupResult {
  LocalSize local;                         ///< the local size to enqueue with (nullopt = NULL)
  LookupLevel level = LookupLevel::null_;  ///< which level answered
  std::optional<BestConfig> from;          ///< the stored best it came from (stored levels only)
  double distance = 0;                     ///< problem_distance() to `from` (0 for exact)
};

/// The paper's rule as a pluggable function: the local size for a device,
/// kernel name and global size, with at most `max_items` work-items per
/// group; nullopt when the rule has no answer (the chain then says NULL).
using RuleFunction = std::function<std::optional<LocalSize>(const DeviceInfo& device, std::string_view kernel,
                                                            const Extent& global, std::size_t max_items)>;

/// The default rule level: the paper's §3.2.3 rule (wstune/rules.hpp) with
/// the kernel's priority (x for unknown 2-D kernels); an empty function
/// (skip to NULL) in builds without it.
WSTUNE_EXPORT RuleFunction paper_rule_function();

/// Distance between two global sizes of the same dimensionality, used to
/// pick the nearest stored problem: Σ over dimensions of |log2(a_d / b_d)|
/// (so 512 vs 1024 and 2048 vs 1024 are both 1; 1024x1024 vs 2048x512 is 2;
/// 64x64x8 vs 64x64x16 is 1).
WSTUNE_EXPORT double problem_distance(const Extent& a, const Extent& b);

/// How a local size may relate to the global size it runs.
enum class Remainder {
  divide,      ///< each local dimension divides the global one (OpenCL 1.x, uniform work-groups)
  pad,         ///< any local size: the NDRange is rounded up to a multiple (a bounds-guarded kernel)
  non_uniform  ///< each local dimension ≤ the global one; the last group is smaller
               ///< (OpenCL 2.0 §3.2 non-uniform work-groups)
};

/// What one kernel allows on one device besides the device's limits.
struct KernelFit {
  std::size_t max_items = 0;                ///< CL_KERNEL_WORK_GROUP_SIZE (work-items); 0 = device limits only
  Remainder remainder = Remainder::divide;  ///< whether local sizes must divide the global size
};

/// True when `local` may run `global` on `device`: each local dimension is
/// ≤ CL_DEVICE_MAX_WORK_ITEM_SIZES and relates to the global one as
/// `fit.remainder` says (divides it by default), the product is ≤
/// CL_DEVICE_MAX_WORK_GROUP_SIZE and ≤ `fit.max_items`, and the
/// dimensionality matches. NULL always fits.
/// Source: OpenCL 1.2 §5.8 (clEnqueueNDRangeKernel errors).
WSTUNE_EXPORT bool local_fits(const LocalSize& local, const Extent& global, const DeviceInfo& device,
                              const KernelFit& fit = {});

/// `global` rounded up, per dimension, to a multiple of `local` (the padded
/// NDRange of a bounds-guarded kernel); `global` itself for NULL.
WSTUNE_EXPORT Extent padded_global(const Extent& global, const LocalSize& local);

/// True when a stored best (`stored` local size at `stored_global`, medians
/// `median_ms` and `null_ms`) was a real choice that may serve other sizes:
/// it is a shape (not NULL), it beat NULL by `min_speedup` (null_ms /
/// median_ms ≥ min_speedup; unknown NULL time: false), and along every
/// dimension the stored problem offered alternatives: the local dimension
/// does not divide the stored global one (a padded or non-uniform choice),
/// or another divisor of it was within the device's limits. So local size 1
/// at a prime size (nothing else divides it) never serves another size.
WSTUNE_EXPORT bool reusable(const BestCandidate& stored, const DeviceInfo& device, const KernelFit& fit,
                            double min_speedup);

/// Parses "kernel=X[,Y];kernel=null;…" (the WSTUNE_FORCE_LOCAL syntax).
/// Throws UsageError naming `origin` when malformed.
WSTUNE_EXPORT std::map<std::string, LocalSize, std::less<>> parse_forced(std::string_view text,
                                                                         std::string_view origin);

/// How Lookup behaves.
struct LookupOptions {
  RuleFunction rule = paper_rule_function();  ///< the rule level; empty = skip to NULL
  /// Forced local sizes per kernel name; default: parsed from WSTUNE_FORCE_LOCAL.
  std::optional<std::map<std::string, LocalSize, std::less<>>> forced;
  bool cache = true;  ///< keep answers in memory
  /// The nearest, architecture and vendor-type levels serve a stored best
  /// of another size only within this problem_distance() (2: a factor of 4
  /// in one dimension, or of 2 in two).
  double max_distance = 2.0;
  /// ... and only when it beat NULL there by at least this factor (see reusable()).
  double min_speedup = 1.05;
};

/// The look-up chain over one Store, with an in-process cache (dropped when
/// this process records a best configuration through the same Store; call
/// clear_cache() to see other processes' new results). Not thread-safe: one
/// Lookup per thread, like Store.
class WSTUNE_EXPORT Lookup {
 public:
  /// Uses `store` (not owned; must outlive this). Throws UsageError when
  /// WSTUNE_FORCE_LOCAL is malformed.
  explicit Lookup(Store& store, LookupOptions options = {});
  ~Lookup();
  Lookup(const Lookup&) = delete;
  Lookup& operator=(const Lookup&) = delete;

  /// The local size for `kernel` (matched on the whole KernelKey) over
  /// `global` (1 to 3 dimensions) on `device`, valid for `fit` (the kernel's
  /// CL_KERNEL_WORK_GROUP_SIZE and remainder rule). Throws UsageError for an
  /// empty or 0-sized `global`, StoreError on a database failure.
  LookupResult find(const DeviceInfo& device, const KernelKey& kernel, const Extent& global, const KernelFit& fit = {});
  /// Forgets cached answers.
  void clear_cache();
  /// Number of cached answers.
  [[nodiscard]] std::size_t cache_size() const;
  /// The store.
  [[nodiscard]] Store& store() const noexcept;

 private:
  struct WSTUNE_NO_EXPORT Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wstune
