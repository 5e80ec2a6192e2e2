#pragma once
/// @file search_space.hpp
/// What a tuning session searches. (1) The local-work-size space of one
/// kernel on one device for one global work size: every (x), (x, y) or (x, y, z) with x | global.x,
/// y | global.y and z | global.z
/// (all divisors, not only powers of two), within the device's max work-item
/// sizes, x·y ≤ min(device max work-group size, CL_KERNEL_WORK_GROUP_SIZE),
/// and the work-group's local memory fitting. (2) SearchSpace: the valid
/// configurations — tuning parameter values (T1 ConfigurationSpace, the
/// constraints applied before anything runs, by the solver in solver.hpp)
/// times local sizes — with a neighbourhood for local search. Pure: no
/// OpenCL calls.
/// Source: paper §2.3 (a local dimension must divide the global one),
/// OpenCL 1.2 §5.8 clEnqueueNDRangeKernel (CL_INVALID_WORK_GROUP_SIZE,
/// CL_INVALID_WORK_ITEM_SIZE), §5.7.3 clGetKernelWorkGroupInfo.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "space/parameter_sets.hpp"
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
/// kernel's constraints allow (solved by SpaceSolver, space/solver.hpp),
/// each with its local sizes (one, when the parameters set it; else the
/// NULL choice and every settable shape). Entries are grouped by parameter
/// combination ("parameter set"), in the parameters' odometer order (the
/// last parameter varies fastest), local sizes in the order given.
///
/// Held compactly, with no object per configuration: the parameter sets as
/// rows of value indices (ParameterSets, 1 byte per parameter when no
/// parameter has more than 256 values), each distinct list of local sizes
/// once; when every set runs the same list (the common case) nothing else
/// is stored per set, otherwise 12 bytes a set (its first entry and its
/// list). Configuration i is found from its index in O(1) (one list) or
/// O(log sets), a parameter set from its values by binary search.
/// Immutable once built; cheap to move.
class SearchSpace {
 public:
  /// Puts into `out` (which arrives empty) the local sizes the parameter
  /// set with these value indices (one per parameter) runs with; leaving it
  /// empty leaves the set out (a constraint that only the local sizes
  /// express, e.g. a local size the device cannot run).
  using LocalsOf = std::function<void(std::span<const std::uint32_t> value_indices, std::vector<LocalSize>& out)>;

  /// No configurations, baseline NULL.
  SearchSpace() = default;
  /// Local sizes only (no tuning parameters): `shapes` in order, the
  /// baseline NULL, and the paper's rule shape when it is one of `shapes`.
  SearchSpace(const std::vector<Extent>& shapes, const LocalSize& rule);
  /// The parameter sets `sets` (rows over `parameters`' values, in odometer
  /// order: what SpaceSolver::solve() gives) with the local sizes `locals`
  /// gives each, except `baseline`; `rule` is found among them when given.
  /// No size is refused: memory grows with the valid configurations only
  /// (see memory_bytes()).
  /// @throws std::invalid_argument when `sets` is not over `parameters`' value counts or not sorted
  SearchSpace(std::vector<TuningParameter> parameters, ParameterSets sets, const LocalsOf& locals,
              Configuration baseline, const std::optional<Configuration>& rule);
  /// As above when every set runs the same local sizes `every_set` (the
  /// NDRange and the local size depend on no parameter): nothing is asked
  /// or stored per set.
  SearchSpace(std::vector<TuningParameter> parameters, ParameterSets sets, std::vector<LocalSize> every_set,
              Configuration baseline, const std::optional<Configuration>& rule);

  /// Number of configurations (the baseline excluded).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// True without configurations.
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// Configuration `i` (< size()); throws std::out_of_range beyond.
  [[nodiscard]] Configuration at(std::size_t i) const;
  /// Configuration `i`'s local size; throws std::out_of_range beyond.
  [[nodiscard]] const LocalSize& local(std::size_t i) const;
  /// Configuration `i`'s parameter set (< parameter_sets()); throws std::out_of_range beyond.
  [[nodiscard]] std::size_t parameter_set(std::size_t i) const;
  /// Number of distinct parameter combinations (1 without parameters).
  [[nodiscard]] std::size_t parameter_sets() const noexcept { return sets_.size(); }
  /// The values of parameter set `s`, as indices into each parameter's values.
  [[nodiscard]] std::vector<std::uint32_t> value_indices(std::size_t s) const;
  /// The parameter sets as rows of value indices.
  [[nodiscard]] const ParameterSets& sets() const noexcept { return sets_; }
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
  /// Bytes the space holds (rows, local-size lists, per-set tables).
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

 private:
  // Where configuration i lies: its set and its position in the set's list.
  struct Place {
    std::size_t set = 0;
    std::size_t pos = 0;
  };
  [[nodiscard]] Place place(std::size_t i) const;
  [[nodiscard]] const std::vector<LocalSize>& list_of(std::size_t s) const;
  void lay_out(std::vector<std::uint32_t> ids, std::optional<std::pair<std::size_t, std::size_t>> hole);
  [[nodiscard]] std::optional<std::uint32_t> one_list(const std::vector<std::uint32_t>& ids,
                                                      std::optional<std::pair<std::size_t, std::size_t>> hole) const;
  [[nodiscard]] std::optional<std::size_t> baseline_set() const;
  void check_sets() const;
  /// Appends `i`'s neighbours in the parameter sets one value index away in one parameter.
  void parameter_neighbours(std::size_t i, std::vector<std::size_t>& out) const;

  std::vector<TuningParameter> parameters_;
  ParameterSets sets_;
  std::vector<std::vector<LocalSize>> lists_;  // each distinct list of local sizes once
  // One list for every set (uniform): entries are sets × per_set_, less the
  // baseline's entry at virtual index hole_. Otherwise per set its first
  // entry (and a last sentinel) and its list.
  std::size_t per_set_ = 0;
  std::optional<std::size_t> hole_;
  std::vector<std::uint64_t> set_first_;
  std::vector<std::uint32_t> set_list_;
  std::size_t size_ = 0;
  Configuration baseline_;
  std::optional<std::size_t> rule_;
};

}  // namespace wstune
