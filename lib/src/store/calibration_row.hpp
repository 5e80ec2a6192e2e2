#pragma once
/// @file calibration_row.hpp
/// The one typed form of a stored split-model calibration (the store's
/// split_calibrations row, model "measured") and of a wstuned worker's
/// calibrate answer: one device's DeviceCalibration (split.hpp) with what
/// its writer adds. `wstune split --model measured` writes one row per
/// device carrying the whole split it belongs to (SplitRecord); a wstuned
/// worker answers with a CalibrationSummary, and the master stores the
/// answer with the problem's size. The JSON form (to_json) is what the
/// store holds in the row's params and what the calibrate message carries.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "split/split.hpp"
#include "split/split_refine.hpp"
#include "wstune/store.hpp"

namespace wstune {

/// What a wstuned worker adds to its calibration (its calibrate answer).
struct CalibrationSummary {
  double budget_ms = 0;         ///< the cap on one slice (CalibrationBudget::max_slice_ms; 0: none)
  std::size_t total_units = 0;  ///< the whole range (split units, KernelSpec::split_units)
  double full_work_items = 0;   ///< the whole range's NDRange size (work-items)
  double full_ms = 0;           ///< DeviceCalibration::predict_ms of the whole range (ms)
  double wall_ms = 0;           ///< the calibration's wall clock (ms)
  friend bool operator==(const CalibrationSummary&, const CalibrationSummary&) = default;
};

/// The split a `wstune split --model measured` row belongs to: every
/// device's row of one split carries it whole, so the next run with the same
/// devices reuses the calibration and the refinement.
struct SplitRecord {
  std::string key;              ///< one key per split (clock in hex, '-', pid)
  Calibration calibration;      ///< every device's calibration, in the split's device order
  std::size_t total_units = 0;  ///< the range the refinement split (split units)
  /// The online refinement's outcome (split_refine.hpp); nullopt when the
  /// split was not refined (--refine 0) or its stored form is unreadable.
  std::optional<RefineOutcome> refinement;
  std::size_t position = 0;  ///< this row's device in calibration.devices
  friend bool operator==(const SplitRecord&, const SplitRecord&) = default;
};

/// One device's calibration as stored and as sent: the device's
/// DeviceCalibration fields at the top level of the JSON form, then "size"
/// and "dim" when set, the summary's fields when set, and "split" when set.
struct CalibrationRow {
  DeviceCalibration device;                   ///< the device's calibration
  std::optional<std::string> size;            ///< Problem::text (a worker's answer has none; the master adds it)
  std::optional<unsigned> dim;                ///< split dimension (0 = x, 1 = y); `wstune split` only
  std::optional<CalibrationSummary> summary;  ///< a wstuned worker's
  std::optional<SplitRecord> split;           ///< `wstune split`'s
  friend bool operator==(const CalibrationRow&, const CalibrationRow&) = default;
};

/// The JSON form: to_json(DeviceCalibration) plus "size", "dim",
/// "budget_ms", "total_units", "full_work_items", "full_ms", "wall_ms" and
/// "split" ({"key","calibration","total_units","refinement" (null when
/// none),"position"}) where set. The store's params column holds it.
nlohmann::json to_json(const CalibrationRow& row);
/// Inverse of to_json(CalibrationRow); throws nlohmann::json::exception when
/// the device's calibration or a present summary or split is malformed (an
/// unreadable refinement only leaves SplitRecord::refinement empty).
CalibrationRow calibration_row_from_json(const nlohmann::json& j);

/// A calibration row as read back from the store.
struct StoredCalibrationRow {
  KernelKey kernel;        ///< the kernel it was stored for
  std::string created_at;  ///< UTC
  CalibrationRow row;      ///< the row
};

/// The model name of calibration rows in the store.
inline constexpr std::string_view kCalibrationModel = "measured";

/// Appends `row` as the calibration of device `fingerprint` (stored already,
/// Store::put_device) for `kernel`; returns its row id. Throws as
/// Store::put_calibration does.
std::int64_t put_calibration_row(Store& store, const std::string& fingerprint, const KernelKey& kernel,
                                 const CalibrationRow& row);

/// The newest calibration row of a device fingerprint and kernel name;
/// nullopt when there is none or it is not a calibration row (another
/// writer's format). Throws StoreError as Store::calibration does.
std::optional<StoredCalibrationRow> newest_calibration_row(const Store& store, std::string_view fingerprint,
                                                           std::string_view kernel);

}  // namespace wstune
