#include "format/json.hpp"

#include <fmt/format.h>

#include "format/json_input.hpp"
#include "wstune/error.hpp"

namespace wstune {

using nlohmann::json;

json to_json(const Extent& e) {
  json j{{"x", e.x}, {"y", e.y}, {"dims", e.dims}};
  if (e.dims == 3) j["z"] = e.z;
  return j;
}

Extent extent_from_json(const json& j) {
  return Extent{j.at("x").get<std::size_t>(), j.value("y", std::size_t{1}), j.value("z", std::size_t{1}),
                j.value("dims", 1u)};
}

Extent checked_extent_from_json(const json& j, std::string_view where, std::uint64_t max_dim) {
  if (!j.is_object())
    throw UsageError(fmt::format("{} is {}, not an extent {{\"x\":..,\"dims\":..}}", where, describe_json(j)));
  const auto dims = static_cast<unsigned>(
      j.contains("dims") ? whole_from_json(j.at("dims"), fmt::format("{}.dims", where), 1, 3) : 1);
  if (!j.contains("x")) throw UsageError(fmt::format("{} has no field 'x'", where));
  Extent e{1, 1, 1, dims};
  const char* names[] = {"x", "y", "z"};
  for (unsigned d = 0; d < 3; ++d) {
    if (!j.contains(names[d])) continue;
    const auto n = whole_from_json(j.at(names[d]), fmt::format("{}.{}", where, names[d]), 1, d < dims ? max_dim : 1);
    e.at(d) = static_cast<std::size_t>(n);
  }
  return e;
}

json to_json(const LocalSize& l) {
  return l ? to_json(*l) : json(nullptr);
}

LocalSize local_from_json(const json& j) {
  if (j.is_null()) return std::nullopt;
  return extent_from_json(j);
}

json to_json(const DeviceInfo& d) {
  return json{{"id", d.id()},
              {"platform_index", d.platform_index},
              {"device_index", d.device_index},
              {"platform", d.platform},
              {"name", d.name},
              {"vendor", d.vendor},
              {"type", d.type},
              {"driver_version", d.driver_version},
              {"opencl_version", d.opencl_version},
              {"architecture", d.architecture},
              {"compute_units", d.compute_units},
              {"pe_per_cu", d.pe_per_cu},
              {"total_pe", d.total_pe()},
              {"pe_source", std::string(to_string(d.pe_source))},
              {"pe_detail", d.pe_detail},
              {"max_clock_mhz", d.max_clock_mhz},
              {"max_work_group_size", d.max_work_group_size},
              {"max_work_item_sizes", d.max_work_item_sizes},
              {"local_mem_bytes", d.local_mem_bytes},
              {"global_mem_bytes", d.global_mem_bytes},
              {"preferred_wg_multiple", d.preferred_wg_multiple},
              {"native_float_width", d.native_float_width},
              {"non_uniform_work_groups", d.non_uniform_work_groups},
              {"fingerprint", d.fingerprint()}};
}

DeviceInfo device_info_from_json(const json& j) {
  DeviceInfo d;
  d.platform_index = j.value("platform_index", 0u);
  d.device_index = j.value("device_index", 0u);
  d.platform = j.value("platform", "");
  d.name = j.at("name").get<std::string>();
  d.vendor = j.value("vendor", "");
  d.type = j.value("type", "");
  d.driver_version = j.value("driver_version", "");
  d.opencl_version = j.value("opencl_version", "");
  d.architecture = j.value("architecture", "");
  d.compute_units = j.at("compute_units").get<unsigned>();
  d.pe_per_cu = j.at("pe_per_cu").get<unsigned>();
  const std::string src = j.value("pe_source", "estimate");
  d.pe_source = src == "extension"  ? PeSource::extension
                : src == "table"    ? PeSource::table
                : src == "override" ? PeSource::override_
                                    : PeSource::estimate;
  d.pe_detail = j.value("pe_detail", "");
  d.max_clock_mhz = j.value("max_clock_mhz", 0u);
  d.max_work_group_size = j.value("max_work_group_size", std::size_t{0});
  d.max_work_item_sizes = j.value("max_work_item_sizes", std::vector<std::size_t>{});
  d.local_mem_bytes = j.value("local_mem_bytes", std::uint64_t{0});
  d.global_mem_bytes = j.value("global_mem_bytes", std::uint64_t{0});
  d.preferred_wg_multiple = j.value("preferred_wg_multiple", std::size_t{0});
  d.native_float_width = j.value("native_float_width", 0u);
  d.non_uniform_work_groups = j.value("non_uniform_work_groups", false);
  return d;
}

json to_json(const Samples& s) {
  return json{{"samples_ms", s.ms}, {"median_ms", s.median()}, {"min_ms", s.min()}};
}

json to_json(const RunResult& r) {
  return json{{"status", std::string(to_string(r.status))},
              {"error", r.error},
              {"local", to_json(r.local)},
              {"kernel", to_json(r.kernel)},
              {"h2d", to_json(r.h2d)},
              {"d2h", to_json(r.d2h)},
              {"wall_ms", r.wall_ms}};
}

}  // namespace wstune
