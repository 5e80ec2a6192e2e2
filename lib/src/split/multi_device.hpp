#pragma once
/// @file multi_device.hpp
/// Runs one kernel split across several OpenCL devices of one host at the
/// same time: one context, queue and DeviceRunner per device, each driven
/// from its own std::thread; gathers the blocks, verifies the whole result
/// against the CPU reference and reports per-device times and the makespan.
/// Also calibrates devices for the measured split model and sweeps split
/// ratios for the oracle. Source: paper §3.1.1 (one slice per device, the
/// master gathers), Qilin's adaptive mapping (calibrate, then split).

#include <functional>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel.hpp"
#include "report/svg.hpp"
#include "runner/runner.hpp"
#include "split/model_blocks.hpp"
#include "split/split.hpp"
#include "wstune/device.hpp"
#include "wstune/timing.hpp"

namespace wstune {

/// One device's part of a split run. Times in ms, one sample per repetition.
struct SliceResult {
  std::string device_id;                      ///< "P:D"
  std::string device_name;                    ///< CL_DEVICE_NAME
  Block block;                                ///< its slice (empty: the device was not used)
  LocalSize local;                            ///< its local size
  TrialStatus status = TrialStatus::correct;  ///< correct unless it failed
  std::string error;                          ///< why it failed
  Samples kernel;                             ///< kernel time (profiling events)
  Samples h2d;                                ///< upload of the slice's inputs (profiling events)
  Samples d2h;                                ///< read-back of the slice's output (profiling events)
  Samples wall;                               ///< the device thread's wall clock: upload + kernel + read-back
  std::size_t chunks = 1;     ///< sub-blocks the block ran as per round (MultiDeviceRunner::set_overlap; 1: whole)
  std::size_t h2d_bytes = 0;  ///< bytes uploaded per round
  std::size_t d2h_bytes = 0;  ///< bytes read back per round
  /// Upload bandwidth achieved: h2d_bytes over the median h2d time (GB/s,
  /// 10^9 bytes per second); 0 without samples.
  [[nodiscard]] double h2d_gbps() const noexcept;
  /// Read-back bandwidth achieved: d2h_bytes over the median d2h time (GB/s); 0 without samples.
  [[nodiscard]] double d2h_gbps() const noexcept;
};

/// The outcome of a split run.
struct SplitRunResult {
  TrialStatus status = TrialStatus::correct;  ///< first failure of any slice, or correctness
  std::string error;                          ///< why it failed
  std::vector<SliceResult> slices;            ///< one per device, in device order
  Samples makespan;                           ///< wall clock from starting all devices to the last read-back (ms)
  double host_finish_ms =
      0;  ///< gathering (place_block of outputs not read in place) + KernelSpec::finish on the host (ms; sort merges)
  Verdict verdict;  ///< the whole output against the CPU reference
  /// Per device (in device order): the joules its energy sensor counted over
  /// the run, divided by its rounds, warm-up and timed (one job), or none
  /// without a sensor (SplitSession::run() fills it; docs/energy.md).
  std::vector<std::optional<double>> device_joules = {};
  /// The sum of device_joules, or none when a device has no sensor (or none was read).
  [[nodiscard]] std::optional<double> joules() const {
    if (device_joules.empty()) return std::nullopt;
    double sum = 0;
    for (const auto& j : device_joules) {
      if (!j) return std::nullopt;
      sum += *j;
    }
    return sum;
  }
  /// True when status is TrialStatus::correct.
  [[nodiscard]] bool ok() const noexcept { return status == TrialStatus::correct; }
};

/// A rule choosing a device's local size for its block (the hook for the
/// paper's §3.2.3 rules and measured searches).
using LocalRule = std::function<LocalSize(const DeviceRunner& runner, const Problem& p, const Block& b)>;

class MultiDeviceRunner;

/// Per-device local sizes: `fixed[i]` where it holds a value (which may be
/// the driver's choice, std::nullopt inside), else `rule` applied to device
/// i's block. Throws UsageError when a rule is needed but empty, or sizes differ.
std::vector<LocalSize> resolve_locals(MultiDeviceRunner& runner, const std::vector<Block>& blocks,
                                      const std::vector<std::optional<LocalSize>>& fixed, const LocalRule& rule);

/// Several devices, one kernel, one problem. Not thread-safe itself; it runs
/// its own threads.
class MultiDeviceRunner {
 public:
  /// Builds a DeviceRunner per device (throws BuildError/ClError as
  /// DeviceRunner does; UsageError for no devices) and generates the inputs
  /// with `seed`. The CPU reference is computed on first verification.
  MultiDeviceRunner(std::vector<Device> devices, const KernelSpec& spec, Problem problem, std::uint64_t seed = 42);
  ~MultiDeviceRunner();
  MultiDeviceRunner(const MultiDeviceRunner&) = delete;
  MultiDeviceRunner& operator=(const MultiDeviceRunner&) = delete;

