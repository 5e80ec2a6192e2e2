// The one JSON form of a trial and of a stored trial (trial_json.hpp).
#include "format/trial_json.hpp"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
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
              {"verify_ms", m.verify_ms}};
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

double ms_field(const json& j, std::string_view where, const char* key) {
  const json* v = optional(j, key);
  if (!v) return 0;
  if (!v->is_number() || !std::isfinite(v->get<double>()))
    malformed(where, key, fmt::format("is {}, not a number of ms", describe_json(*v)));
  return v->get<double>();
}

bool bool_field(const json& j, std::string_view where, const char* key) {
  const json* v = optional(j, key);
  if (!v) return false;
  if (!v->is_boolean()) malformed(where, key, fmt::format("is {}, not true or false", describe_json(*v)));
  return v->get<bool>();
}

std::optional<Extent> extent_field(const json& v, std::string_view where, const char* key) {
  if (v.is_null()) return std::nullopt;
  try {
    if (!v.is_object()) throw std::invalid_argument("not an object");
    return extent_from_json(v);
  } catch (const std::exception&) {
    malformed(where, key, fmt::format("is {}, not an extent {{\"x\":..,\"dims\":..}} or null", describe_json(v)));
  }
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

std::vector<double> samples_field(const json& j, std::string_view where) {
  const json& s = required(j, where, "samples_ms");
  if (!s.is_array()) malformed(where, "samples_ms", fmt::format("is {}, not an array of ms", describe_json(s)));
  std::vector<double> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s[i].is_number())
      malformed(where, fmt::format("samples_ms[{}]", i), fmt::format("is {}, not a number of ms", describe_json(s[i])));
    out.push_back(s[i].get<double>());
  }
  return out;
}

}  // namespace

json to_json(const Trial& t) {
  json j = measured_json(
      {t.params, t.local, t.global, t.status, t.error, t.kernel.ms, t.compile_ms, t.run_wall_ms, t.verify_ms});
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
                          optional_ms(r.run_ms), optional_ms(r.verify_ms)});
  j["created_at"] = r.created_at;
  return j;
}

Trial trial_from_json(const json& j, std::string_view where) {
  Trial t;
  t.params = required(j, where, "params");
  if (!t.params.is_object())
    malformed(where, "params", fmt::format("is {}, not an object of parameter values", describe_json(t.params)));
  t.local = extent_field(required(j, where, "local"), where, "local");
  t.global = extent_field(j.value("global", json()), where, "global");
  t.status = status_field(j, where);
  if (const json* e = optional(j, "error")) {
    if (!e->is_string()) malformed(where, "error", fmt::format("is {}, not a string", describe_json(*e)));
    t.error = e->get<std::string>();
  }
  t.kernel.ms = samples_field(j, where);
  t.compile_ms = ms_field(j, where, "compile_ms");
  t.run_wall_ms = ms_field(j, where, "run_ms");
  t.verify_ms = ms_field(j, where, "verify_ms");
  t.wall_ms = ms_field(j, where, "wall_ms");
  t.verified = bool_field(j, where, "verified");
  t.from_store = bool_field(j, where, "from_store");
  return t;
}

}  // namespace wstune
