// The one JSON form of a trial and of a stored trial (trial_json.hpp).
#include "format/trial_json.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "wstune/error.hpp"

namespace wstune {

using nlohmann::json;

namespace {

// What a Trial and a stored TrialRecord share: the keys are written here only.
struct Measured {
  const json& params;
  const LocalSize& local;
  const std::optional<Extent>& global;
  TrialStatus status;
  const std::string& error;
  const std::vector<double>& samples_ms;
  json compile_ms, run_ms, verify_ms;  // a number, or null when not recorded
  const std::optional<EnergyMeasurement>& energy;
};

json measured_json(const Measured& m) {
  return json{{"params", m.params},
              {"local", to_json(m.local)},
              {"global", m.global ? to_json(*m.global) : json()},
              {"status", std::string(to_string(m.status))},
              {"error", m.error},
              {"samples_ms", m.samples_ms},
              {"compile_ms", m.compile_ms},
              {"run_ms", m.run_ms},
              {"verify_ms", m.verify_ms},
              {"energy", m.energy ? to_json(*m.energy) : json()}};
}

json optional_ms(const std::optional<double>& ms) {
  return ms ? json(*ms) : json();
}

// ---- reading, each error naming the JSON path ----------------------------------

[[noreturn]] void malformed(std::string_view where, std::string_view key, const std::string& what) {
  throw UsageError(fmt::format("{}.{} {}", where, key, what));
}

const json& required(const json& j, std::string_view where, const char* key) {
  if (!j.is_object()) throw UsageError(fmt::format("{} is {}, not a trial object", where, describe_json(j)));
  const auto it = j.find(key);
  if (it == j.end()) throw UsageError(fmt::format("{} has no field '{}'", where, key));
  return *it;
}

// A present, non-null member, or nullptr.
const json* optional(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

bool finite_ms(const json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
}

std::optional<double> ms_field(const json& j, std::string_view where, const char* key) {
  const json* v = optional(j, key);
  if (!v) return std::nullopt;
  if (!finite_ms(*v)) malformed(where, key, fmt::format("is {}; give a finite number of ms >= 0", describe_json(*v)));
  return v->get<double>();
}

bool bool_field(const json& j, std::string_view where, const char* key) {
  const json* v = optional(j, key);
  if (!v) return false;
  if (!v->is_boolean()) malformed(where, key, fmt::format("is {}, not true or false", describe_json(*v)));
  return v->get<bool>();
}

std::optional<Extent> extent_field(const json& v, std::string_view where, const char* key, std::uint64_t max_dim) {
  if (v.is_null()) return std::nullopt;
  return checked_extent_from_json(v, fmt::format("{}.{}", where, key), max_dim);
}

TrialStatus status_field(const json& j, std::string_view where) {
  const json& v = required(j, where, "status");
  try {
    return parse_trial_status(v.get<std::string>());
  } catch (const std::exception&) {
    malformed(
        where, "status",
        fmt::format("is {}; use correct, compile, runtime, constraints, correctness or timeout", describe_json(v)));
  }
}

std::vector<double> samples_field(const json& j, std::string_view where, TrialStatus status) {
  const json& s = required(j, where, "samples_ms");
  if (!s.is_array()) malformed(where, "samples_ms", fmt::format("is {}, not an array of ms", describe_json(s)));
  std::vector<double> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!finite_ms(s[i])) {
      malformed(where, fmt::format("samples_ms[{}]", i),
                fmt::format("is {}; a kernel time is a finite number of ms >= 0", describe_json(s[i])));
    }
    out.push_back(s[i].get<double>());
  }
  if (status == TrialStatus::correct && out.empty())
    malformed(where, "samples_ms", "is empty, but the trial is correct: it must have its samples");
  return out;
}

std::string error_field(const json& j, std::string_view where) {
  const json* e = optional(j, "error");
  if (!e) return {};
  if (!e->is_string()) malformed(where, "error", fmt::format("is {}, not a string", describe_json(*e)));
  return e->get<std::string>();
}

// What a Trial and a stored TrialRecord share, read into a TrialRecord
// (a time absent or null stays unrecorded): the fields are read here only.
TrialRecord read_measured(const json& j, std::string_view where) {
  TrialRecord m;
  const json* params = j.is_object() ? optional(j, "params") : nullptr;
  m.params = params ? params_from_json(*params, fmt::format("{}.params", where)) : json::object();
  m.local = extent_field(required(j, where, "local"), where, "local", kMaxLocalDim);
  m.global = extent_field(j.value("global", json()), where, "global", kMaxGlobalDim);
  m.status = status_field(j, where);
  m.error = error_field(j, where);
  m.samples_ms = samples_field(j, where, m.status);
  m.compile_ms = ms_field(j, where, "compile_ms");
  m.run_ms = ms_field(j, where, "run_ms");
  m.verify_ms = ms_field(j, where, "verify_ms");
  if (const json* e = optional(j, "energy")) m.energy = energy_from_json(*e, fmt::format("{}.energy", where));
  return m;
}

}  // namespace

