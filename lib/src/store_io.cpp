// wstune::Store export and import (format: docs/store.md).
#include <set>

#include <fmt/format.h>

#include "store_impl.hpp"
#include "wstune/json.hpp"
#include "wstune/version.hpp"

namespace wstune {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "wstune-store-export";
// Version 2 adds each trial's and best configuration's "params" and
// "global", 3-D local sizes and problems; version 1 files still import.
constexpr int kFormatVersion = 2;

json kernel_json(SQLite::Statement& q, int i) {
  return json{{"name", q.getColumn(i).getString()},
              {"source_hash", q.getColumn(i + 1).getString()},
              {"build_options", q.getColumn(i + 2).getString()}};
}
json problem_json(SQLite::Statement& q, int i) {  // dims, gx, gy, gz, size_text
  return json{{"global", to_json(col_problem_extent(q, i))}, {"size_text", q.getColumn(i + 4).getString()}};
}
json opt_json(const SQLite::Column& c) {
  if (c.isNull()) return nullptr;
  if (c.isInteger()) return c.getInt64();
  if (c.isFloat()) return c.getDouble();
  return c.getString();
}
json extent_json(SQLite::Statement& q, int i) {  // dims, x, y, z; null when dims is NULL
  const auto e = col_extent(q, i);
  return e ? to_json(*e) : json(nullptr);
}

}  // namespace

