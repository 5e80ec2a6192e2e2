#pragma once
/// @file split_session.hpp
/// One split job end to end, the library's entry point for `wstune split`:
/// the devices' runner, the blocks of the chosen model (the paper's
/// pe-ratio model, the PE-proportional baseline, or the measured model:
/// calibrated, or a calibration taken from a file or the store, predicted,
/// refined online or the stored refinement reused, and stored for the next
/// run), the paper's local-size rule for devices that ask for it, and the
/// run on all devices at once, verified and recorded in the store.
/// Printing is the caller's. Source: paper §3.1 (the split), §3.2.3 (the
/// rule); Qilin and StarPU for the measured model (split.hpp,
/// split_refine.hpp).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "observe/observer.hpp"
#include "split/energy_split.hpp"
#include "split/multi_device.hpp"
#include "split/split.hpp"
#include "split/split_refine.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// What a split session is asked to do.
struct SplitSessionOptions {
  SplitModel model = SplitModel::pe_ratio;  ///< how the shares are chosen
  unsigned dim = 0;                         ///< the split dimension (0 = x, 1 = y)
  /// One entry per device: a local size (an empty LocalSize is the
  /// driver's choice), or std::nullopt for the paper's rule (§3.2.3) applied
  /// to the device's block once the blocks are chosen (the blocks are then
  /// chosen with the driver's choice).
  std::vector<std::optional<LocalSize>> locals;
  /// One entry per device (or none): its tuning parameter values (null:
  /// the problem's own).
  std::vector<nlohmann::json> params;
  std::uint64_t seed = 42;  ///< input seed (KernelSpec::generate_inputs)
  TimingOptions timing;     ///< calibration slices and the run: warm-up, repetitions
  // ---- the measured model --------------------------------------------------
  /// The store's path, where calibrations are reused and stored and runs
  /// recorded (measured model only); std::nullopt: no store.
  std::optional<std::string> db;
  /// A calibration JSON file (to_json(Calibration)): read when it exists and
  /// matches the devices, kernel, size, dimension and local sizes, else
  /// written after calibrating; "" none.
  std::string calibration_path;
  bool recalibrate = false;         ///< measure anew even when a stored or file calibration fits
  unsigned refine = 0;              ///< splits the online refinement may measure (0: none)
  TimingOptions refine_timing;      ///< timing of each refinement probe
  double calibration_cap_ms = 250;  ///< CalibrationBudget::max_slice_ms (0: no cap)
  /// What the measured model minimises (energy_split.hpp): the makespan,
  /// the job's joules or their product, from the calibration's times and
  /// each device's measured power.
  SplitObjective objective = SplitObjective::time;
  /// run() reads each device's energy sensor around the run (SplitRunResult::device_joules).
  bool measure_energy = true;
};

/// Where the measured model's numbers came from and what they cost.
struct MeasuredPlan {
  Calibration cal;                          ///< the calibration (after the refinement's corrections)
  std::vector<Block> blocks;                ///< the chosen split
  std::string cal_source = "measured";      ///< "measured", "stored" or "file"
  std::string refine_source = "off";        ///< "off", "measured" or "stored"
  std::optional<RefineOutcome> refinement;  ///< the refinement's outcome (measured or stored)
  std::vector<Block> model_blocks;          ///< the model's prediction before refinement
  unsigned concurrent_rounds = 0;           ///< rounds the refinement ran on the devices at once
  double refine_ms = 0;                     ///< the refinement's wall clock (ms)
  std::string stored_at;                    ///< created_at of the reused stored calibration
  bool stored = false;                      ///< written to the store by this plan
  /// The calibration's prediction for `blocks`: makespan and, where every
  /// device's power was measured, joules (energy_split.hpp).
  SplitCost predicted = {};
  SplitCost time_optimal = {};        ///< the prediction for the time-optimal split (model_blocks)
  std::vector<SplitCost> alone = {};  ///< the prediction for each device alone, in device order
};

/// A split session's plan.
struct SplitSessionPlan {
  std::vector<Block> blocks;             ///< one per device, tiling the range along the split dimension
  std::vector<LocalSize> locals;         ///< each device's local size (rule devices resolved for their block)
  std::optional<MeasuredPlan> measured;  ///< the measured model's provenance
};

/// Called with a line of progress ("calibrating each device alone ...").
using SplitProgress = std::function<void(std::string_view line)>;

/// The devices a split gives a slice, as their ids "P:D", in device order.
nlohmann::json used_device_ids(const std::vector<Device>& devices, const std::vector<Block>& blocks);

/// One split job over `devices` (two or more for the measured model's
/// refinement). Not thread-safe.
class SplitSession {
 public:
  /// Builds the devices' runner (MultiDeviceRunner: throws BuildError,
  /// ClError, UsageError as it does) with each device's parameter values.
  /// Throws UsageError unless `options.locals` has one entry per device.
  /// The store is opened by plan() only.
  SplitSession(const KernelSpec& spec, Problem problem, std::vector<Device> devices, SplitSessionOptions options);
  /// Releases the devices' runner and closes the store.
  ~SplitSession();
  /// Not copyable: it owns the devices' runner.
  SplitSession(const SplitSession&) = delete;
  /// Not copyable: it owns the devices' runner.
  SplitSession& operator=(const SplitSession&) = delete;

  /// The kernel.
  [[nodiscard]] const KernelSpec& spec() const noexcept { return spec_; }
  /// The problem.
  [[nodiscard]] const Problem& problem() const noexcept { return problem_; }
  /// The devices, in order.
  [[nodiscard]] const std::vector<Device>& devices() const noexcept { return devices_; }
  /// The whole range along the split dimension (split units).
  [[nodiscard]] std::size_t total_units() const;
  /// The devices' runner (for sweeps).
  [[nodiscard]] MultiDeviceRunner& runner() noexcept { return *runner_; }
  /// Each device's local size for planning: the given ones, the driver's
  /// choice for rule devices (see SplitSessionOptions::locals).
  [[nodiscard]] const std::vector<LocalSize>& planning_locals() const noexcept { return planning_locals_; }
  /// The store plan() opened (measured model with a db), else nullptr.
  [[nodiscard]] Store* store() noexcept { return store_ ? &*store_ : nullptr; }

  /// The blocks of the model (measured: calibration from the file, the
  /// store or measured now; prediction; refinement, or the stored one;
  /// stored and written to the file), then the rule devices' local sizes
  /// for their blocks. `progress` hears when devices are measured. Throws
  /// UsageError for a malformed --calibration file or a split that does
  /// not align, StoreError when the store cannot be opened, Error when a
  /// device cannot be calibrated.
  SplitSessionPlan plan(const SplitProgress& progress = {});

  /// Runs `plan` on all devices at once (each block as up to `overlap`
  /// chunks, MultiDeviceRunner::set_overlap), verified; a correct run is
  /// recorded as the store's split run when plan() opened a store. With
  /// SplitSessionOptions::measure_energy each device's energy sensor is read
  /// around the run (SplitRunResult::device_joules). Never throws for a
  /// device failure (the status says).
  SplitRunResult run(const SplitSessionPlan& plan, std::size_t overlap);

 private:
  const KernelSpec& spec_;
  Problem problem_;
  std::vector<Device> devices_;
  SplitSessionOptions options_;
  std::unique_ptr<MultiDeviceRunner> runner_;
  std::vector<LocalSize> planning_locals_;
  std::optional<std::vector<std::unique_ptr<EnergyObserver>>> observers_;  // per device, opened by the first run()
  std::optional<Store> store_;
};

}  // namespace wstune
