#pragma once
/// @file tasks.hpp
/// What a worker does on its device besides running a block: pick the rule's
/// local size, search local sizes (tune), and measure slices for the
/// `measured` split model (calibrate). Results are JSON documents that travel
/// to the master (formats in docs/daemon.md).

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "evaluate/trial.hpp"
#include "evaluate/trial_energy.hpp"
#include "runner/runner.hpp"
#include "split/split.hpp"

namespace wstune::daemon {

/// The paper's §3.2.3 local size for `b` on the runner's device, or the
/// driver default (std::nullopt) when the rule has no shape.
LocalSize rule_local(const DeviceRunner& runner, const Problem& p, const Block& b);

/// The library's measured search (search.hpp tune(): NULL, the rule, then the
/// searcher resolve_search() picks for the runner's kernel: a tuning file's
/// Search, else auto; `max_trials` evaluations, 0: the file's Budget, else
/// the strategy's default) over the block `b`
/// already uploaded to `runner`. No verification (the master verifies the
/// gathered result). Returns {"strategy":..,"global":..,"trials":[trial..],
/// "best":trial,"null_ms":..,"rule":"..","rule_ms":..,"evaluations":..,
/// "stop_reason":..,"wall_ms":..}, each trial in its one JSON form with
/// "median_ms" (format/trial_json.hpp trial_report_json()).
nlohmann::json tune_block(DeviceRunner& runner, const Problem& p, const Block& b, unsigned repetitions,
                          unsigned max_trials);

/// The evaluator of a worker's Tag::trial requests: the whole problem's
/// inputs generated from `seed` (KernelSpec::generate_inputs, as the CLI
/// does) and uploaded to `runner` once, the reference computed once
/// (reference_outputs()), every correct trial verified against it. Its
/// space() is what make_search_space() gives on this device, built only
/// when asked: the master builds a job's space once and sends each
/// configuration (Tag::trial), so a worker of a tune job builds none.
/// With an active `energy`, each configuration's first correct trial is
/// observed as the CLI's are (TrialEnergy::observe(), Trial::energy), and
/// its target() names the sensor or why none (TuneTarget::energy_sensor,
/// energy_note).
std::unique_ptr<Evaluator> whole_evaluator(DeviceRunner& runner, const Problem& p, std::uint64_t seed,
                                           TrialEnergy energy = TrialEnergy());

/// Calibration for the `measured` split model on the worker's one device:
/// calibrate_alone() on `runner` (driver default local size; the slices of
/// calibration_sizes(), or under a capped `budget` those
/// capped_calibration_sizes() picks; `inputs` the whole problem's, copied
/// per slice from the heap as the worker's runs are). Returns the
/// calibrate answer, to_json(CalibrationRow) (store/calibration_row.hpp)
/// with its CalibrationSummary: the budget, the whole range, its
/// work-items, the prediction of the whole problem and the calibration's
/// wall clock. Throws ClError/Error as calibrate_alone() does.
nlohmann::json calibrate_device(DeviceRunner& runner, const Problem& p, const std::vector<HostBuffer>& inputs,
                                unsigned dim, unsigned repetitions, const CalibrationBudget& budget = {});

}  // namespace wstune::daemon