json Store::export_json() const {
  Impl& m = *impl_;
  return m.guard("export", [&] {
    // One read transaction: a consistent snapshot even while others write.
    SQLite::Transaction tx(*m.db, SQLite::TransactionBehavior::DEFERRED);
    json doc{{"format", kFormat},
             {"format_version", kFormatVersion},
             {"schema_version", kSchemaVersion},
             {"wstune_version", std::string(wstune::version())},
             {"exported_at", utc_now()},
             {"host", host_name()}};
    json devices = json::array();
    {
      SQLite::Statement q(*m.db, "SELECT info_json FROM devices ORDER BY id");
      while (q.executeStep()) devices.push_back(json::parse(q.getColumn(0).getString()));
    }
    doc["devices"] = std::move(devices);

    json sessions = json::array();
    {
      SQLite::Statement q(*m.db,
                          "SELECT s.id,s.uuid,d.fingerprint,k.name,k.source_hash,k.build_options,p.dims,p.global_x,"
                          "p.global_y,p.global_z,p.size_text,s.strategy,s.budget_trials,s.budget_seconds,s.started_at,"
                          "s.ended_at,s.wstune_version,s.host FROM sessions s JOIN devices d ON d.id=s.device_id JOIN kernels k "
                          "ON k.id=s.kernel_id JOIN problems p ON p.id=s.problem_id ORDER BY s.id");
      SQLite::Statement t(*m.db, "SELECT local_dims,local_x,local_y,local_z,status,error,samples_ms,compile_ms,"
                                 "run_ms,verify_ms,created_at,params,global_dims,global_x,global_y,global_z "
                                 "FROM trials WHERE session_id=? ORDER BY id");
      while (q.executeStep()) {
        json s{{"uuid", q.getColumn(1).getString()},
               {"device", q.getColumn(2).getString()},
               {"kernel", kernel_json(q, 3)},
               {"problem", problem_json(q, 6)},
               {"strategy", q.getColumn(11).getString()},
               {"budget_trials", opt_json(q.getColumn(12))},
               {"budget_seconds", opt_json(q.getColumn(13))},
               {"started_at", q.getColumn(14).getString()},
               {"ended_at", opt_json(q.getColumn(15))},
               {"wstune_version", q.getColumn(16).getString()},
               {"host", q.getColumn(17).getString()}};
        json trials = json::array();
        t.reset();
        t.bind(1, q.getColumn(0).getInt64());
        while (t.executeStep()) {
          trials.push_back(json{{"params", json::parse(t.getColumn(11).getString())},
                                {"local", extent_json(t, 0)},
                                {"global", extent_json(t, 12)},
                                {"status", t.getColumn(4).getString()},
                                {"error", t.getColumn(5).getString()},
                                {"samples_ms", json::parse(t.getColumn(6).getString())},
                                {"compile_ms", opt_json(t.getColumn(7))},
                                {"run_ms", opt_json(t.getColumn(8))},
                                {"verify_ms", opt_json(t.getColumn(9))},
                                {"created_at", t.getColumn(10).getString()}});
        }
        s["trials"] = std::move(trials);
        sessions.push_back(std::move(s));
      }
    }
    doc["sessions"] = std::move(sessions);

    json best = json::array();
    {
      SQLite::Statement q(*m.db,
                          "SELECT b.uuid,d.fingerprint,k.name,k.source_hash,k.build_options,p.dims,p.global_x,"
                          "p.global_y,p.global_z,p.size_text,b.local_dims,b.local_x,b.local_y,b.local_z,b.median_ms,"
                          "b.null_ms,b.rule_ms,s.uuid,b.recorded_at,b.params,b.global_dims,b.global_x,b.global_y,"
                          "b.global_z FROM best_configs b JOIN devices d ON d.id=b.device_id JOIN kernels k "
                          "ON k.id=b.kernel_id JOIN problems p ON p.id=b.problem_id LEFT JOIN sessions s "
                          "ON s.id=b.session_id ORDER BY b.id");
      while (q.executeStep()) {
        best.push_back(json{{"uuid", q.getColumn(0).getString()},
                            {"device", q.getColumn(1).getString()},
                            {"kernel", kernel_json(q, 2)},
                            {"problem", problem_json(q, 5)},
                            {"params", json::parse(q.getColumn(19).getString())},
                            {"local", extent_json(q, 10)},
                            {"global", extent_json(q, 20)},
                            {"median_ms", q.getColumn(14).getDouble()},
                            {"null_ms", opt_json(q.getColumn(15))},
                            {"rule_ms", opt_json(q.getColumn(16))},
                            {"session", opt_json(q.getColumn(17))},
                            {"recorded_at", q.getColumn(18).getString()}});
      }
    }
    doc["best_configs"] = std::move(best);

    json splits = json::array();
    {
      SQLite::Statement q(*m.db,
                          "SELECT r.id,r.uuid,k.name,k.source_hash,k.build_options,p.dims,p.global_x,p.global_y,"
                          "p.global_z,p.size_text,r.model,r.makespan_ms,r.detail,r.created_at,r.host FROM split_runs r JOIN "
                          "kernels k ON k.id=r.kernel_id JOIN problems p ON p.id=r.problem_id ORDER BY r.id");
      SQLite::Statement d(*m.db, "SELECT d.fingerprint,s.share,s.time_ms FROM split_run_devices s JOIN devices d "
                                 "ON d.id=s.device_id WHERE s.split_run_id=? ORDER BY s.position");
      while (q.executeStep()) {
        json devs = json::array();
        d.reset();
        d.bind(1, q.getColumn(0).getInt64());
        while (d.executeStep()) {
          devs.push_back(json{{"device", d.getColumn(0).getString()},
                              {"share", d.getColumn(1).getDouble()},
                              {"time_ms", d.getColumn(2).getDouble()}});
        }
        splits.push_back(json{{"uuid", q.getColumn(1).getString()},
                              {"kernel", kernel_json(q, 2)},
                              {"problem", problem_json(q, 5)},
                              {"model", q.getColumn(10).getString()},
                              {"makespan_ms", q.getColumn(11).getDouble()},
                              {"devices", std::move(devs)},
                              {"detail", json::parse(q.getColumn(12).getString())},
                              {"created_at", q.getColumn(13).getString()},
                              {"host", q.getColumn(14).getString()}});
      }
    }
    doc["split_runs"] = std::move(splits);

    json cals = json::array();
    {
      SQLite::Statement q(*m.db,
                          "SELECT c.uuid,d.fingerprint,k.name,k.source_hash,k.build_options,c.model,c.params,"
                          "c.created_at FROM split_calibrations c JOIN devices d ON d.id=c.device_id JOIN kernels k "
                          "ON k.id=c.kernel_id ORDER BY c.id");
      while (q.executeStep()) {
        cals.push_back(json{{"uuid", q.getColumn(0).getString()},
                            {"device", q.getColumn(1).getString()},
                            {"kernel", kernel_json(q, 2)},
                            {"model", q.getColumn(5).getString()},
                            {"params", json::parse(q.getColumn(6).getString())},
                            {"created_at", q.getColumn(7).getString()}});
      }
    }
    doc["calibrations"] = std::move(cals);
    tx.commit();
    return doc;
  });
}

// ---- import -------------------------------------------------------------------------------

namespace {

// Reads a field, naming its JSON path in the error.
template <class T>
T field(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) {
    throw UsageError(fmt::format("import: {} has no field '{}'; the file is malformed or truncated (format: "
                                 "docs/store.md)", where, key));
  }
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("import: {}.{} has the wrong type ({}); the file is malformed", where, key, e.what()));
  }
}
template <class T>
std::optional<T> opt_field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return field<T>(j, key, where);
}
const json& array_field(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_array()) {
    throw UsageError(fmt::format("import: {} has no array '{}'; the file is malformed or truncated", where, key));
  }
  return j.at(key);
}

