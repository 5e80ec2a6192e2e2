#pragma once
/// @file trial_json.hpp
/// The one JSON form of a measured configuration: a Trial (the CLI's
/// `tune --json`, wstuned's tune reports and trial messages, the isolated
/// evaluator's worker answers) and a stored TrialRecord (the store's export
/// and import, docs/store.md) share one set of keys, written by one
/// function. Field names are stable; docs/tuning.md lists them.

#include <string_view>

#include <nlohmann/json.hpp>

#include "evaluate/trial.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// A Trial as JSON: {"params": object, "local": extent or null (the
/// driver's choice), "global": extent or null (the target's NDRange),
/// "status": "correct"|"compile"|"runtime"|"constraints"|"correctness"|
/// "timeout", "error": text, "samples_ms": [kernel ms per repetition],
/// "compile_ms", "run_ms" (Trial::run_wall_ms), "verify_ms", "wall_ms"
/// (numbers, ms), "verified", "from_store" (booleans), "energy"
/// (to_json(EnergyMeasurement), null when not measured)}. Extents as
/// to_json(Extent).
nlohmann::json to_json(const Trial& t);

/// to_json(Trial) plus the derived "median_ms" (Trial::median_ms(); null
/// unless the trial is correct): the form of a trial in reports (the CLI's
/// `tune --json`, wstuned's tune results).
nlohmann::json trial_report_json(const Trial& t);

/// Inverse of to_json(Trial) (a report's or a stored record's extra keys
/// are ignored): the one reader of a trial's JSON form, for a worker's
/// answer, a daemon message and, through trial_record_from_json(), the
/// store's import. "local", "status" and "samples_ms" are required;
/// "params" (absent: {}, a kernel without parameters or an export of format
/// version 1), "global", "error", the times (null = 0) and the booleans may
/// be absent. Checked: params_from_json(); local and global as
/// checked_extent_from_json() (at most kMaxLocalDim, kMaxGlobalDim); every
/// sample and time a finite number of ms >= 0; a correct trial has samples.
/// Throws UsageError "<where>.<key> ..." naming the JSON path of the first
/// malformed or missing field (`where` names the document, e.g. "trial").
Trial trial_from_json(const nlohmann::json& j, std::string_view where);

/// Inverse of to_json(TrialRecord): the fields trial_from_json() reads
/// (a time that is null or absent stays unrecorded) plus the required
/// "created_at" string. Throws UsageError as trial_from_json().
TrialRecord trial_record_from_json(const nlohmann::json& j, std::string_view where);

/// An energy measurement as JSON: {"sensor": text, "energy_j" (J per kernel
/// run), "power_w" (W), "window_ms" (ms), "runs" (count), "resolution_j"
/// (J), "update_period_ms", "read_ms" (ms)}.
nlohmann::json to_json(const EnergyMeasurement& e);

/// Inverse of to_json(EnergyMeasurement) ("read_ms" may be absent). Throws
/// UsageError naming the JSON path of a missing or malformed field.
EnergyMeasurement energy_from_json(const nlohmann::json& j, std::string_view where);

/// Tuning parameter values at `where`: an object of name -> number (finite),
/// bool or string, returned as given. Throws UsageError naming the JSON
/// path of the first value that is none of these.
nlohmann::json params_from_json(const nlohmann::json& j, std::string_view where);

/// A stored trial as JSON: the keys to_json(Trial) shares with it
/// ("params", "local", "global", "status", "error", "samples_ms",
/// "compile_ms", "run_ms", "verify_ms", "energy"; a time not recorded is null) plus
/// "created_at" (UTC, ISO 8601). The store's export writes each trial so.
nlohmann::json to_json(const TrialRecord& r);

}  // namespace wstune
