// wstune::Store: split runs (a split's shares and times per device).
#include <string>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "store/store_impl.hpp"

namespace wstune {

using nlohmann::json;

// ---- split runs ------------------------------------------------------------------------------

std::int64_t Store::Impl::insert_split(const SplitRun& run, const std::string& uuid) {
  check_json_depth(run.detail, "a split run's detail");
  auto& ins = stmt(
      "INSERT INTO split_runs(uuid,kernel_id,problem_id,model,makespan_ms,detail,created_at,host) "
      "VALUES(?,?,?,?,?,?,?,?)");
  ins.bind(1, uuid);
  ins.bind(2, kernel_id(run.kernel));
  ins.bind(3, problem_id(run.problem));
  ins.bind(4, run.model);
  ins.bind(5, run.makespan_ms);
  ins.bind(6, run.detail.dump());
  ins.bind(7, run.created_at.empty() ? utc_now() : run.created_at);
  ins.bind(8, run.host.empty() ? host_name() : run.host);
  ins.exec();
  const auto id = db->getLastInsertRowid();
  int pos = 0;
  for (const SplitShare& s : run.devices) {
    auto& d = stmt("INSERT INTO split_run_devices(split_run_id,position,device_id,share,time_ms) VALUES(?,?,?,?,?)");
    d.bind(1, id);
    d.bind(2, pos++);
    d.bind(3, device_id(s.device_fingerprint));
    d.bind(4, s.share);
    d.bind(5, s.time_ms);
    d.exec();
  }
  return id;
}

std::int64_t Store::record_split_run(const SplitRun& run) {
  return impl_->guard("store a split run", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const auto id = impl_->insert_split(run, new_uuid());
    tx.commit();
    return id;
  });
}

std::vector<SplitRun> Store::split_runs(std::string_view kernel) const {
  Impl& m = *impl_;
  return m.guard("read split runs", [&] {
    std::vector<SplitRun> out;
    std::vector<std::int64_t> ids;
    auto& q = m.stmt(
        "SELECT r.id,k.name,k.source_hash,k.build_options,p.dims,p.global_x,p.global_y,p.global_z,"
        "p.size_text,r.model,r.makespan_ms,r.detail,r.created_at,r.host FROM split_runs r "
        "JOIN kernels k ON k.id=r.kernel_id JOIN problems p ON p.id=r.problem_id "
        "WHERE ?='' OR k.name=? ORDER BY r.id");
    q.bind(1, std::string(kernel));
    q.bind(2, std::string(kernel));
    while (q.executeStep()) {
      SplitRun r;
      ids.push_back(q.getColumn(0).getInt64());
      r.kernel = {q.getColumn(1).getString(), q.getColumn(2).getString(), q.getColumn(3).getString()};
      r.problem.global = col_problem_extent(q, 4);
      r.problem.size_text = q.getColumn(8).getString();
      r.model = q.getColumn(9).getString();
      r.makespan_ms = q.getColumn(10).getDouble();
      r.detail = m.stored_json(q.getColumn(11).getString(), "a split run's detail");
      r.created_at = q.getColumn(12).getString();
      r.host = q.getColumn(13).getString();
      out.push_back(std::move(r));
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      auto& d = m.stmt(
          "SELECT d.fingerprint,s.share,s.time_ms FROM split_run_devices s JOIN devices d "
          "ON d.id=s.device_id WHERE s.split_run_id=? ORDER BY s.position");
      d.bind(1, static_cast<std::int64_t>(ids[i]));
      while (d.executeStep()) {
        out[i].devices.push_back({d.getColumn(0).getString(), d.getColumn(1).getDouble(), d.getColumn(2).getDouble()});
      }
    }
    return out;
  });
}

}  // namespace wstune