KernelKey kernel_of(const json& j, const std::string& where) {
  const json k = field<json>(j, "kernel", where);
  return {field<std::string>(k, "name", where + ".kernel"), field<std::string>(k, "source_hash", where + ".kernel"),
          field<std::string>(k, "build_options", where + ".kernel")};
}
ProblemKey problem_of(const json& j, const std::string& where) {
  const json p = field<json>(j, "problem", where);
  try {
    ProblemKey k{extent_from_json(p.at("global")), field<std::string>(p, "size_text", where + ".problem")};
    if (k.global.count() == 0 || k.global.dims < 1 || k.global.dims > 3) throw UsageError("bad extent");
    return k;
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("import: {}.problem.global is malformed ({})", where, e.what()));
  } catch (const UsageError&) {
    throw UsageError(fmt::format("import: {}.problem.global is not a valid 1-, 2- or 3-D NDRange", where));
  }
}
// An optional extent field ("local" is required, "global" is not).
std::optional<Extent> extent_of(const json& j, const char* key, bool required, const std::string& where) {
  if (!j.contains(key)) {
    if (!required) return std::nullopt;
    throw UsageError(fmt::format("import: {} has no field '{}'", where, key));
  }
  try {
    std::optional<Extent> e = local_from_json(j.at(key));
    if (e && (e->count() == 0 || e->dims < 1 || e->dims > 3)) throw json::other_error::create(501, "zero", nullptr);
    return e;
  } catch (const json::exception& e) {
    throw UsageError(fmt::format("import: {}.{} is malformed ({})", where, key, e.what()));
  }
}
LocalSize local_of(const json& j, const std::string& where) { return extent_of(j, "local", true, where); }
json params_of(const json& j, const std::string& where) {
  if (!j.contains("params")) return json::object();  // format version 1
  const json& p = j.at("params");
  if (!p.is_object()) throw UsageError(fmt::format("import: {}.params is not an object", where));
  for (const auto& [name, v] : p.items()) {
    if (!(v.is_number() || v.is_boolean() || v.is_string())) {
      throw UsageError(fmt::format("import: {}.params.{} is not a number, bool or string", where, name));
    }
  }
  return p;
}

struct ImportSession {
  SessionRecord rec;
  std::vector<TrialRecord> trials;
};
struct ImportBest {
  BestConfig best;
  std::optional<std::string> session_uuid;
};
struct ImportSplit {
  std::string uuid;
  SplitRun run;
};
struct ImportCal {
  std::string uuid;
  StoredCalibration cal;
};

}  // namespace

