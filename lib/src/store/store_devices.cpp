// wstune::Store: devices, kernels and problems (the keys every other row refers to).
#include <set>
#include <string>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "store/store_impl.hpp"

namespace wstune {

using nlohmann::json;

std::int64_t Store::Impl::insert_device(const DeviceInfo& d) {
  auto& ins = stmt(
      "INSERT INTO devices(fingerprint,name,vendor,type,platform,driver_version,opencl_version,architecture,"
      "compute_units,pe_per_cu,pe_source,pe_detail,max_clock_mhz,max_work_group_size,max_work_item_sizes,"
      "local_mem_bytes,global_mem_bytes,preferred_wg_multiple,native_float_width,extensions,info_json,first_seen)"
      " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(fingerprint) DO NOTHING");
  int i = 1;
  ins.bind(i++, d.fingerprint());
  ins.bind(i++, d.name);
  ins.bind(i++, d.vendor);
  ins.bind(i++, d.type);
  ins.bind(i++, d.platform);
  ins.bind(i++, d.driver_version);
  ins.bind(i++, d.opencl_version);
  ins.bind(i++, d.architecture);
  ins.bind(i++, static_cast<std::int64_t>(d.compute_units));
  ins.bind(i++, static_cast<std::int64_t>(d.pe_per_cu));
  ins.bind(i++, std::string(to_string(d.pe_source)));
  ins.bind(i++, d.pe_detail);
  ins.bind(i++, static_cast<std::int64_t>(d.max_clock_mhz));
  ins.bind(i++, static_cast<std::int64_t>(d.max_work_group_size));
  ins.bind(i++, json(d.max_work_item_sizes).dump());
  ins.bind(i++, static_cast<std::int64_t>(d.local_mem_bytes));
  ins.bind(i++, static_cast<std::int64_t>(d.global_mem_bytes));
  ins.bind(i++, static_cast<std::int64_t>(d.preferred_wg_multiple));
  ins.bind(i++, static_cast<std::int64_t>(d.native_float_width));
  ins.bind(i++, json(d.extensions).dump());
  json info = to_json(d);
  info["extensions"] = d.extensions;
  ins.bind(i++, info.dump());
  ins.bind(i++, utc_now());
  ins.exec();
  return device_id(d.fingerprint());
}

std::int64_t Store::Impl::device_id(std::string_view fingerprint) {
  auto& q = stmt("SELECT id FROM devices WHERE fingerprint=?");
  q.bind(1, std::string(fingerprint));
  if (!q.executeStep()) {
    throw UsageError(fmt::format("device {} is not in database {}; store it first (put_device)", fingerprint, path));
  }
  return q.getColumn(0).getInt64();
}

std::int64_t Store::Impl::kernel_id(const KernelKey& k) {
  auto& ins = stmt("INSERT INTO kernels(name,source_hash,build_options) VALUES(?,?,?) ON CONFLICT DO NOTHING");
  ins.bind(1, k.name);
  ins.bind(2, k.source_hash);
  ins.bind(3, k.build_options);
  ins.exec();
  auto& q = stmt("SELECT id FROM kernels WHERE name=? AND source_hash=? AND build_options=?");
  q.bind(1, k.name);
  q.bind(2, k.source_hash);
  q.bind(3, k.build_options);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

std::int64_t Store::Impl::problem_id(const ProblemKey& p) {
  if (p.global.count() == 0 || p.global.dims < 1 || p.global.dims > 3) {
    throw UsageError(fmt::format("global size {} is not a valid 1-, 2- or 3-D NDRange", to_string(p.global)));
  }
  const std::size_t y = p.global.dims < 2 ? 1 : p.global.y;
  const std::size_t z = p.global.dims < 3 ? 1 : p.global.z;
  auto& ins = stmt(
      "INSERT INTO problems(dims,global_x,global_y,global_z,size_text) VALUES(?,?,?,?,?) "
      "ON CONFLICT DO NOTHING");
  ins.bind(1, static_cast<int>(p.global.dims));
  ins.bind(2, static_cast<std::int64_t>(p.global.x));
  ins.bind(3, static_cast<std::int64_t>(y));
  ins.bind(4, static_cast<std::int64_t>(z));
  ins.bind(5, p.size_text);
  ins.exec();
  auto& q = stmt("SELECT id FROM problems WHERE dims=? AND global_x=? AND global_y=? AND global_z=? AND size_text=?");
  q.bind(1, static_cast<int>(p.global.dims));
  q.bind(2, static_cast<std::int64_t>(p.global.x));
  q.bind(3, static_cast<std::int64_t>(y));
  q.bind(4, static_cast<std::int64_t>(z));
  q.bind(5, p.size_text);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// ---- devices, kernels, problems --------------------------------------------------

std::int64_t Store::put_device(const DeviceInfo& d) {
  return impl_->guard("store a device", [&] { return impl_->insert_device(d); });
}

namespace {
DeviceInfo device_from_row(SQLite::Statement& q) {
  const json info = json::parse(q.getColumn(0).getString());
  DeviceInfo d = device_info_from_json(info);
  d.extensions = info.value("extensions", std::vector<std::string>{});
  return d;
}
}  // namespace

std::optional<DeviceInfo> Store::device(std::string_view fingerprint) const {
  return impl_->guard("read a device", [&]() -> std::optional<DeviceInfo> {
    auto& q = impl_->stmt("SELECT info_json FROM devices WHERE fingerprint=?");
    q.bind(1, std::string(fingerprint));
    if (!q.executeStep()) return std::nullopt;
    return device_from_row(q);
  });
}

std::vector<DeviceInfo> Store::devices() const {
  return impl_->guard("read devices", [&] {
    std::vector<DeviceInfo> out;
    auto& q = impl_->stmt("SELECT info_json FROM devices ORDER BY id");
    while (q.executeStep()) out.push_back(device_from_row(q));
    return out;
  });
}

std::int64_t Store::put_kernel(const KernelKey& k) {
  return impl_->guard("store a kernel", [&] { return impl_->kernel_id(k); });
}

std::vector<KernelKey> Store::kernels(std::string_view name) const {
  return impl_->guard("read kernels", [&] {
    auto& q = impl_->stmt("SELECT name,source_hash,build_options FROM kernels WHERE name=? ORDER BY id");
    q.bind(1, std::string(name));
    std::vector<KernelKey> out;
    while (q.executeStep())
      out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getString()});
    return out;
  });
}

std::int64_t Store::put_problem(const ProblemKey& p) {
  return impl_->guard("store a problem", [&] { return impl_->problem_id(p); });
}

}  // namespace wstune
