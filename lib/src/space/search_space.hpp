#pragma once
/// @file search_space.hpp
/// What a tuning session searches. (1) The local-work-size space of one
/// kernel on one device for one global work size: every (x), (x, y) or (x, y, z) with x | global.x,
/// y | global.y and z | global.z
/// (all divisors, not only powers of two), within the device's max work-item
/// sizes, x·y ≤ min(device max work-group size, CL_KERNEL_WORK_GROUP_SIZE),
/// and the work-group's local memory fitting. (2) SearchSpace: the valid
/// configurations — tuning parameter values (T1 ConfigurationSpace, the
/// constraints applied before anything runs) times local sizes — with a
/// neighbourhood for local search. Pure: no OpenCL calls.
/// Source: paper §2.3 (a local dimension must divide the global one),
/// OpenCL 1.2 §5.8 clEnqueueNDRangeKernel (CL_INVALID_WORK_GROUP_SIZE,
/// CL_INVALID_WORK_ITEM_SIZE), §5.7.3 clGetKernelWorkGroupInfo.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "wstune/configuration.hpp"
#include "wstune/types.hpp"

namespace wstune {

/// The device and kernel limits that bound a local work size.
struct SpaceLimits {
  std::size_t max_work_group_size = 0;           ///< CL_DEVICE_MAX_WORK_GROUP_SIZE (work-items); 0 = no limit
  std::size_t kernel_work_group_size = 0;        ///< CL_KERNEL_WORK_GROUP_SIZE of the built kernel; 0 = unknown
  std::vector<std::size_t> max_work_item_sizes;  ///< CL_DEVICE_MAX_WORK_ITEM_SIZES per dimension; missing = no limit
  std::uint64_t local_mem_bytes = 0;             ///< CL_DEVICE_LOCAL_MEM_SIZE (bytes); 0 = not checked
  std::uint64_t kernel_local_mem_bytes = 0;  ///< CL_KERNEL_LOCAL_MEM_SIZE: fixed local memory of one work-group (bytes)
  std::uint64_t local_mem_per_item_bytes = 0;  ///< local memory one work-item adds (bytes; 0 for wstune's kernels)
  /// Local sizes need not divide the NDRange: the kernel guards its bounds
  /// (the NDRange is rounded up to a multiple of the local size) or the
  /// device runs non-uniform work-groups. Then each dimension's candidates
  /// are the divisors of the global size and the powers of two below twice it.
  bool any_shape = false;

  /// min(max_work_group_size, kernel_work_group_size), ignoring zeros (no
  /// limit); SIZE_MAX when both are zero.
  [[nodiscard]] std::size_t max_items() const noexcept;
};

/// All divisors of n in ascending order; empty for n == 0. O(√n).
std::vector<std::size_t> divisors(std::size_t n);

/// `global` rounded up, per dimension, to a multiple of `local`'s extent: the
/// NDRange that runs a bounds-guarded kernel with that local size.
Extent round_up(const Extent& global, const Extent& local);

/// True when `local` can run `global` under `limits`: at least global.dims
/// dimensions and 1 beyond them (a shape (x, 1) runs a 1-D NDRange), each
/// dimension non-zero and dividing the global one (unless limits.any_shape),
/// within max_work_item_sizes, count ≤ max_items(), local memory fitting.
bool fits(const Extent& local, const Extent& global, const SpaceLimits& limits) noexcept;

/// Every local size that fits() (with limits.any_shape: every combination of
/// each dimension's candidates that fits), ordered by z, then y, then x
/// (ascending), with global.dims dimensions. Empty when global has a zero.
std::vector<Extent> enumerate_local_sizes(const Extent& global, const SpaceLimits& limits);

/// The shapes in `space` with exactly `items` work-items, ordered by x
/// ascending (e.g. for 8: (1,8), (2,4), (4,2), (8,1); paper §2.3).
std::vector<Extent> shapes_of(std::size_t items, const std::vector<Extent>& space);

/// The configurations one tuning session may measure, apart from the
/// baseline (measured first, always): for a kernel without tuning parameters
/// the local sizes; otherwise every combination of parameter values that the
/// kernel's constraints allow, each with its local sizes (one, when the
/// parameters set it; else the NULL choice and every settable shape).
/// Entries are grouped by parameter combination ("parameter set"), in the
/// parameters' odometer order (the last parameter varies fastest), local
/// sizes in the order given. Immutable once built; cheap to copy by pointer.
class SearchSpace {
 public:
  /// The local sizes a parameter combination runs with (empty: the
  /// combination violates a constraint and is left out).
  using LocalSizes = std::function<std::vector<LocalSize>(const nlohmann::json& params)>;

