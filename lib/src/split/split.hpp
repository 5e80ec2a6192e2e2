#pragma once
/// @file split.hpp
/// Splitting one NDRange across unlike devices: the paper's PE-ratio
/// correction model, the PE-proportional baseline, and a measured model that
/// makes the devices finish together. Pure functions (no OpenCL calls).
/// Source: paper §3.1 (global work size across devices), §4 (split
/// direction); Qilin's adaptive mapping (Luk et al., MICRO 2009) and StarPU's
/// history-based performance models for the measured model. See docs/split.md.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/host_buffer.hpp"
#include "wstune/types.hpp"

namespace wstune {

class KernelSpec;
struct Problem;

/// How shares are chosen.
enum class SplitModel {
  pe_ratio,      ///< the paper's PE-ratio correction model (§3.1)
  proportional,  ///< shares proportional to total PEs (the paper's baseline, §4)
  measured,      ///< from calibration runs: the devices finish together
  even           ///< 1/n of the range each, whatever the devices (wstuned's baseline)
};

/// "pe-ratio", "proportional", "measured" or "even".
std::string_view to_string(SplitModel m) noexcept;
/// Inverse of to_string(SplitModel); throws UsageError listing the names.
SplitModel parse_split_model(std::string_view text);

/// Which NDRange dimension the slices cut.
enum class SplitDirection {
  x,     ///< column blocks (dimension 0); the only choice for 1-D kernels
  y,     ///< row blocks (dimension 1), the paper's split (§3.1.1)
  auto_  ///< from the kernel's priority, see split_dimension()
};

/// "x", "y" or "auto".
std::string_view to_string(SplitDirection d) noexcept;
/// Inverse of to_string(SplitDirection); throws UsageError naming `what`.
SplitDirection parse_split_direction(std::string_view text, std::string_view what = "--direction");

/// The dimension (0 = x, 1 = y) to cut for a kernel with `dims` dimensions and
/// priority `priority`. x and y are taken as asked (y on a 1-D kernel throws
/// UsageError). auto keeps each work-group's data-sharing direction whole:
/// x-priority (neighbours in x share data, matmul) → cut along y (row
/// blocks, whole rows per device); y-priority (bilinear) → cut along x
/// (column blocks, whole columns per device); 1-D → x. The paper always cut
/// along y and blames that for its bilinear failure (§4).
unsigned split_dimension(unsigned dims, Priority priority, SplitDirection direction);

/// The dimension (0, 1 or 2) a kernel's own split description fixes: a
/// tuning file's wstune.Split.Dimension; std::nullopt for a kernel without
/// one (the built-in kernels, a tuning file without wstune.Split).
std::optional<unsigned> described_split_dim(const KernelSpec& spec);

/// The split dimension of `wstune split` (its --direction) for `spec`:
/// described_split_dim() when the kernel fixes one, else
/// split_dimension(spec.dims(), spec.priority(), direction) (which checks
/// `direction` either way).
unsigned split_dimension(const KernelSpec& spec, SplitDirection direction);

/// The paper's compute classes (§3.1.2).
enum class ComputeClass {
  small,   ///< C ≤ 4×10^8
  medium,  ///< 4×10^8 < C < 8×10^11
  large    ///< C ≥ 8×10^11
};

/// "small", "medium" or "large".
std::string_view to_string(ComputeClass c) noexcept;
/// The class of a compute amount C (operations, KernelSpec::compute_amount).
/// Source: paper §3.1.2.
ComputeClass compute_class(double compute_amount) noexcept;
/// The correction factor k of a class: 1.25 (small), 0.75 (medium), 0.25
/// (large). Source: paper §3.1.2.
double correction_k(ComputeClass c) noexcept;

/// The paper's two-device rule: the fraction of the work for the device with
/// fewer PEs (`pe_small` ≤ `pe_large`, total PEs). 0.5 when the counts are
/// closer than 2:3 (3·pe_small > 2·pe_large, i.e. PE_ratio_S > 2/5), else
/// PE_ratio_S × k (eq. 3; eq. 4 gives the rest to the larger one).
/// Throws UsageError if a count is 0 or pe_small > pe_large.
double pe_ratio_small_fraction(std::uint64_t pe_small, std::uint64_t pe_large, ComputeClass c);

/// The paper's model for any number of devices: fractions (summing to 1) in
/// the order of `total_pe`. Two devices: pe_ratio_small_fraction(). Three or
/// more: sort by PE count (stable), apply the two-device rule to each
/// adjacent pair (smallest and next smallest, then each next pair) and chain
/// the pairwise ratios into one continued ratio (連比), normalised. A single
/// device gets 1. Throws UsageError for an empty list or a zero count.
/// Source: paper §3.1.2.
std::vector<double> pe_ratio_fractions(const std::vector<std::uint64_t>& total_pe, double compute_amount);

/// Fractions proportional to total PEs (the paper's baseline). Throws
/// UsageError for an empty list or a zero count.
std::vector<double> proportional_fractions(const std::vector<std::uint64_t>& total_pe);

/// Turns fractions into blocks of a range of `total_units` split units along
/// `dim`. Each device's slice is floor(fraction × total) rounded down to a
/// multiple of its granularity (split units; see split_granularity()); the
/// remainder then goes, one granularity at a time, to the device whose slice
/// is furthest below its target among those whose granularity still fits
/// (devices with a positive fraction first). With granularity 1 and two devices this is
/// exactly the paper's eq. (3)–(4). Blocks are contiguous in device order;
/// a device with nothing gets an empty block (begin == end). Throws
/// UsageError when sizes differ, a granularity is 0, or the remainder fits
/// no device (name the fix: a local size dividing the problem, or null).
std::vector<Block> align_blocks(const std::vector<double>& fractions, std::size_t total_units, unsigned dim,
                                const std::vector<std::size_t>& granularity);

/// Whether `blocks` tile a range of `total_units` along `dim` in order:
/// each along `dim`, the first beginning at 0, each beginning where the one
/// before ends (empty blocks allowed), the last ending at `total_units`.
/// False for no blocks.
bool blocks_tile(const std::vector<Block>& blocks, unsigned dim, std::size_t total_units);

/// The smallest granularity (split units) of a device's slice along `dim`,
/// without the problem: its local size along `dim` (1 for the driver's
/// choice) × units per work-item (KernelSpec::units_per_work_item: 2 elements
/// per work-item for sort). A kernel that guards its bounds
/// (KernelSpec::guards_bounds: its NDRange is rounded up to a multiple of the
/// local size) has units per work-item whatever the local size. Unlike the
/// overload with the problem below, the driver's choice gets no alignment:
/// wstuned falls back to this when its own steps do not divide the range.
std::size_t split_granularity(const KernelSpec& spec, unsigned dim, const LocalSize& local);

/// Caps of the alignment that slices run with the driver's choice of local
/// size (a null local) keep to, in work-items along the split dimension: a
/// 1-D NDRange's work-groups lie along its one dimension (warps of 32 on
/// NVIDIA, so up to 64), a 2-D or 3-D one's are typically 8–32 work-items
/// along each dimension.
inline constexpr std::size_t kDriverAlignment1d = 64;
inline constexpr std::size_t kDriverAlignmentNd = 16;
/// The alignment never leaves fewer granules than this in the whole range
/// (resolution of the split at least 1/256 of it).
inline constexpr std::size_t kDriverMinGranules = 256;

/// split_granularity() with the problem's parameters, in split units along
/// `dim`:
/// - a set local size: KernelSpec::slice_multiple(p, dim) × its extent along
///   `dim` (1 for a kernel that guards its bounds, whose NDRange is rounded up);
/// - the driver's choice (std::nullopt): slice_multiple × the largest power of
///   two up to kDriverAlignment1d (1-D NDRange) or kDriverAlignmentNd work-items
///   that divides the whole range (KernelSpec::split_units) and leaves at least
///   kDriverMinGranules granules; 1 when none does. The driver picks a
///   work-group that divides each slice's NDRange (OpenCL 1.2 §5.8,
///   clEnqueueNDRangeKernel), so a slice of prime extent runs in work-groups of
///   one work-item along it: on an H200, bilinear 2048²→4096² split along x
///   with 2789 of the 4096 columns took 6.9 ms in the kernel against 0.05 ms
///   for 2048.
std::size_t split_granularity(const KernelSpec& spec, const Problem& p, unsigned dim, const LocalSize& local);

/// `b` as up to `count` consecutive sub-blocks along b.dim for an
/// overlapped run (DeviceRunner::run_overlapped): each holds
/// ⌊b.size() / granularity / count⌋ or one more granules (the earlier ones
/// the larger), the last also the rest of b that is no whole granule, so
/// every sub-block but the last is a multiple of `granularity`. Fewer
/// sub-blocks when b holds fewer granules; one (b itself) when it holds at
/// most one. Throws UsageError for count or granularity 0.
std::vector<Block> chunk_blocks(const Block& b, std::size_t count, std::size_t granularity);

/// The sub-blocks block `b` of `spec` runs as in an overlapped run with up
/// to `overlap` chunks and local size `local` (MultiDeviceRunner::set_overlap,
/// wstuned's job key overlap): chunk_blocks() at split_granularity(spec, p,
/// b.dim, local); empty, so the block runs whole, when `overlap` is below 2,
/// the block holds fewer than two granules, or the kernel merges its blocks
/// on the host (KernelSpec::merges_blocks: a merge per chunk costs more than
/// the overlap gains) or cannot run a part of its range (KernelSpec::runs_slices).
std::vector<Block> overlap_blocks(const KernelSpec& spec, const Problem& p, const Block& b, unsigned overlap,
                                  const LocalSize& local);

/// A sub-block's inputs `sub` (KernelSpec::block_inputs of the sub-block)
/// as views of `copies`, copies of its block's inputs `views` (same count,
/// types and sizes): each of `sub` lies inside the buffer of `views` of its
/// index, and its view of `copies` starts at the same element offset (an
/// empty input: an empty view). Empty when one does not lie inside (a
/// kernel whose block inputs are copies, not views) or the counts differ.
std::vector<HostBuffer> views_within(const std::vector<HostBuffer>& views, const std::vector<HostBuffer>& sub,
                                     const std::vector<HostBuffer>& copies);

/// split_granularity(spec, p, dim, local) of each local size, in order,
/// except that a driver's-choice device's alignment never exceeds the largest
/// power of two dividing another device's set local size along `dim` (for a
/// kernel that does not guard its bounds): its granularity then divides every
/// other one, so it can always take the remainder align_blocks() leaves
/// (a set 96 next to a null device aligns the null one to 32).
std::vector<std::size_t> split_granularities(const KernelSpec& spec, const Problem& p, unsigned dim,
                                             const std::vector<LocalSize>& locals);

// ---- splits as slices per device ------------------------------------------------

/// Split units per device, in device order (a split of a range: they sum to it).
using Shares = std::vector<std::size_t>;

/// The settable splits of a range over devices: device i's slice is a
/// multiple of granularity[i] (split units; see split_granularity()) and the
/// slices sum to total_units. A device may get nothing.
struct SplitLattice {
  std::size_t total_units = 0;           ///< the whole range (split units)
  std::vector<std::size_t> granularity;  ///< per device; each ≥ 1