  /// Number of devices.
  [[nodiscard]] std::size_t size() const noexcept;
  /// Device i's runner (i < size()).
  [[nodiscard]] DeviceRunner& runner(std::size_t i);
  /// The kernel.
  [[nodiscard]] const KernelSpec& spec() const noexcept;
  /// The problem (with the parameter values it was created with).
  [[nodiscard]] const Problem& problem() const noexcept;
  /// Runs device i with these tuning parameter values (each device may have
  /// its own: the best stored for it); blocks are in the kernel's split
  /// units, which do not depend on the parameters.
  void set_params(std::size_t i, const nlohmann::json& params);
  /// The problem device i runs (problem() with its parameter values).
  [[nodiscard]] const Problem& problem(std::size_t i) const;

  /// Runs each device's block in later run()s as up to `chunks` sub-blocks
  /// (chunk_blocks() at the device's split granularity) over two command
  /// queues (DeviceRunner::run_overlapped), so a chunk's upload and
  /// read-back overlap another chunk's kernel; 1 (the default) runs each
  /// block whole. Chunk outputs land at their place in the whole output
  /// (KernelSpec::output_place) or in pinned buffers placed after the last
  /// round; KernelSpec::finish gets the chunks as blocks (sort pads and
  /// sorts each chunk on the device and merges the chunks' sorted runs as
  /// it merges blocks'). A block runs whole all the same when its chunks'
  /// inputs are not views into the block's (a kernel whose
  /// KernelSpec::block_inputs copies). The slices' times are then chunk
  /// totals, not a whole block's: calibrate(),
  /// refine_measured() and refine_split() model whole blocks, so run them
  /// with 1. Throws UsageError for 0.
  void set_overlap(std::size_t chunks);
  /// The chunks per block set by set_overlap() (1: none).
  [[nodiscard]] std::size_t overlap() const noexcept;

  /// Runs the blocks (one per device, contiguous, covering the problem;
  /// empty blocks leave their device idle) with the local sizes (one per
  /// device) concurrently: timing.warmup untimed rounds, then
  /// timing.repetitions timed rounds, each uploading, running the kernel once
  /// and reading back on every device at the same time. Verifies the last
  /// round's gathered output. Data path: each device's block inputs sit in
  /// its pinned memory (PinnedMemory, prepared once per call), so uploads
  /// are DMA copies; a block output with a place in the whole output
  /// (KernelSpec::output_place: a run, or rows at the output's pitch) is
  /// read straight to it there (pinned too), others into pinned buffers reused between rounds and
  /// placed after the last round (SplitRunResult::host_finish_ms). Never throws for a device or driver failure
  /// (the status says); throws UsageError when sizes differ or the blocks do
  /// not cover the problem.
  SplitRunResult run(const std::vector<Block>& blocks, const std::vector<LocalSize>& locals,
                     const TimingOptions& timing);

  /// Calibrates device i alone along `dim` with `local` (calibrate_alone()
  /// on its runner, problem and pinned memory): each slice size
  /// (granularity from split_granularity()) uploaded, run (kernel median of
  /// timing.repetitions after timing.warmup) and read back. The sizes are
  /// calibration_sizes(), or under a capped `budget` those
  /// capped_calibration_sizes() picks (ascending from 1/64 of the range,
  /// stopping at the cap; a slice over the cap gets one timed run). Slices the
  /// local size cannot run are left out; throws Error when none runs.
  DeviceCalibration calibrate(std::size_t i, unsigned dim, const LocalSize& local, const TimingOptions& timing,
                              const CalibrationBudget& budget = {});

  /// calibrate() for every device, as one Calibration.
  Calibration calibrate_all(unsigned dim, const std::vector<LocalSize>& locals, const TimingOptions& timing,
                            const CalibrationBudget& budget = {});

