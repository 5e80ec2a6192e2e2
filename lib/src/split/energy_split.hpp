#pragma once
/// @file energy_split.hpp
/// The measured split model with an objective beyond time (docs/energy.md):
/// the shares of one NDRange over unlike devices, and which devices take
/// part, that minimise the predicted energy of the job or its energy-delay
/// product, from each device's calibration (its predicted slice time) and
/// measured power (DeviceCalibration::active_w while it runs, idle_w while
/// it waits for the others). Every device of the split draws its idle power
/// until the makespan: a device left out saves only its active power above
/// idle. Pure functions (no OpenCL calls).

#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "split/split.hpp"

namespace wstune {

/// What a measured split minimises.
enum class SplitObjective {
  time,    ///< the makespan (measured_blocks())
  energy,  ///< the job's joules over every device of the split
  edp      ///< joules × makespan (J·s)
};

/// "time", "energy", "edp".
std::string_view to_string(SplitObjective o) noexcept;
/// Inverse of to_string(SplitObjective); throws UsageError naming `what`
/// and the three names otherwise.
SplitObjective parse_split_objective(std::string_view text, std::string_view what = "--objective");

/// A split's predicted cost.
struct SplitCost {
  double makespan_ms = 0;  ///< the slowest device's predicted time (ms)
  /// Joules of every device from the start to the makespan: active power ×
  /// its own time + idle power × the rest; nullopt when a device has no
  /// measured power.
  std::optional<double> joules;
  /// joules × makespan (J·s), nullopt without joules.
  [[nodiscard]] std::optional<double> edp() const {
    return joules ? std::optional(*joules * makespan_ms / 1000) : std::nullopt;
  }
  /// The value `o` minimises: makespan (ms), joules or edp; nullopt without power.
  [[nodiscard]] std::optional<double> value(SplitObjective o) const;
};

/// The predicted cost of `blocks` under `cal` (DeviceCalibration::predict_ms
/// of each device's slice, `work_items(i, units)` its NDRange size).
SplitCost predicted_cost(const Calibration& cal, const std::vector<Block>& blocks,
                         const std::function<double(std::size_t device, std::size_t units)>& work_items);

/// Blocks minimising `objective` (time: measured_blocks() itself). For
/// energy and edp, candidates are: the time-optimal split, each device
/// alone, and for every subset of the devices and each makespan bound on a
/// ladder between the time-optimal makespan and the slowest single device's,
/// the subset's devices filled cheapest joule per unit first (active minus
/// idle power × predicted time per unit) up to what each finishes within
/// the bound; the candidate with the smallest predicted value wins (so it is
/// never predicted worse than the time-optimal split or any device alone).
/// Throws UsageError when a device has no measured power (calibrate it where
/// its sensor is readable), and as measured_blocks().
std::vector<Block> objective_blocks(const Calibration& cal, std::size_t total_units, unsigned dim,
                                    const std::vector<std::size_t>& granularity,
                                    const std::function<double(std::size_t device, std::size_t units)>& work_items,
                                    SplitObjective objective);

}  // namespace wstune