  /// No configurations, baseline NULL.
  SearchSpace() = default;
  /// Local sizes only (no tuning parameters): `shapes` in order, the
  /// baseline NULL, and the paper's rule shape when it is one of `shapes`.
  SearchSpace(const std::vector<Extent>& shapes, const LocalSize& rule);
  /// Every combination of `parameters`' values with the local sizes
  /// `locals` gives it, except `baseline`; `rule` is found among them when
  /// given. Throws UsageError when more than `max_size` configurations
  /// result (narrow the parameters or add constraints).
  SearchSpace(std::vector<TuningParameter> parameters, const LocalSizes& locals, Configuration baseline,
              const std::optional<Configuration>& rule, std::size_t max_size = 10'000'000);

  /// Number of configurations (the baseline excluded).
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  /// True without configurations.
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  /// Configuration `i` (< size()).
  [[nodiscard]] Configuration at(std::size_t i) const;
  /// Configuration `i`'s local size.
  [[nodiscard]] const LocalSize& local(std::size_t i) const { return entries_.at(i).local; }
  /// Configuration `i`'s parameter set (< parameter_sets()).
  [[nodiscard]] std::size_t parameter_set(std::size_t i) const { return entries_.at(i).set; }
  /// Number of distinct parameter combinations (1 without parameters).
  [[nodiscard]] std::size_t parameter_sets() const noexcept { return set_first_.size(); }
  /// The values of parameter set `s`, as indices into each parameter's values.
  [[nodiscard]] std::span<const std::uint32_t> value_indices(std::size_t s) const;
  /// The parameter values of set `s` as a JSON object.
  [[nodiscard]] nlohmann::json params_of_set(std::size_t s) const;
  /// The configurations [first, last) of parameter set `s`.
  [[nodiscard]] std::pair<std::size_t, std::size_t> entries_of_set(std::size_t s) const;
  /// The tuning parameters (empty for local-size spaces).
  [[nodiscard]] const std::vector<TuningParameter>& parameters() const noexcept { return parameters_; }
  /// The configuration measured first, the reference every other is compared with.
  [[nodiscard]] const Configuration& baseline() const noexcept { return baseline_; }
  /// The paper's rule configuration's index, when it is in the space.
  [[nodiscard]] std::optional<std::size_t> rule() const noexcept { return rule_; }
  /// The index of `c`, nullopt when it is not in the space (the baseline is not).
  [[nodiscard]] std::optional<std::size_t> find(const Configuration& c) const;
  /// The parameter set of `params`, nullopt when the combination is not in the space.
  [[nodiscard]] std::optional<std::size_t> find_set(const nlohmann::json& params) const;
  /// Configurations one step from `i`: in the same parameter set, the next
  /// smaller or larger local extent in each dimension and their combinations
  /// (the divisor lattice) and the same-size reshapes next to it; in the
  /// parameter sets one value index away in one parameter, the configuration
  /// with the same local size (else that set's first).
  [[nodiscard]] std::vector<std::size_t> neighbours(std::size_t i) const;
  /// Every local shape of parameter set `s` (NULL left out).
  [[nodiscard]] std::vector<Extent> shapes_of_set(std::size_t s) const;

 private:
  struct Entry {
    std::uint32_t set = 0;
    LocalSize local;
  };
  std::string set_key(std::span<const std::uint32_t> idx) const;
  /// Appends `i`'s neighbours in the parameter sets one value index away in one parameter.
  void parameter_neighbours(std::size_t i, std::vector<std::size_t>& out) const;
  std::vector<TuningParameter> parameters_;
  std::vector<std::uint32_t> set_values_;                     // parameter_sets() × parameters_.size()
  std::vector<std::size_t> set_first_;                        // first entry of each set (entries are grouped)
  std::unordered_map<std::string, std::uint32_t> set_index_;  // set_key → set
  std::vector<Entry> entries_;
  Configuration baseline_;
  std::optional<std::size_t> rule_;
};

}  // namespace wstune
