// wstune::Store: best configurations (recorded, derived from a session, looked up).
#include <algorithm>
#include <array>
#include <set>
#include <string>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "store/store_impl.hpp"

namespace wstune {

using nlohmann::json;

std::optional<double> BestConfig::ratio_to_null() const {
  if (!null_ms || median_ms <= 0) return std::nullopt;
  return *null_ms / median_ms;
}

std::optional<double> BestConfig::ratio_to_rule() const {
  if (!rule_ms || median_ms <= 0) return std::nullopt;
  return *rule_ms / median_ms;
}

// ---- best configurations ----------------------------------------------------------------

std::int64_t Store::Impl::insert_best(const BestConfig& b, const std::string& uuid, const std::string& at) {
  check_json_depth(b.params, "a best configuration's params");
  const auto dev = device_id(b.device_fingerprint);
  const auto ker = kernel_id(b.kernel);
  const auto pro = problem_id(b.problem);
  auto& ins = stmt(
      "INSERT INTO best_configs(uuid,device_id,kernel_id,problem_id,session_id,config,local_dims,local_x,local_y,"
      "local_z,median_ms,null_ms,rule_ms,ratio_to_null,ratio_to_rule,recorded_at,params,global_dims,global_x,"
      "global_y,global_z) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, uuid);
  ins.bind(2, static_cast<std::int64_t>(dev));
  ins.bind(3, static_cast<std::int64_t>(ker));
  ins.bind(4, static_cast<std::int64_t>(pro));
  bind_opt(ins, 5, b.session_id);
  ins.bind(6, configuration_key(b.params, b.local));
  bind_local(ins, 7, b.local);
  ins.bind(11, b.median_ms);
  bind_opt(ins, 12, b.null_ms);
  bind_opt(ins, 13, b.rule_ms);
  bind_opt(ins, 14, b.ratio_to_null());
  bind_opt(ins, 15, b.ratio_to_rule());
  ins.bind(16, at);
  ins.bind(17, b.params.dump());
  bind_extent(ins, 18, b.global);
  ins.exec();
  ++generation;
  return db->getLastInsertRowid();
}

namespace {

constexpr std::string_view kBestSelect =
    "SELECT d.fingerprint,k.name,k.source_hash,k.build_options,p.dims,p.global_x,p.global_y,p.global_z,"
    "p.size_text,b.local_dims,b.local_x,b.local_y,b.local_z,b.median_ms,b.null_ms,b.rule_ms,b.session_id,b.id,"
    "b.uuid,b.recorded_at,b.params,b.global_dims,b.global_x,b.global_y,b.global_z "
    "FROM best_configs b JOIN devices d ON d.id=b.device_id JOIN kernels k ON k.id=b.kernel_id "
    "JOIN problems p ON p.id=b.problem_id ";
// The same columns with the join order forced (CROSS JOIN: devices, then
// kernels, then best_configs through best_key) for the look-up's scoped
// queries: without it the planner may scan every best row.
constexpr std::string_view kBestSelectScoped =
    "SELECT d.fingerprint,k.name,k.source_hash,k.build_options,p.dims,p.global_x,p.global_y,p.global_z,"
    "p.size_text,b.local_dims,b.local_x,b.local_y,b.local_z,b.median_ms,b.null_ms,b.rule_ms,b.session_id,b.id,"
    "b.uuid,b.recorded_at,b.params,b.global_dims,b.global_x,b.global_y,b.global_z "
    "FROM devices d CROSS JOIN kernels k CROSS JOIN best_configs b ON b.device_id=d.id AND b.kernel_id=k.id "
    "CROSS JOIN problems p ON p.id=b.problem_id ";
constexpr std::string_view kCurrentOnly =
    "b.id=(SELECT max(b2.id) FROM best_configs b2 WHERE b2.device_id=b.device_id AND b2.kernel_id=b.kernel_id "
    "AND b2.problem_id=b.problem_id) ";

BestConfig best_from_row(SQLite::Statement& q) {
  BestConfig b;
  b.device_fingerprint = q.getColumn(0).getString();
  b.kernel = {q.getColumn(1).getString(), q.getColumn(2).getString(), q.getColumn(3).getString()};
  b.problem.global = col_problem_extent(q, 4);
  b.problem.size_text = q.getColumn(8).getString();
  b.local = col_local(q, 9);
  b.median_ms = q.getColumn(13).getDouble();
  b.null_ms = col_opt_double(q.getColumn(14));
  b.rule_ms = col_opt_double(q.getColumn(15));
  b.session_id = col_opt_int(q.getColumn(16));
  b.id = q.getColumn(17).getInt64();
  b.uuid = q.getColumn(18).getString();
  b.recorded_at = q.getColumn(19).getString();
  b.params = json::parse(q.getColumn(20).getString());
  b.global = col_extent(q, 21);
  return b;
}
}  // namespace

std::int64_t Store::record_best(const BestConfig& b) {
  return impl_->guard("store a best configuration", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    if (b.session_id) {
      // Only a session's writer records its best (one writer per session):
      // older rows of the same key stay as history, the newest is current.
      auto& q = impl_->stmt("SELECT host,pid FROM sessions WHERE id=?");
      q.bind(1, static_cast<std::int64_t>(*b.session_id));
      if (q.executeStep() && !q.getColumn(1).isNull() &&
          (q.getColumn(1).getInt64() != getpid() || q.getColumn(0).getString() != host_name())) {
        throw StoreError(
            fmt::format("database {}: session {} is written by process {} on {}, not by this one; "
                        "only its writer records its best configuration",
                        impl_->path, *b.session_id, q.getColumn(1).getInt64(), q.getColumn(0).getString()));
      }
      q.reset();
    }
    const auto id = impl_->insert_best(b, new_uuid(), utc_now());
    tx.commit();
    return id;
  });
}

std::optional<BestConfig> Store::derive_best(std::int64_t session_id, const LocalSize* rule_local) {
  const auto s = session(session_id);
  if (!s) throw UsageError(fmt::format("session {} is not in database {}", session_id, impl_->path));
  const auto ts = trials(session_id);
  const TrialRecord* best = nullptr;
  std::optional<double> null_ms, rule_ms;
  for (const TrialRecord& t : ts) {
    if (t.status != TrialStatus::correct || !t.median_ms()) continue;
    if (!t.local && !null_ms) null_ms = t.median_ms();  // the first NULL trial: the baseline
    if (rule_local && t.local == *rule_local) rule_ms = t.median_ms();
    if (!best || *t.median_ms() < *best->median_ms()) best = &t;
  }
  if (!best) return std::nullopt;
  BestConfig b;
  b.device_fingerprint = s->device_fingerprint;
  b.kernel = s->kernel;
  b.problem = s->problem;
  b.params = best->params;
  b.local = best->local;
  b.global = best->global;
  b.median_ms = *best->median_ms();
  b.null_ms = null_ms;
  b.rule_ms = rule_ms;
  b.session_id = session_id;
  b.id = record_best(b);
  return b;
}

std::vector<BestConfig> Store::best_configs(const BestFilter& f) const {
  return impl_->guard("read best configurations", [&] {
    std::string sql(kBestSelect);
    sql += "WHERE 1 ";
    if (!f.history) sql += "AND " + std::string(kCurrentOnly);
    if (!f.device.empty()) sql += "AND (d.fingerprint=:dev OR instr(lower(d.name), lower(:dev)) > 0) ";
    if (!f.kernel.empty()) sql += "AND k.name=:kernel ";
    if (f.global) sql += "AND p.dims=:dims AND p.global_x=:gx AND p.global_y=:gy AND p.global_z=:gz ";
    sql += "ORDER BY b.id DESC";
    auto& q = impl_->stmt(sql);
    if (!f.device.empty()) q.bind(":dev", f.device);
    if (!f.kernel.empty()) q.bind(":kernel", f.kernel);
    if (f.global) {
      q.bind(":dims", static_cast<int>(f.global->dims));
      q.bind(":gx", static_cast<std::int64_t>(f.global->x));
      q.bind(":gy", static_cast<std::int64_t>(f.global->dims < 2 ? 1 : f.global->y));
      q.bind(":gz", static_cast<std::int64_t>(f.global->dims < 3 ? 1 : f.global->z));
    }
    std::vector<BestConfig> out;
    while (q.executeStep()) out.push_back(best_from_row(q));
    return out;
  });
}

std::optional<BestConfig> Store::exact_best(std::string_view fingerprint, const KernelKey& kernel,
                                            const Extent& global) const {
  return impl_->guard("look up a best configuration", [&]() -> std::optional<BestConfig> {
    auto& q = impl_->stmt(std::string(kBestSelectScoped) +
                          "WHERE d.fingerprint=? AND k.name=? AND k.source_hash=? AND k.build_options=? AND p.dims=? "
                          "AND p.global_x=? AND p.global_y=? AND p.global_z=? ORDER BY b.id DESC LIMIT 1");
    q.bind(1, std::string(fingerprint));
    q.bind(2, kernel.name);
    q.bind(3, kernel.source_hash);
    q.bind(4, kernel.build_options);
    q.bind(5, static_cast<int>(global.dims));
    q.bind(6, static_cast<std::int64_t>(global.x));
    q.bind(7, static_cast<std::int64_t>(global.dims < 2 ? 1 : global.y));
    q.bind(8, static_cast<std::int64_t>(global.dims < 3 ? 1 : global.z));
    if (!q.executeStep()) return std::nullopt;
    return best_from_row(q);
  });
}

std::vector<BestCandidate> Store::candidates(const KernelKey& kernel, unsigned dims, std::string_view fingerprint,
                                             std::string_view architecture, std::string_view vendor,
                                             std::string_view type) const {
  return impl_->guard("look up best configurations", [&] {
    // Join order forced (CROSS JOIN): devices, kernels, then best_configs via
    // best_key; the newest row per (device, kernel, problem) is kept in C++.
    std::string sql =
        "SELECT b.device_id,b.kernel_id,b.problem_id,b.id,p.dims,p.global_x,p.global_y,p.global_z,b.local_dims,"
        "b.local_x,b.local_y,b.local_z,b.median_ms,b.null_ms FROM devices d CROSS JOIN kernels k CROSS JOIN "
        "best_configs b "
        "ON b.device_id=d.id AND b.kernel_id=k.id CROSS JOIN problems p ON p.id=b.problem_id WHERE k.name=:kernel "
        "AND k.source_hash=:hash AND k.build_options=:opts AND p.dims=:dims ";
    if (!fingerprint.empty())
      sql += "AND d.fingerprint=:fp ";
    else if (!architecture.empty())
      sql += "AND d.architecture=:arch ";
    else
      sql += "AND d.vendor=:vendor AND d.type=:type ";
    sql += "ORDER BY b.id DESC";
    auto& q = impl_->stmt(sql);
    q.bind(":kernel", kernel.name);
    q.bind(":hash", kernel.source_hash);
    q.bind(":opts", kernel.build_options);
    q.bind(":dims", static_cast<int>(dims));
    if (!fingerprint.empty())
      q.bind(":fp", std::string(fingerprint));
    else if (!architecture.empty())
      q.bind(":arch", std::string(architecture));
    else {
      q.bind(":vendor", std::string(vendor));
      q.bind(":type", std::string(type));
    }
    std::vector<BestCandidate> out;
    std::set<std::array<std::int64_t, 3>> seen;
    while (q.executeStep()) {
      if (!seen.insert({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()}).second) {
        continue;  // an older history row of a key already seen
      }
      BestCandidate c{q.getColumn(3).getInt64(), col_problem_extent(q, 4), col_local(q, 8), q.getColumn(12).getDouble(),
                      std::nullopt};
      if (!q.getColumn(13).isNull()) c.null_ms = q.getColumn(13).getDouble();
      out.push_back(c);
    }
    return out;
  });
}

std::optional<BestConfig> Store::best_by_id(std::int64_t id) const {
  return impl_->guard("read a best configuration", [&]() -> std::optional<BestConfig> {
    auto& q = impl_->stmt(std::string(kBestSelect) + "WHERE b.id=?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    return best_from_row(q);
  });
}

}  // namespace wstune
