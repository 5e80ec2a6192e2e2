#pragma once
/// @file target_json.hpp
/// The one JSON form of what an evaluator measures (a TuneTarget,
/// evaluate/trial.hpp) and of how it times a trial (TimingOptions): the
/// isolated evaluator's worker reports its target in this form, and a
/// trial request, the isolated evaluator's and wstuned's alike, carries its
/// timing in it. Field names are stable.

#include <string_view>

#include <nlohmann/json.hpp>

#include "evaluate/trial.hpp"
#include "wstune/timing.hpp"

namespace wstune {

/// A TuneTarget as JSON: {"kernel", "size" (texts), "global", "problem"
/// (extents, to_json(Extent)), "priority" ("x", "y" or "none"), the limits
/// "any_shape" (boolean), "max_work_group_size", "kernel_work_group_size"
/// (work-items), "max_work_item_sizes" (array of work-items),
/// "local_mem_bytes", "kernel_local_mem_bytes", "local_mem_per_item_bytes"
/// (bytes), "pe_per_cu", "device_name", "device_id" ("P:D"),
/// "device_fingerprint" and "device" (to_json(DeviceInfo)), "energy_sensor"
/// and "energy_note" (texts; absent when read: "")}.
nlohmann::json to_json(const TuneTarget& t);

/// Inverse of to_json(TuneTarget); "device" may be absent (an empty
/// DeviceInfo). Throws UsageError "<where>: ..." naming the JSON field that is
/// missing or malformed (`where` names the document, e.g. "the tuning
/// worker's target").
TuneTarget tune_target_from_json(const nlohmann::json& j, std::string_view where);

/// TimingOptions as JSON: {"warmup", "repetitions", "max_repetitions"
/// (counts), "min_timed_ms", "max_timed_ms" (ms), "max_median_error",
/// "steady_warmup" (fractions)}. JSON has no NaN or infinity: a bound that
/// is not a finite number > 0 is written as 0 (off).
nlohmann::json to_json(const TimingOptions& t);

/// Inverse of to_json(TimingOptions): "warmup" and "repetitions" are
/// required, the others take TimingOptions' defaults when absent. Throws
/// UsageError "<where>: ..." naming the missing or malformed field.
TimingOptions timing_from_json(const nlohmann::json& j, std::string_view where);

}  // namespace wstune