  /// Number of devices.
  [[nodiscard]] std::size_t size() const noexcept { return granularity.size(); }
  /// True when `units` has one entry per device, each a multiple of its
  /// granularity, summing to total_units.
  [[nodiscard]] bool contains(const Shares& units) const;
  /// The split nearest `units` (any values, one per device): align_blocks()
  /// of their fractions; when no single device can take the remainder, the
  /// others floored and a pair of devices sharing the rest as near their
  /// targets as their granularities allow (4 and 6 take 77:23 of 100 as
  /// 76:24). Throws UsageError when the sizes differ or no split aligns
  /// (naming the fix).
  [[nodiscard]] Shares snap(const Shares& units) const;
  /// Device i alone: total_units on i, nothing elsewhere (contains() says
  /// whether it is settable).
  [[nodiscard]] Shares alone(std::size_t i) const;
};

/// The devices a split uses (a positive slice), ascending indices.
std::vector<std::size_t> device_set(const Shares& units);

/// Contiguous blocks along `dim` giving device i `units[i]` split units, in
/// device order (an empty block for 0).
std::vector<Block> shares_blocks(unsigned dim, const Shares& units);
/// Each block's size, in order (the inverse of shares_blocks()).
Shares block_units(const std::vector<Block>& blocks);
/// Each slice as a percentage of `total_units` with one decimal, joined by
/// '/': "40.0/35.0/25.0" (0.0 each when total_units is 0).
std::string percent_text(const Shares& units, std::size_t total_units);

// ---- the measured model --------------------------------------------------------

/// One calibration measurement: a slice of `units` split units run alone on
/// one device. Times in ms (kernel: median of the repetitions; transfers: one
/// upload and one read-back).
struct CalibrationPoint {
  std::size_t units = 0;  ///< slice size (split units)
  double work_items = 0;  ///< the slice's NDRange size (KernelSpec::block_global count)
  double kernel_ms = 0;   ///< kernel time (profiling events, median)
  double h2d_ms = 0;      ///< host→device transfer of the slice's inputs
  double d2h_ms = 0;      ///< device→host transfer of the slice's output
  /// kernel + transfers: the time the device needs for the slice.
  [[nodiscard]] double total_ms() const noexcept { return kernel_ms + h2d_ms + d2h_ms; }
  friend bool operator==(const CalibrationPoint&, const CalibrationPoint&) = default;
};

/// t = a + b·w, w in work-items (least squares over the points, with a ≥ 0 and
/// b ≥ 0 so the prediction never falls as the slice grows).
struct LinearFit {
  double a_ms = 0;           ///< fixed cost (ms)
  double b_ms_per_item = 0;  ///< cost per work-item (ms)
  /// a + b·w (ms).
  [[nodiscard]] double operator()(double w) const noexcept { return a_ms + b_ms_per_item * w; }
  friend bool operator==(const LinearFit&, const LinearFit&) = default;
};

/// Least-squares fit of total_ms() against work_items, clamped to a, b ≥ 0
/// (refit through the origin or as a constant when clamping). Throws
/// UsageError for no points.
LinearFit fit_linear(const std::vector<CalibrationPoint>& points);

/// The calibration of one device for one kernel, problem and split dimension.
/// A plain value: stored as JSON (to_json / calibration_from_json), reused.
struct DeviceCalibration {
  std::string device_id;                 ///< "P:D" at calibration time
  std::string device_name;               ///< CL_DEVICE_NAME
  std::string fingerprint;               ///< DeviceInfo::fingerprint(), the key for reuse
  std::string local;                     ///< local size used, to_string(LocalSize)
  std::vector<CalibrationPoint> points;  ///< measurements, any order
  LinearFit fit;                         ///< fit_linear(points)
  /// Correction from concurrent runs: observed ÷ predicted time of this
  /// device while all devices ran together (1 = none). See observe_concurrent().
  double concurrency_scale = 1.0;
  /// Fixed cost per job (ms) that the calibration's profiling events do not
  /// see, learned from finished jobs (observe_job(): a wstuned worker's MPI
  /// messages and per-command host work); 0 = none.
  double fixed_ms = 0;
  /// The device's average power while it runs slices back to back (W), from
  /// its energy sensor at calibration (observe/observer.hpp); none without one.
  std::optional<double> active_w = std::nullopt;
  /// Its average power with nothing to run (W); none without a sensor.
  std::optional<double> idle_w = std::nullopt;
  /// The points' own prediction for a slice of `work_items` (ms, 0 for 0):
  /// piecewise-linear through the measured points (averaged per work-item
  /// count, made non-decreasing), the fit beyond them and towards 0; no
  /// concurrency_scale, no fixed_ms.
  [[nodiscard]] double points_ms(double work_items) const;
  /// Predicted ms for a slice of `work_items` (0 for 0): points_ms() ×
  /// concurrency_scale + fixed_ms.
  [[nodiscard]] double predict_ms(double work_items) const;
  friend bool operator==(const DeviceCalibration&, const DeviceCalibration&) = default;
};

/// Calibrations of all devices for one kernel, problem and split dimension.
struct Calibration {
  std::string kernel;                      ///< kernel name
  std::string size;                        ///< Problem::text
  unsigned dim = 0;                        ///< split dimension (0 = x, 1 = y)
  std::vector<DeviceCalibration> devices;  ///< in the order of the split's devices
  friend bool operator==(const Calibration&, const Calibration&) = default;
};

/// `cal` for a job that runs the kernel `runs` times between one upload and
/// one read-back (a wstuned job's warm-up and timed runs, which the daemon's
/// makespan includes): every point's kernel time × runs, its transfers as
/// they are, the fits redone. A calibration point times one run, so without
/// this a job of many runs overrates a device whose slice time is mostly
/// transfers (the H100 at bilinear 512) against one whose time is mostly
/// kernel (the CPU). `runs` 0 counts as 1.
Calibration for_kernel_runs(Calibration cal, unsigned runs);
/// for_kernel_runs() of one device's calibration.
DeviceCalibration for_kernel_runs(DeviceCalibration d, unsigned runs);

/// JSON forms; field names are stable (stored in the database later).
nlohmann::json to_json(const CalibrationPoint& p);
/// Inverse of to_json(CalibrationPoint); throws nlohmann::json::exception when malformed.
CalibrationPoint calibration_point_from_json(const nlohmann::json& j);
/// Every field of a DeviceCalibration.
nlohmann::json to_json(const DeviceCalibration& d);
/// Inverse of to_json(DeviceCalibration); throws nlohmann::json::exception when malformed.
DeviceCalibration device_calibration_from_json(const nlohmann::json& j);
/// {"kernel","size","dim","devices":[...]}.
nlohmann::json to_json(const Calibration& c);
/// Inverse of to_json(Calibration); throws nlohmann::json::exception when malformed.
Calibration calibration_from_json(const nlohmann::json& j);

/// Slice sizes (split units) to calibrate a range of `total_units` with:
/// 1/8, 1/4, 1/2, 3/4 and all of it, each a positive multiple of
/// `granularity`, deduplicated, ascending.
std::vector<std::size_t> calibration_sizes(std::size_t total_units, std::size_t granularity);

/// A limit on what one device's calibration costs (MultiDeviceRunner::calibrate).
struct CalibrationBudget {
  /// Cap (ms) on one slice's time (kernel median + upload + read-back). 0 =
  /// no cap: every size of calibration_sizes(), all repetitions. With a cap:
  /// see capped_calibration_sizes(); a slice whose first timed run exceeds the
  /// cap gets no further repetitions.
  double max_slice_ms = 0;
  /// True when max_slice_ms > 0.
  [[nodiscard]] bool capped() const noexcept { return max_slice_ms > 0; }
};

/// The ladder of a capped calibration: 1/64, 1/32, 1/16, 1/8, 1/4, 1/2, 3/4
/// and all of `total_units`, each a positive multiple of `granularity`,
/// deduplicated, ascending (calibration_sizes() with three smaller rungs).
std::vector<std::size_t> calibration_ladder(std::size_t total_units, std::size_t granularity);

/// Chooses and measures the slice sizes of a calibration. `measure(units)`
/// runs one slice and returns its time in ms (kernel + transfers), or a
/// negative value when the slice could not run (it is skipped). Without a cap
/// (`max_slice_ms` ≤ 0) it measures every size of calibration_sizes(). With
/// one it climbs calibration_ladder() and, once two slices are measured,
/// stops before a slice predicted over the cap (the last slice's time × the
/// size ratio, an upper bound for t = a + b·n with a ≥ 0) and after a slice
/// measured over it; the linear fit covers the sizes left out
/// (DeviceCalibration::predict_ms extrapolates). A device so slow that even
/// the 1/64 slice exceeds the cap gets the two smallest slices. Returns the
/// sizes measured, ascending.
std::vector<std::size_t> capped_calibration_sizes(std::size_t total_units, std::size_t granularity, double max_slice_ms,
                                                  const std::function<double(std::size_t units)>& measure);

/// The measured model: blocks that minimise the predicted makespan
/// max_i predict_i(slice_i). Water-filling on the time T: the smallest T at
/// which the largest granularity-aligned slices each device finishes within
/// T cover the range, found by bisection on T (exact for non-decreasing
/// predictions, so padding steps such as sort's power-of-two lengths are
/// handled). A device whose fixed cost exceeds T gets nothing, so the result
/// is never predicted worse than the best device alone. `work_items(i, n)`
/// gives the NDRange size of an n-unit slice on device i. Throws UsageError
/// when sizes differ or nothing fits (see align_blocks()).
std::vector<Block> measured_blocks(const Calibration& cal, std::size_t total_units, unsigned dim,
                                   const std::vector<std::size_t>& granularity,
                                   const std::function<double(std::size_t device, std::size_t units)>& work_items);

/// Predicted makespan (ms) of `blocks` under `cal`.
double predicted_makespan_ms(const Calibration& cal, const std::vector<Block>& blocks,
                             const std::function<double(std::size_t device, std::size_t units)>& work_items);

/// Folds one concurrent observation into a device's calibration: sets
/// concurrency_scale to (observed_ms − fixed_ms) ÷ the solo prediction for
/// `work_items` without a fixed cost (the devices of one host share its
/// cores, memory bus and driver threads, which solo calibration does not
/// see). Ignored when either is ≤ 0 or observed_ms ≤ fixed_ms.
void observe_concurrent(DeviceCalibration& d, double work_items, double observed_ms);

/// Folds one finished job into a device's calibration: sets fixed_ms to
/// observed_ms − the prediction without a fixed cost for `work_items`
/// (never below 0), so the next plan of the same job sees what the device's
/// part really cost from the job's start to its result. Ignored when
/// work_items or observed_ms is ≤ 0.
void observe_job(DeviceCalibration& d, double work_items, double observed_ms);

/// Fractions of the range each block covers (block size ÷ total).
std::vector<double> block_fractions(const std::vector<Block>& blocks, std::size_t total_units);

}  // namespace wstune