ImportStats Store::import_json(const json& doc) {
  // Phase 1: validate and convert everything; nothing is written on error.
  if (!doc.is_object() || doc.value("format", "") != kFormat) {
    throw UsageError(fmt::format("import: not a wstune export (expected \"format\": \"{}\"); export one with "
                                 "'wstune export FILE.json'", kFormat));
  }
  const int fv = field<int>(doc, "format_version", "document");
  if (fv > kFormatVersion) {
    throw UsageError(fmt::format("import: format version {} is newer than this wstune reads ({}); use a newer "
                                 "wstune", fv, kFormatVersion));
  }
  std::vector<DeviceInfo> devices;
  std::set<std::string> known;
  const json& jd = array_field(doc, "devices", "document");
  for (std::size_t i = 0; i < jd.size(); ++i) {
    const std::string where = fmt::format("devices[{}]", i);
    DeviceInfo d;
    try {
      d = device_info_from_json(jd[i]);
      d.extensions = jd[i].value("extensions", std::vector<std::string>{});
    } catch (const json::exception& e) {
      throw UsageError(fmt::format("import: {} is malformed ({})", where, e.what()));
    }
    const std::string fp = field<std::string>(jd[i], "fingerprint", where);
    if (fp != d.fingerprint()) {
      throw UsageError(fmt::format("import: {} has fingerprint {} but its fields give {}; the file was edited or "
                                   "is corrupt", where, fp, d.fingerprint()));
    }
    known.insert(fp);
    devices.push_back(std::move(d));
  }
  auto device_ref = [&](const json& j, const std::string& where) {
    const std::string fp = field<std::string>(j, "device", where);
    if (!known.count(fp) && !this->device(fp)) {
      throw UsageError(fmt::format("import: {} refers to device {} that is neither in the file nor in the "
                                   "database", where, fp));
    }
    return fp;
  };

  std::vector<ImportSession> sessions;
  std::set<std::string> session_uuids;
  const json& js = array_field(doc, "sessions", "document");
  for (std::size_t i = 0; i < js.size(); ++i) {
    const std::string where = fmt::format("sessions[{}]", i);
    const json& s = js[i];
    ImportSession is;
    is.rec.uuid = field<std::string>(s, "uuid", where);
    is.rec.device_fingerprint = device_ref(s, where);
    is.rec.kernel = kernel_of(s, where);
    is.rec.problem = problem_of(s, where);
    is.rec.spec.strategy = field<std::string>(s, "strategy", where);
    is.rec.spec.budget_trials = opt_field<std::int64_t>(s, "budget_trials", where);
    is.rec.spec.budget_seconds = opt_field<double>(s, "budget_seconds", where);
    is.rec.started_at = field<std::string>(s, "started_at", where);
    is.rec.ended_at = opt_field<std::string>(s, "ended_at", where);
    is.rec.wstune_version = field<std::string>(s, "wstune_version", where);
    is.rec.host = field<std::string>(s, "host", where);
    session_uuids.insert(is.rec.uuid);
    const json& jt = array_field(s, "trials", where);
    for (std::size_t k = 0; k < jt.size(); ++k) {
      const std::string tw = fmt::format("{}.trials[{}]", where, k);
      TrialRecord t;
      t.params = params_of(jt[k], tw);
      t.local = local_of(jt[k], tw);
      t.global = extent_of(jt[k], "global", false, tw);
      try {
        t.status = parse_trial_status(field<std::string>(jt[k], "status", tw));
      } catch (const UsageError& e) {
        throw UsageError(fmt::format("import: {}.status: {}", tw, e.what()));
      }
      t.error = field<std::string>(jt[k], "error", tw);
      t.samples_ms = field<std::vector<double>>(jt[k], "samples_ms", tw);
      t.compile_ms = opt_field<double>(jt[k], "compile_ms", tw);
      t.run_ms = opt_field<double>(jt[k], "run_ms", tw);
      t.verify_ms = opt_field<double>(jt[k], "verify_ms", tw);
      t.created_at = field<std::string>(jt[k], "created_at", tw);
      is.trials.push_back(std::move(t));
    }
    sessions.push_back(std::move(is));
  }

  std::vector<ImportBest> bests;
  const json& jb = array_field(doc, "best_configs", "document");
  for (std::size_t i = 0; i < jb.size(); ++i) {
    const std::string where = fmt::format("best_configs[{}]", i);
    ImportBest ib;
    ib.best.uuid = field<std::string>(jb[i], "uuid", where);
    ib.best.device_fingerprint = device_ref(jb[i], where);
    ib.best.kernel = kernel_of(jb[i], where);
    ib.best.problem = problem_of(jb[i], where);
    ib.best.params = params_of(jb[i], where);
    ib.best.local = local_of(jb[i], where);
    ib.best.global = extent_of(jb[i], "global", false, where);
    ib.best.median_ms = field<double>(jb[i], "median_ms", where);
    ib.best.null_ms = opt_field<double>(jb[i], "null_ms", where);
    ib.best.rule_ms = opt_field<double>(jb[i], "rule_ms", where);
    ib.best.recorded_at = field<std::string>(jb[i], "recorded_at", where);
    ib.session_uuid = opt_field<std::string>(jb[i], "session", where);
    bests.push_back(std::move(ib));
  }

  std::vector<ImportSplit> splits;
  const json& jr = array_field(doc, "split_runs", "document");
  for (std::size_t i = 0; i < jr.size(); ++i) {
    const std::string where = fmt::format("split_runs[{}]", i);
    ImportSplit sp;
    sp.uuid = field<std::string>(jr[i], "uuid", where);
    sp.run.kernel = kernel_of(jr[i], where);
    sp.run.problem = problem_of(jr[i], where);
    sp.run.model = field<std::string>(jr[i], "model", where);
    sp.run.makespan_ms = field<double>(jr[i], "makespan_ms", where);
    sp.run.detail = field<json>(jr[i], "detail", where);
    sp.run.created_at = field<std::string>(jr[i], "created_at", where);
    sp.run.host = field<std::string>(jr[i], "host", where);
    const json& jdv = array_field(jr[i], "devices", where);
    for (std::size_t k = 0; k < jdv.size(); ++k) {
      const std::string dw = fmt::format("{}.devices[{}]", where, k);
      sp.run.devices.push_back({device_ref(jdv[k], dw), field<double>(jdv[k], "share", dw),
                                field<double>(jdv[k], "time_ms", dw)});
    }
    splits.push_back(std::move(sp));
  }

  std::vector<ImportCal> cals;
  const json& jc = array_field(doc, "calibrations", "document");
  for (std::size_t i = 0; i < jc.size(); ++i) {
    const std::string where = fmt::format("calibrations[{}]", i);
    ImportCal c;
    c.uuid = field<std::string>(jc[i], "uuid", where);
    c.cal.device_fingerprint = device_ref(jc[i], where);
    c.cal.kernel = kernel_of(jc[i], where);
    c.cal.model = field<std::string>(jc[i], "model", where);
    c.cal.params = field<json>(jc[i], "params", where);
    c.cal.created_at = field<std::string>(jc[i], "created_at", where);
    cals.push_back(std::move(c));
  }

  // Phase 2: one transaction; any failure rolls everything back.
  Impl& m = *impl_;
  return m.guard("import", [&] {
    ImportStats st;
    SQLite::Transaction tx(*m.db, SQLite::TransactionBehavior::IMMEDIATE);
    for (const DeviceInfo& d : devices) {
      auto& q = m.stmt("SELECT 1 FROM devices WHERE fingerprint=?");
      q.bind(1, d.fingerprint());
      if (q.executeStep()) {
        ++st.skipped;
      } else {
        m.insert_device(d);
        ++st.devices;
      }
    }
    auto session_id_of = [&](const std::string& uuid) -> std::optional<std::int64_t> {
      auto& q = m.stmt("SELECT id FROM sessions WHERE uuid=?");
      q.bind(1, uuid);
      if (!q.executeStep()) return std::nullopt;
      return q.getColumn(0).getInt64();
    };
    auto exists_uuid = [&](const char* table, const std::string& uuid) {
      auto& q = m.stmt(fmt::format("SELECT 1 FROM {} WHERE uuid=?", table));
      q.bind(1, uuid);
      return q.executeStep();
    };
    for (const ImportSession& is : sessions) {
      auto sid = session_id_of(is.rec.uuid);
      if (sid) {
        ++st.skipped;
      } else {
        auto& ins = m.stmt("INSERT INTO sessions(uuid,device_id,kernel_id,problem_id,strategy,budget_trials,"
                           "budget_seconds,started_at,ended_at,wstune_version,host) VALUES(?,?,?,?,?,?,?,?,?,?,?)");
        ins.bind(1, is.rec.uuid);
        ins.bind(2, static_cast<std::int64_t>(m.device_id(is.rec.device_fingerprint)));
        ins.bind(3, static_cast<std::int64_t>(m.kernel_id(is.rec.kernel)));
        ins.bind(4, static_cast<std::int64_t>(m.problem_id(is.rec.problem)));
        ins.bind(5, is.rec.spec.strategy);
        if (is.rec.spec.budget_trials) ins.bind(6, static_cast<std::int64_t>(*is.rec.spec.budget_trials)); else ins.bind(6);
        if (is.rec.spec.budget_seconds) ins.bind(7, *is.rec.spec.budget_seconds); else ins.bind(7);
        ins.bind(8, is.rec.started_at);
        if (is.rec.ended_at) ins.bind(9, *is.rec.ended_at); else ins.bind(9);
        ins.bind(10, is.rec.wstune_version);
        ins.bind(11, is.rec.host);
        ins.exec();
        sid = m.db->getLastInsertRowid();
        ++st.sessions;
      }
      for (const TrialRecord& t : is.trials) {
        if (m.insert_trial(*sid, t, t.created_at)) ++st.trials; else ++st.skipped;
      }
    }
    for (const ImportBest& ib : bests) {
      if (exists_uuid("best_configs", ib.best.uuid)) {
        ++st.skipped;
        continue;
      }
      BestConfig b = ib.best;
      if (ib.session_uuid) b.session_id = session_id_of(*ib.session_uuid);
      m.insert_best(b, b.uuid, b.recorded_at);
      ++st.best_configs;
    }
    for (const ImportSplit& sp : splits) {
      if (exists_uuid("split_runs", sp.uuid)) {
        ++st.skipped;
        continue;
      }
      m.insert_split(sp.run, sp.uuid);
      ++st.split_runs;
    }
    for (const ImportCal& c : cals) {
      if (exists_uuid("split_calibrations", c.uuid)) {
        ++st.skipped;
        continue;
      }
      m.insert_calibration(c.cal, c.uuid);
      ++st.calibrations;
    }
    tx.commit();
    return st;
  });
}

}  // namespace wstune