json to_json(const Trial& t) {
  json j = measured_json({t.params, t.local, t.global, t.status, t.error, t.kernel.ms, t.compile_ms, t.run_wall_ms,
                          t.verify_ms, t.energy});
  j["verified"] = t.verified;
  j["wall_ms"] = t.wall_ms;
  j["from_store"] = t.from_store;
  return j;
}

json trial_report_json(const Trial& t) {
  json j = to_json(t);
  j["median_ms"] = t.ok() ? json(t.median_ms()) : json();
  return j;
}

json to_json(const TrialRecord& r) {
  json j = measured_json({r.params, r.local, r.global, r.status, r.error, r.samples_ms, optional_ms(r.compile_ms),
                          optional_ms(r.run_ms), optional_ms(r.verify_ms), r.energy});
  j["created_at"] = r.created_at;
  return j;
}

Trial trial_from_json(const json& j, std::string_view where) {
  TrialRecord m = read_measured(j, where);
  Trial t;
  t.params = std::move(m.params);
  t.local = m.local;
  t.global = m.global;
  t.status = m.status;
  t.error = std::move(m.error);
  t.kernel.ms = std::move(m.samples_ms);
  t.compile_ms = m.compile_ms.value_or(0);
  t.run_wall_ms = m.run_ms.value_or(0);
  t.verify_ms = m.verify_ms.value_or(0);
  t.energy = std::move(m.energy);
  t.wall_ms = ms_field(j, where, "wall_ms").value_or(0);
  t.verified = bool_field(j, where, "verified");
  t.from_store = bool_field(j, where, "from_store");
  return t;
}

TrialRecord trial_record_from_json(const json& j, std::string_view where) {
  TrialRecord r = read_measured(j, where);
  const json& created = required(j, where, "created_at");
  if (!created.is_string()) {
    malformed(where, "created_at",
              fmt::format("is {}, not a UTC time such as \"2026-01-01T00:00:00.000Z\"", describe_json(created)));
  }
  r.created_at = created.get<std::string>();
  return r;
}

json to_json(const EnergyMeasurement& e) {
  return json{{"sensor", e.sensor},
              {"energy_j", e.energy_j},
              {"power_w", e.power_w},
              {"window_ms", e.window_ms},
              {"runs", e.runs},
              {"resolution_j", e.resolution_j},
              {"update_period_ms", e.update_period_ms},
              {"read_ms", e.read_ms}};
}

EnergyMeasurement energy_from_json(const json& j, std::string_view where) {
  if (!j.is_object()) throw UsageError(fmt::format("{} is {}, not an energy object", where, describe_json(j)));
  const auto number = [&](const char* key) {
    const json& v = required(j, where, key);
    if (!finite_ms(v)) malformed(where, key, fmt::format("is {}; give a finite number >= 0", describe_json(v)));
    return v.get<double>();
  };
  EnergyMeasurement e;
  const json& sensor = required(j, where, "sensor");
  if (!sensor.is_string()) malformed(where, "sensor", fmt::format("is {}, not a sensor name", describe_json(sensor)));
  e.sensor = sensor.get<std::string>();
  e.energy_j = number("energy_j");
  e.power_w = number("power_w");
  e.window_ms = number("window_ms");
  const double runs = number("runs");
  if (runs != std::floor(runs) || runs > 1e9) malformed(where, "runs", "is not a whole number of runs");
  e.runs = static_cast<unsigned>(runs);
  e.resolution_j = number("resolution_j");
  e.update_period_ms = number("update_period_ms");
  e.read_ms = j.contains("read_ms") ? number("read_ms") : 0;
  return e;
}

json params_from_json(const json& j, std::string_view where) {
  if (!j.is_object())
    throw UsageError(fmt::format("{} is {}, not an object of parameter values", where, describe_json(j)));
  for (const auto& [name, v] : j.items()) {
    if (!(v.is_number() || v.is_boolean() || v.is_string()) ||
        (v.is_number_float() && !std::isfinite(v.get<double>()))) {
      throw UsageError(
          fmt::format("{}.{} is {}, not a number, bool or string", where, bounded(name, 32), describe_json(v)));
    }
  }
  return j;
}

}  // namespace wstune
