#pragma once
/// @file json.hpp
/// JSON forms (nlohmann::json) of wstune's values, used by `--json` output,
/// the daemon's messages and export files. Field names are stable.

#include <cstdint>
#include <string_view>

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

/// The largest NDRange dimension (work-items) read from outside (an export,
/// a worker's answer): beyond it no OpenCL device runs a kernel, and 2^40
/// stays exact in a double.
inline constexpr std::uint64_t kMaxGlobalDim = std::uint64_t{1} << 40;
/// The largest local size dimension (work-items) read from outside.
inline constexpr std::uint64_t kMaxLocalDim = std::uint64_t{1} << 32;

/// Inverse of to_json(Extent) for input from outside, every field checked:
/// "dims" 1 to 3 (absent: 1), "x" present, each dimension a whole number
/// from 1 to `max_dim` (y and z 1 or absent beyond `dims`). Throws
/// UsageError "<where>... " naming the JSON path (`where`, e.g.
/// "sessions[0].trials[2].local") and what to give.
Extent checked_extent_from_json(const nlohmann::json& j, std::string_view where, std::uint64_t max_dim);
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
