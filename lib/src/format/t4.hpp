#pragma once
/// @file t4.hpp
/// Stored trials as a T4 results document, the shared results schema of the
/// TuningSchema project (Kernel Tuner's `kernel_tuner/schema/T4/1.0.0/
/// results-schema.json`), so results go to the tools people use.

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "wstune/store.hpp"

namespace wstune {

/// The T4 schema version written ("1.0.0").
inline constexpr const char* kT4SchemaVersion = "1.0.0";

/// Every trial of the given sessions (all sessions when empty) as a T4
/// results document: {"schema_version": "1.0.0", "metadata": {"timeunit":
/// "milliseconds", "wstune": [sessions]}, "results": [...]}. Each result has
/// "timestamp", "configuration" (the tuning parameters, and "local_size":
/// "32x8" or "null"), "times" ("compilation", "runtimes": every kernel
/// sample, "validation", "benchmark": the trial's wall time, "framework",
/// "search_algorithm"; ms), "invalidity" (correct, compile, runtime,
/// constraints, correctness, timeout), "correctness" (1 or 0),
/// "measurements" ([{"name": "time", "value": median, "unit": "ms"}], and
/// with an energy observation "energy" (J per run), "power" (W) and "edp"
/// (J*s): docs/energy.md), "objectives" (the session's objective names,
/// ["time"] by default) and "wstune" (session uuid, device fingerprint,
/// kernel, problem size, NDRange, the energy observation or null). Throws UsageError for an unknown session
/// id, StoreError on a database failure.
nlohmann::json t4_results(const Store& store, const std::vector<std::int64_t>& session_ids = {});

}  // namespace wstune
