// A calibration row: its one JSON form and its place in the store.
#include "store/calibration_row.hpp"

namespace wstune {

using nlohmann::json;

namespace {

json split_json(const SplitRecord& s) {
  return {{"key", s.key},
          {"calibration", to_json(s.calibration)},
          {"total_units", s.total_units},
          {"refinement", s.refinement ? to_json(*s.refinement) : json(nullptr)},
          {"position", s.position}};
}

// A refinement of another format is none: the split is refined anew.
std::optional<RefineOutcome> refinement_from_json(const json& s) {
  if (!s.contains("refinement") || s["refinement"].is_null()) return std::nullopt;
  try {
    return refine_outcome_from_json(s["refinement"]);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

SplitRecord split_from_json(const json& s) {
  return SplitRecord{s.value("key", ""), calibration_from_json(s.at("calibration")),
                     s.value("total_units", std::size_t{0}), refinement_from_json(s),
                     s.value("position", std::size_t{0})};
}

}  // namespace

json to_json(const CalibrationRow& row) {
  json j = to_json(row.device);
  if (row.summary) {
    j["budget_ms"] = row.summary->budget_ms;
    j["total_units"] = row.summary->total_units;
    j["full_work_items"] = row.summary->full_work_items;
    j["full_ms"] = row.summary->full_ms;
    j["wall_ms"] = row.summary->wall_ms;
  }
  if (row.size) j["size"] = *row.size;
  if (row.dim) j["dim"] = *row.dim;
  if (row.split) j["split"] = split_json(*row.split);
  return j;
}

CalibrationRow calibration_row_from_json(const json& j) {
  CalibrationRow row;
  row.device = device_calibration_from_json(j);
  if (j.contains("size")) row.size = j.at("size").get<std::string>();
  if (j.contains("dim")) row.dim = j.at("dim").get<unsigned>();
  if (j.contains("full_ms")) {
    row.summary = CalibrationSummary{j.at("budget_ms").get<double>(), j.at("total_units").get<std::size_t>(),
                                     j.at("full_work_items").get<double>(), j.at("full_ms").get<double>(),
                                     j.at("wall_ms").get<double>()};
  }
  if (j.contains("split")) row.split = split_from_json(j.at("split"));
  return row;
}

std::int64_t put_calibration_row(Store& store, const std::string& fingerprint, const KernelKey& kernel,
                                 const CalibrationRow& row) {
  return store.put_calibration(
      StoredCalibration{fingerprint, kernel, std::string(kCalibrationModel), to_json(row), ""});
}

std::optional<StoredCalibrationRow> newest_calibration_row(const Store& store, std::string_view fingerprint,
                                                           std::string_view kernel) {
  const auto c = store.calibration(fingerprint, kernel, kCalibrationModel);
  if (!c) return std::nullopt;
  try {
    return StoredCalibrationRow{c->kernel, c->created_at, calibration_row_from_json(c->params)};
  } catch (const json::exception&) {
    return std::nullopt;  // another writer's format
  }
}

}  // namespace wstune
