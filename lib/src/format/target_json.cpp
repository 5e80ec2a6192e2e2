// The one JSON form of a tuning target and of trial timing (target_json.hpp).
#include "format/target_json.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "wstune/error.hpp"

namespace wstune {

using nlohmann::json;

namespace {

// `read()` of a field of `where`, nlohmann's exceptions (a missing key, a
// wrong type) turned into a UsageError naming the document.
template <class Read>
auto field(std::string_view where, Read read) {
  try {
    return read();
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("{}: {}", where, bounded(e.what())));
  }
}

Priority priority_from(const std::string& text, std::string_view where) {
  for (const Priority p : {Priority::x, Priority::y, Priority::none})
    if (to_string(p) == text) return p;
  throw UsageError(fmt::format("{}: priority {} is not x, y or none", where, describe_json(text)));
}

// A bound written as JSON: JSON has no NaN or infinity (nlohmann writes
// null), so a non-finite or negative bound is 0, "off".
double bound(double v) {
  return std::isfinite(v) && v > 0 ? v : 0.0;
}

}  // namespace

json to_json(const TuneTarget& t) {
  return {{"kernel", t.kernel},
          {"size", t.size},
          {"global", to_json(t.global)},
          {"problem", to_json(t.problem)},
          {"any_shape", t.limits.any_shape},
          {"priority", std::string(to_string(t.priority))},
          {"max_work_group_size", t.limits.max_work_group_size},
          {"kernel_work_group_size", t.limits.kernel_work_group_size},
          {"max_work_item_sizes", t.limits.max_work_item_sizes},
          {"local_mem_bytes", t.limits.local_mem_bytes},
          {"kernel_local_mem_bytes", t.limits.kernel_local_mem_bytes},
          {"local_mem_per_item_bytes", t.limits.local_mem_per_item_bytes},
          {"pe_per_cu", t.pe_per_cu},
          {"device_name", t.device_name},
          {"device_id", t.device_id},
          {"device_fingerprint", t.device_fingerprint},
          {"device", to_json(t.device)},
          {"reference_params", t.reference_params},
          {"rejected_references", t.rejected_references},
          {"energy_sensor", t.energy_sensor},
          {"energy_note", t.energy_note}};
}

TuneTarget tune_target_from_json(const json& j, std::string_view where) {
  return field(where, [&] {
    TuneTarget t;
    t.kernel = j.at("kernel").get<std::string>();
    t.size = j.at("size").get<std::string>();
    t.global = extent_from_json(j.at("global"));
    t.problem = extent_from_json(j.at("problem"));
    t.priority = priority_from(j.at("priority").get<std::string>(), where);
    t.limits.any_shape = j.at("any_shape").get<bool>();
    t.limits.max_work_group_size = j.at("max_work_group_size").get<std::size_t>();
    t.limits.kernel_work_group_size = j.at("kernel_work_group_size").get<std::size_t>();
    t.limits.max_work_item_sizes = j.at("max_work_item_sizes").get<std::vector<std::size_t>>();
    t.limits.local_mem_bytes = j.at("local_mem_bytes").get<std::uint64_t>();
    t.limits.kernel_local_mem_bytes = j.at("kernel_local_mem_bytes").get<std::uint64_t>();
    t.limits.local_mem_per_item_bytes = j.at("local_mem_per_item_bytes").get<std::uint64_t>();
    t.pe_per_cu = j.at("pe_per_cu").get<unsigned>();
    t.device_name = j.at("device_name").get<std::string>();
    t.device_id = j.at("device_id").get<std::string>();
    t.device_fingerprint = j.at("device_fingerprint").get<std::string>();
    if (j.contains("device")) t.device = device_info_from_json(j.at("device"));
    t.reference_params = j.at("reference_params");
    t.rejected_references = j.at("rejected_references").get<std::vector<json>>();
    t.energy_sensor = j.value("energy_sensor", std::string());
    t.energy_note = j.value("energy_note", std::string());
    return t;
  });
}

json to_json(const TimingOptions& t) {
  return {{"warmup", t.warmup},
          {"repetitions", t.repetitions},
          {"min_timed_ms", bound(t.min_timed_ms)},
          {"max_repetitions", t.max_repetitions},
          {"max_median_error", bound(t.max_median_error)},
          {"max_timed_ms", bound(t.max_timed_ms)},
          {"steady_warmup", bound(t.steady_warmup)}};
}

TimingOptions timing_from_json(const json& j, std::string_view where) {
  return field(where, [&] {
    const TimingOptions defaults;
    TimingOptions t;
    t.warmup = j.at("warmup").get<unsigned>();
    t.repetitions = j.at("repetitions").get<unsigned>();
    t.min_timed_ms = j.value("min_timed_ms", defaults.min_timed_ms);
    t.max_repetitions = j.value("max_repetitions", defaults.max_repetitions);
    t.max_median_error = j.value("max_median_error", defaults.max_median_error);
    t.max_timed_ms = j.value("max_timed_ms", defaults.max_timed_ms);
    t.steady_warmup = j.value("steady_warmup", defaults.steady_warmup);
    return t;
  });
}

}  // namespace wstune