  /// The NDRange size (work-items) of an n-unit slice along `dim`, for
  /// measured_blocks().
  [[nodiscard]] double work_items(unsigned dim, std::size_t units) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Calibrates one device alone on its own DeviceRunner (no other device,
/// no MultiDeviceRunner; a wstuned worker's): each slice size along `dim`
/// (granularity from split_granularity()) with local size `local` copied
/// from `inputs` (the whole problem's, KernelSpec::generate_inputs) into
/// `memory` (nullptr: the heap), uploaded, run (kernel median of
/// timing.repetitions after timing.warmup) and read back. The sizes are
/// calibration_sizes(), or under a capped `budget` those
/// capped_calibration_sizes() picks (ascending from 1/64 of the range,
/// stopping at the cap; a slice over the cap gets one timed run). Each
/// point's work-items are `work_items(units)` (default: slice_work_items()
/// of `p`). The runner's uploaded block is the last slice's afterwards.
/// Slices the local size cannot run are left out; throws Error when none
/// runs, ClError as DeviceRunner::upload does. Where the device's energy
/// sensor is readable its power is measured too (measure_power()).
DeviceCalibration calibrate_alone(DeviceRunner& runner, const Problem& p, const std::vector<HostBuffer>& inputs,
                                  unsigned dim, const LocalSize& local, const TimingOptions& timing,
                                  const CalibrationBudget& budget = {}, std::pmr::memory_resource* memory = nullptr,
                                  const std::function<double(std::size_t units)>& work_items = {});

/// The device's power for the energy-aware split (energy_split.hpp), where
/// its energy sensor is readable (make_energy_observer()): idle_w over an
/// observation window with nothing to run, active_w while block `b` (the
/// last slice calibrate_alone() uploaded, whose kernel takes `kernel_ms`)
/// runs back to back for the window. Without a sensor, or when a reading
/// fails, `c` keeps no power. Nothing changes clocks or power limits.
void measure_power(DeviceRunner& runner, const Problem& p, const Block& b, const LocalSize& local, double kernel_ms,
                   DeviceCalibration& c);

/// The measured model end to end: blocks from `cal` (measured_blocks), then
/// `rounds` concurrent runs, each folding every device's observed time into
/// `cal` (observe_concurrent) and re-solving. Returns the final blocks;
/// `cal` keeps the concurrency scales for reuse.
std::vector<Block> refine_measured(MultiDeviceRunner& runner, Calibration& cal, const std::vector<LocalSize>& locals,
                                   const TimingOptions& timing, unsigned rounds = 2);

/// model_blocks() (model_blocks.hpp) of the runner's kernel, problem and
/// devices' total PEs (DeviceInfo::total_pe), with `locals` as the planning
/// local sizes; measured from `cal` (required then: throws UsageError
/// without it).
std::vector<Block> model_blocks(SplitModel model, MultiDeviceRunner& runner, unsigned dim,
                                const std::vector<LocalSize>& locals, const Calibration* cal = nullptr);

/// One point of a two-device sweep.
struct SweepPoint {
  double percent_first = 0;   ///< share of the first device (%), as asked
  std::vector<Block> blocks;  ///< the aligned blocks
  SplitRunResult result;      ///< the run
};

/// Makespan of two devices over split ratios: the first device's share from
/// 0 to 100 % in `step` % steps, then `fine` % steps within ±`step` of the
/// best (none when fine ≤ 0). Points are sorted by share; duplicates (equal
/// aligned blocks) run once. Throws UsageError unless the runner has two
/// devices and 0 < step ≤ 50.
std::vector<SweepPoint> sweep_two(MultiDeviceRunner& runner, unsigned dim, const std::vector<LocalSize>& locals,
                                  const TimingOptions& timing, double step, double fine = 0);

/// The sweep point with the smallest median makespan among correct ones
/// (nullptr when none is correct).
const SweepPoint* best_point(const std::vector<SweepPoint>& sweep);

/// The sweep as CSV: header "percent_first,units_first,units_second,status,
/// makespan_median_ms,makespan_min_ms,kernel_first_ms,kernel_second_ms", one
/// row per point (times are medians; empty for an unused device).
std::string sweep_csv(const std::vector<SweepPoint>& sweep);

/// The sweep as a line plot in the style of the paper's Figs. 2–4: median
/// makespan (ms) over the first device's share (%), with each device's
/// kernel time as a second and third line, the best share marked.
svg::LinePlot sweep_plot(const std::vector<SweepPoint>& sweep, const std::string& title, const std::string& first_name,
                         const std::string& second_name);

/// The paper's §3.2.3 rule as a LocalRule: the settable local sizes of the
/// block's NDRange on the runner's device (enumerate_local_sizes), then
/// paper_rule() with the kernel's priority and the device's PEs per CU.
LocalSize paper_local_rule(const DeviceRunner& runner, const Problem& p, const Block& b);

}  // namespace wstune
