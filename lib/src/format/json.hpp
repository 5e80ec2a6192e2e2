#pragma once
/// @file json.hpp
/// JSON forms (nlohmann::json) of wstune's values, used by `--json` output,
/// the daemon's messages and export files. Field names are stable.

#include <nlohmann/json.hpp>

#include "kernel/kernel.hpp"
#include "runner/runner.hpp"
#include "wstune/device.hpp"
#include "wstune/timing.hpp"

namespace wstune {

/// {"x":..,"y":..,"dims":..}, and "z" when dims is 3
nlohmann::json to_json(const Extent& e);
/// Inverse of to_json(Extent); throws nlohmann::json::exception when malformed.
Extent extent_from_json(const nlohmann::json& j);
/// null for the driver default, else to_json(Extent).
nlohmann::json to_json(const LocalSize& l);
/// Inverse of to_json(LocalSize).
LocalSize local_from_json(const nlohmann::json& j);
/// Every DeviceInfo field, plus "id", "total_pe" and "fingerprint".
nlohmann::json to_json(const DeviceInfo& d);
/// Inverse of to_json(DeviceInfo) (fingerprint and id are recomputed).
DeviceInfo device_info_from_json(const nlohmann::json& j);
/// {"samples_ms":[...], "median_ms":.., "min_ms":..}
nlohmann::json to_json(const Samples& s);
/// Status, error, local size and the three sample sets (not the output data).
nlohmann::json to_json(const RunResult& r);

}  // namespace wstune
