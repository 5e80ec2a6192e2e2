// wstune::Store: split-model calibrations (history kept, the newest read).
#include <string>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "store/store_impl.hpp"

namespace wstune {

using nlohmann::json;

std::int64_t Store::Impl::insert_calibration(const StoredCalibration& c, const std::string& uuid) {
  check_json_depth(c.params, "a calibration's params");
  auto& ins = stmt(
      "INSERT INTO split_calibrations(uuid,device_id,kernel_id,model,params,created_at) "
      "VALUES(?,?,?,?,?,?)");
  ins.bind(1, uuid);
  ins.bind(2, device_id(c.device_fingerprint));
  ins.bind(3, kernel_id(c.kernel));
  ins.bind(4, c.model);
  ins.bind(5, c.params.dump());
  ins.bind(6, c.created_at.empty() ? utc_now() : c.created_at);
  ins.exec();
  return db->getLastInsertRowid();
}

std::int64_t Store::put_calibration(const StoredCalibration& c) {
  return impl_->guard("store a calibration", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const auto id = impl_->insert_calibration(c, new_uuid());
    tx.commit();
    return id;
  });
}

std::optional<StoredCalibration> Store::calibration(std::string_view fingerprint, std::string_view kernel,
                                                    std::string_view model) const {
  return impl_->guard("read a calibration", [&]() -> std::optional<StoredCalibration> {
    auto& q = impl_->stmt(
        "SELECT d.fingerprint,k.name,k.source_hash,k.build_options,c.model,c.params,c.created_at "
        "FROM split_calibrations c JOIN devices d ON d.id=c.device_id JOIN kernels k "
        "ON k.id=c.kernel_id WHERE d.fingerprint=? AND k.name=? AND c.model=? "
        "ORDER BY c.id DESC LIMIT 1");
    q.bind(1, std::string(fingerprint));
    q.bind(2, std::string(kernel));
    q.bind(3, std::string(model));
    if (!q.executeStep()) return std::nullopt;
    return StoredCalibration{q.getColumn(0).getString(),
                             {q.getColumn(1).getString(), q.getColumn(2).getString(), q.getColumn(3).getString()},
                             q.getColumn(4).getString(),
                             impl_->stored_json(q.getColumn(5).getString(), "a calibration's params"),
                             q.getColumn(6).getString()};
  });
}

}  // namespace wstune
