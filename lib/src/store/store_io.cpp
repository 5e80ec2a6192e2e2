// wstune::Store export and import (format: docs/store.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "format/trial_json.hpp"
#include "store/store_impl.hpp"
#include "wstune/version.hpp"

namespace wstune {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "wstune-store-export";
// Version 2 adds each trial's and best configuration's "params" and
// "global", 3-D local sizes and problems; version 1 files still import.
constexpr int kFormatVersion = 2;

// The columns kernel_json and problem_json read, in that order, of a row
// joined with its kernel k and problem p (kernel_problem_joins).
constexpr std::string_view kKernelProblemColumns =
    "k.name,k.source_hash,k.build_options,p.dims,p.global_x,p.global_y,p.global_z,p.size_text";

// The joins giving each row of the table aliased `row` its kernel k and problem p.
std::string kernel_problem_joins(std::string_view row) {
  return fmt::format("JOIN kernels k ON k.id={0}.kernel_id JOIN problems p ON p.id={0}.problem_id", row);
}

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

// Each row of `q` as `row(q)` makes, in the statement's order.
template <class Row>
json collect(SQLite::Statement& q, Row row) {
  json out = json::array();
  while (q.executeStep()) out.push_back(row(q));
  return out;
}

// The rows of `child` (a statement whose one parameter is a parent's id) for
// the parent row `parent` (its id in column 0), each as `row(child)` makes.
template <class Row>
json children(SQLite::Statement& child, SQLite::Statement& parent, Row row) {
  child.reset();
  child.bind(1, parent.getColumn(0).getInt64());
  return collect(child, row);
}

// The document's header: format, versions, and when and where it was written.
json export_header() {
  return json{{"format", kFormat},
              {"format_version", kFormatVersion},
              {"schema_version", kSchemaVersion},
              {"wstune_version", std::string(wstune::version())},
              {"exported_at", utc_now()},
              {"host", host_name()}};
}

// Every device's stored info_json, in id order.
json export_devices(const Store::Impl& m) {
  SQLite::Statement q(*m.db, "SELECT info_json FROM devices ORDER BY id");
  return collect(
      q, [&](SQLite::Statement& r) { return m.stored_json(r.getColumn(0).getString(), "a device's info_json"); });
}

// One row of export_trials' statement as a trial object: the stored
// trial's one JSON form (format/trial_json.hpp).
json trial_json(const Store::Impl& m, SQLite::Statement& t) {
  TrialRecord r;
  r.params = m.stored_json(t.getColumn(11).getString(), "a trial's params");
  r.local = col_extent(t, 0);
  r.global = col_extent(t, 12);
  r.status = parse_trial_status(t.getColumn(4).getString());
  r.error = t.getColumn(5).getString();
  r.samples_ms = m.stored_json(t.getColumn(6).getString(), "a trial's samples_ms").get<std::vector<double>>();
  const auto ms = [&](int i) {
    return t.getColumn(i).isNull() ? std::nullopt : std::optional(t.getColumn(i).getDouble());
  };
  r.compile_ms = ms(7);
  r.run_ms = ms(8);
  r.verify_ms = ms(9);
  r.created_at = t.getColumn(10).getString();
  r.energy = m.stored_energy(t.getColumn(16));
  return to_json(r);
}

// One row of export_sessions' statement as a session object, without its trials.
json session_json(SQLite::Statement& q) {
  return json{{"uuid", q.getColumn(1).getString()},
              {"device", q.getColumn(2).getString()},
              {"kernel", kernel_json(q, 3)},
              {"problem", problem_json(q, 6)},
              {"strategy", q.getColumn(11).getString()},
              {"budget_trials", opt_json(q.getColumn(12))},
              {"budget_seconds", opt_json(q.getColumn(13))},
              {"started_at", q.getColumn(14).getString()},
              {"ended_at", opt_json(q.getColumn(15))},
              {"wstune_version", q.getColumn(16).getString()},
              {"host", q.getColumn(17).getString()},
              {"objectives", col_objectives(q.getColumn(18))}};
}

// Every session with its trials, in id order.
json export_sessions(const Store::Impl& m) {
  SQLite::Statement q(
      *m.db, fmt::format("SELECT s.id,s.uuid,d.fingerprint,{},s.strategy,s.budget_trials,s.budget_seconds,"
                         "s.started_at,s.ended_at,s.wstune_version,s.host,s.objectives FROM sessions s JOIN devices d "
                         "ON d.id=s.device_id {} ORDER BY s.id",
                         kKernelProblemColumns, kernel_problem_joins("s")));
  SQLite::Statement t(*m.db,
                      "SELECT local_dims,local_x,local_y,local_z,status,error,samples_ms,compile_ms,"
                      "run_ms,verify_ms,created_at,params,global_dims,global_x,global_y,global_z,energy "
                      "FROM trials WHERE session_id=? ORDER BY id");
  return collect(q, [&](SQLite::Statement& r) {
    json s = session_json(r);
    s["trials"] = children(t, r, [&](SQLite::Statement& tr) { return trial_json(m, tr); });
    return s;
  });
}

// One row of export_best_configs' statement as a best configuration object.
json best_json(const Store::Impl& m, SQLite::Statement& q) {
  return json{{"uuid", q.getColumn(0).getString()},
              {"device", q.getColumn(1).getString()},
              {"kernel", kernel_json(q, 2)},
              {"problem", problem_json(q, 5)},
              {"params", m.stored_json(q.getColumn(19).getString(), "a best configuration's params")},
              {"local", extent_json(q, 10)},
              {"global", extent_json(q, 20)},
              {"median_ms", q.getColumn(14).getDouble()},
              {"null_ms", opt_json(q.getColumn(15))},
              {"rule_ms", opt_json(q.getColumn(16))},
              {"session", opt_json(q.getColumn(17))},
              {"recorded_at", q.getColumn(18).getString()}};
}

// Every best configuration, in id order.
json export_best_configs(const Store::Impl& m) {
  SQLite::Statement q(*m.db,
                      fmt::format("SELECT b.uuid,d.fingerprint,{},b.local_dims,b.local_x,b.local_y,b.local_z,"
                                  "b.median_ms,b.null_ms,b.rule_ms,s.uuid,b.recorded_at,b.params,b.global_dims,"
                                  "b.global_x,b.global_y,b.global_z FROM best_configs b JOIN devices d "
                                  "ON d.id=b.device_id {} LEFT JOIN sessions s ON s.id=b.session_id ORDER BY b.id",
                                  kKernelProblemColumns, kernel_problem_joins("b")));
  return collect(q, [&](SQLite::Statement& r) { return best_json(m, r); });
}

// One row of export_split_runs' device statement as a device's share.
json split_device_json(SQLite::Statement& d) {
  return json{{"device", d.getColumn(0).getString()},
              {"share", d.getColumn(1).getDouble()},
              {"time_ms", d.getColumn(2).getDouble()}};
}

// One row of export_split_runs' statement with its devices `devs` as a split run object.
json split_run_json(const Store::Impl& m, SQLite::Statement& q, json devs) {
  return json{{"uuid", q.getColumn(1).getString()},
              {"kernel", kernel_json(q, 2)},
              {"problem", problem_json(q, 5)},
              {"model", q.getColumn(10).getString()},
              {"makespan_ms", q.getColumn(11).getDouble()},
              {"devices", std::move(devs)},
              {"detail", m.stored_json(q.getColumn(12).getString(), "a split run's detail")},
              {"created_at", q.getColumn(13).getString()},
              {"host", q.getColumn(14).getString()}};
}

// Every split run with its devices, in id order.
json export_split_runs(const Store::Impl& m) {
  SQLite::Statement q(*m.db, fmt::format("SELECT r.id,r.uuid,{},r.model,r.makespan_ms,r.detail,r.created_at,r.host "
                                         "FROM split_runs r {} ORDER BY r.id",
                                         kKernelProblemColumns, kernel_problem_joins("r")));
  SQLite::Statement d(*m.db,
                      "SELECT d.fingerprint,s.share,s.time_ms FROM split_run_devices s JOIN devices d "
                      "ON d.id=s.device_id WHERE s.split_run_id=? ORDER BY s.position");
  return collect(q, [&](SQLite::Statement& r) { return split_run_json(m, r, children(d, r, split_device_json)); });
}

// Every split-model calibration, in id order.
json export_calibrations(const Store::Impl& m) {
  SQLite::Statement q(*m.db,
                      "SELECT c.uuid,d.fingerprint,k.name,k.source_hash,k.build_options,c.model,c.params,"
                      "c.created_at FROM split_calibrations c JOIN devices d ON d.id=c.device_id JOIN kernels k "
                      "ON k.id=c.kernel_id ORDER BY c.id");
  return collect(q, [&](SQLite::Statement& r) {
    return json{{"uuid", r.getColumn(0).getString()},
                {"device", r.getColumn(1).getString()},
                {"kernel", kernel_json(r, 2)},
                {"model", r.getColumn(5).getString()},
                {"params", m.stored_json(r.getColumn(6).getString(), "a calibration's params")},
                {"created_at", r.getColumn(7).getString()}};
  });
}

}  // namespace

json Store::export_json() const {
  Impl& m = *impl_;
  return m.guard("export", [&] {
    // One read transaction: a consistent snapshot even while others write.
    SQLite::Transaction tx(*m.db, SQLite::TransactionBehavior::DEFERRED);
    json doc = export_header();
    doc["devices"] = export_devices(m);
    doc["sessions"] = export_sessions(m);
    doc["best_configs"] = export_best_configs(m);
    doc["split_runs"] = export_split_runs(m);
    doc["calibrations"] = export_calibrations(m);
    tx.commit();
    return doc;
  });
}

// ---- import -------------------------------------------------------------------------------
//
// Phase 1 reads the whole document into records and refuses anything a
// wstune export cannot hold (UsageError naming the JSON path, quoted input
// bounded), so that phase 2, one transaction, cannot fail on the input.

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw UsageError(fmt::format("import: {} {}; the file is malformed (format: docs/store.md)", where, what));
}

// What `read()` reads with one of the format's readers (format/json.hpp,
// format/trial_json.hpp), its UsageError ("<path> <what>") given import's
// prefix and fix.
template <class Read>
auto read_as_import(Read read) {
  try {
    return read();
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("import: {}; the file is malformed (format: docs/store.md)", e.what()));
  }
}

const json& member(const json& j, const char* key, const std::string& where) {
  if (!j.is_object()) bad(where, fmt::format("is {}, not an object", describe_json(j)));
  const auto it = j.find(key);
  if (it == j.end()) {
    throw UsageError(
        fmt::format("import: {} has no field '{}'; the file is malformed or truncated (format: "
                    "docs/store.md)",
                    where, key));
  }
  return *it;
}
bool has_value(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && !it->is_null();
}

std::string text(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_string()) bad(where + "." + key, fmt::format("is {}, not a string", describe_json(v)));
  return v.get<std::string>();
}
std::optional<std::string> opt_text(const json& j, const char* key, const std::string& where) {
  if (!has_value(j, key)) return std::nullopt;
  return text(j, key, where);
}
// A finite number ≥ `min` (> min when `strict`).
double number(const json& j, const char* key, const std::string& where, double min = 0, bool strict = false) {
  const json& v = member(j, key, where);
  if (!v.is_number()) bad(where + "." + key, fmt::format("is {}, not a number", describe_json(v)));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || (strict && d == min)) {
    bad(where + "." + key, fmt::format("is {}; give a finite number {} {}", describe_json(v), strict ? ">" : "≥", min));
  }
  return d;
}
std::optional<double> opt_number(const json& j, const char* key, const std::string& where, double min = 0,
                                 bool strict = false) {
  if (!has_value(j, key)) return std::nullopt;
  return number(j, key, where, min, strict);
}
// A whole number in [min, max].
std::uint64_t whole(const json& v, const std::string& where, std::uint64_t min, std::uint64_t max) {
  return read_as_import([&] { return whole_from_json(v, where, min, max); });
}
std::optional<std::int64_t> opt_whole(const json& j, const char* key, const std::string& where) {
  if (!has_value(j, key)) return std::nullopt;
  return static_cast<std::int64_t>(whole(j.at(key), where + "." + key, 0, kMaxGlobalDim));
}
// A wstune uuid: 32 lowercase hex digits (new_uuid()).
std::string uuid(const json& j, const char* key, const std::string& where) {
  const std::string u = text(j, key, where);
  const bool ok = u.size() == 32 && std::all_of(u.begin(), u.end(), [](char c) {
                    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                  });
  if (!ok) bad(where + "." + key, fmt::format("is {}, not a wstune uuid (32 lowercase hex digits)", describe_json(u)));
  return u;
}
const json& array(const json& j, const char* key, const std::string& where) {
  const json& v = member(j, key, where);
  if (!v.is_array()) {
    throw UsageError(fmt::format("import: {} has no array '{}' ({} instead); the file is malformed or truncated", where,
                                 key, describe_json(v)));
  }
  return v;
}

// The extent at `where` (format/json.hpp's checked reader).
Extent extent(const json& v, const std::string& where, std::uint64_t max) {
  return read_as_import([&] { return checked_extent_from_json(v, where, max); });
}
std::optional<Extent> opt_extent(const json& j, const char* key, bool required, const std::string& where,
                                 std::uint64_t max) {
  if (!j.contains(key)) {
    if (required) member(j, key, where);  // throws "has no field"
    return std::nullopt;
  }
  if (j.at(key).is_null()) return std::nullopt;
  return extent(j.at(key), where + "." + key, max);
}

// A configuration's local size against the NDRange it ran: the same number
// of dimensions, and for a configuration that ran correctly (OpenCL 1.2: a
// local size that does not divide the global size is CL_INVALID_WORK_GROUP_SIZE)
// each dimension dividing the NDRange's.
void check_local(const LocalSize& local, const Extent& ndrange, bool ran, const std::string& where) {
  if (!local) return;
  if (local->dims != ndrange.dims) {
    bad(where + ".local",
        fmt::format("has {} dimension(s) but its NDRange {} has {}", local->dims, to_string(ndrange), ndrange.dims));
  }
  if (!ran) return;
  for (unsigned d = 0; d < local->dims; ++d) {
    if ((*local)[d] > ndrange[d] || ndrange[d] % (*local)[d] != 0) {
      bad(where + ".local", fmt::format("{} does not divide the NDRange {}", to_string(local), to_string(ndrange)));
    }
  }
}

KernelKey kernel_of(const json& j, const std::string& where) {
  const json& k = member(j, "kernel", where);
  const std::string w = where + ".kernel";
  KernelKey key{text(k, "name", w), text(k, "source_hash", w), text(k, "build_options", w)};
  if (key.name.empty()) bad(w + ".name", "is empty; give the kernel's function name");
  return key;
}
ProblemKey problem_of(const json& j, const std::string& where) {
  const json& p = member(j, "problem", where);
  const std::string w = where + ".problem";
  return ProblemKey{extent(member(p, "global", w), w + ".global", kMaxGlobalDim), text(p, "size_text", w)};
}
json params_of(const json& j, const std::string& where) {
  if (!j.contains("params")) return json::object();  // format version 1
  return read_as_import([&] { return params_from_json(j.at("params"), where + ".params"); });
}
DeviceInfo device_of(const json& j, const std::string& where) {
  if (!j.is_object()) bad(where, fmt::format("is {}, not a device object", describe_json(j)));
  for (const char* key :
       {"platform_index", "device_index", "compute_units", "pe_per_cu", "max_clock_mhz", "native_float_width"}) {
    if (j.contains(key)) whole(j.at(key), where + "." + key, 0, 0xffffffffu);
  }
  for (const char* key : {"max_work_group_size", "local_mem_bytes", "global_mem_bytes", "preferred_wg_multiple"}) {
    if (j.contains(key)) whole(j.at(key), where + "." + key, 0, kMaxGlobalDim);
  }
  for (const char* key : {"name", "vendor", "type", "platform", "driver_version", "opencl_version", "architecture",
                          "pe_source", "pe_detail"}) {
    if (j.contains(key) && !j.at(key).is_string()) {
      bad(where + "." + key, fmt::format("is {}, not a string", describe_json(j.at(key))));
    }
  }
  if (j.contains("max_work_item_sizes")) {
    const json& m = j.at("max_work_item_sizes");
    if (!m.is_array()) bad(where + ".max_work_item_sizes", "is not an array");
    for (std::size_t i = 0; i < m.size(); ++i)
      whole(m[i], fmt::format("{}.max_work_item_sizes[{}]", where, i), 0, kMaxGlobalDim);
  }
  if (j.contains("extensions")) {
    const json& e = j.at("extensions");
    if (!e.is_array() || !std::all_of(e.begin(), e.end(), [](const json& x) { return x.is_string(); })) {
      bad(where + ".extensions", "is not an array of strings");
    }
  }
  DeviceInfo d;
  try {
    d = device_info_from_json(j);
    d.extensions = j.value("extensions", std::vector<std::string>{});
  } catch (const json::exception& e) {
    bad(where, fmt::format("is not a device ({})", bounded(e.what())));
  }
  const std::string fp = text(j, "fingerprint", where);
  if (fp != d.fingerprint()) {
    throw UsageError(
        fmt::format("import: {} has fingerprint {} but its fields give {}; the file was edited or "
                    "is corrupt",
                    where, describe_json(fp), d.fingerprint()));
  }
  return d;
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

// The record's "uuid", refused when seen before in the same section of the file.
std::string unique_uuid(const json& j, std::set<std::string>& seen, const std::string& where) {
  std::string u = uuid(j, "uuid", where);
  if (!seen.insert(u).second) bad(where + ".uuid", fmt::format("repeats uuid {} of an earlier entry", u));
  return u;
}

// Each element of the section array `arr` as `read(element, "section[i]")` makes, in file order.
template <class Read>
auto read_each(const json& arr, const char* section, Read read) {
  std::vector<decltype(read(arr, std::string{}))> out;
  for (std::size_t i = 0; i < arr.size(); ++i) out.push_back(read(arr[i], fmt::format("{}[{}]", section, i)));
  return out;
}

// Whether `table` holds a row with this uuid.
bool exists_uuid(Store::Impl& m, const char* table, const std::string& uuid) {
  auto& q = m.stmt(fmt::format("SELECT 1 FROM {} WHERE uuid=?", table));
  q.bind(1, uuid);
  return q.executeStep();
}

// Refuses a document that is not a wstune export of a format and schema version this wstune reads.
void check_header(const json& doc) {
  if (!doc.is_object() || !doc.contains("format") || doc.at("format") != kFormat) {
    throw UsageError(
        fmt::format("import: not a wstune export (expected \"format\": \"{}\"); export one with "
                    "'wstune export FILE.json'",
                    kFormat));
  }
  check_json_depth(doc, "import");
  const auto fv = whole(member(doc, "format_version", "document"), "format_version", 0, ~std::uint64_t{0});
  if (fv > static_cast<std::uint64_t>(kFormatVersion) || fv < 1) {
    throw UsageError(fmt::format("import: format version {} is {} (this wstune reads 1 to {}); {}", fv,
                                 fv < 1 ? "not a version" : "newer than this wstune reads", kFormatVersion,
                                 fv < 1 ? "the file is malformed" : "use a newer wstune"));
  }
  if (doc.contains("schema_version")) {
    const auto sv = whole(doc.at("schema_version"), "schema_version", 0, ~std::uint64_t{0});
    if (sv < 1 || sv > static_cast<std::uint64_t>(kSchemaVersion)) {
      throw UsageError(fmt::format("import: schema_version {} is {} (this wstune knows 1 to {}); {}", sv,
                                   sv < 1 ? "not a version" : "newer than this wstune", kSchemaVersion,
                                   sv < 1 ? "the file is malformed" : "use a newer wstune"));
    }
  }
}

// What later sections of a document refer to: the store, and the file's devices and sessions read so far.
struct ImportRefs {
  const Store& store;
  std::set<std::string> devices;   // fingerprints of the file's devices
  std::set<std::string> sessions;  // uuids of the file's sessions

  // A record's "device" fingerprint, refused unless the file or the store holds that device.
  std::string device(const json& j, const std::string& where) const {
    const std::string fp = text(j, "device", where);
    if (!devices.count(fp) && !store.device(fp)) {
      throw UsageError(
          fmt::format("import: {} refers to device {} that is neither in the file nor in the "
                      "database",
                      where, describe_json(fp)));
    }
    return fp;
  }
  // Refuses a best configuration's session `uuid` that is neither in the file nor in the store.
  void check_session(const std::string& uuid, const std::string& where) const {
    if (sessions.count(uuid)) return;
    Store::Impl& m = store.impl();
    const bool stored = m.guard("look up a session", [&] { return exists_uuid(m, "sessions", uuid); });
    if (!stored) {
      bad(where + ".session",
          fmt::format("refers to session {} that is neither in the file nor in the database", uuid));
    }
  }
};

// The document's "devices"; each fingerprint goes into `refs.devices`.
std::vector<DeviceInfo> read_devices(const json& jd, ImportRefs& refs) {
  return read_each(jd, "devices", [&](const json& j, const std::string& where) {
    DeviceInfo d = device_of(j, where);
    refs.devices.insert(d.fingerprint());
    return d;
  });
}

// One trial at `tw` of a session whose problem's NDRange is `problem_global`:
// the trial's one JSON form (format/trial_json.hpp), its local size checked
// against the NDRange it ran.
TrialRecord read_trial(const json& j, const Extent& problem_global, const std::string& tw) {
  TrialRecord t = read_as_import([&] { return trial_record_from_json(j, tw); });
  check_local(t.local, t.global.value_or(problem_global), t.status == TrialStatus::correct, tw);
  return t;
}

// A session's "trials", refusing a configuration repeated within the session.
std::vector<TrialRecord> read_trials(const json& s, const Extent& problem_global, const std::string& where) {
  const json& jt = array(s, "trials", where);
  std::vector<TrialRecord> trials;
  std::set<std::string> configs;
  for (std::size_t k = 0; k < jt.size(); ++k) {
    const std::string tw = fmt::format("{}.trials[{}]", where, k);
    TrialRecord t = read_trial(jt[k], problem_global, tw);
    if (!configs.insert(configuration_key(t.params, t.local)).second) {
      bad(tw, fmt::format("repeats the configuration {} of an earlier trial of this session",
                          bounded(configuration_key(t.params, t.local))));
    }
    trials.push_back(std::move(t));
  }
  return trials;
}

// A session's "objectives" (absent: time): an array of texts.
std::vector<std::string> objectives_of(const json& s, const std::string& where) {
  const auto it = s.find("objectives");
  if (it == s.end() || it->is_null()) return {};
  std::vector<std::string> out;
  if (it->is_array()) {
    for (const json& o : *it) {
      if (!o.is_string()) break;
      out.push_back(o.get<std::string>());
    }
    if (out.size() == it->size()) return out;
  }
  throw UsageError(fmt::format("{}.objectives is {}, not an array of objective names such as \"energy:min\"", where,
                               describe_json(*it)));
}

// A session's fields other than its trials; its uuid goes into `refs.sessions` and must be new there.
SessionRecord read_session_record(const json& s, ImportRefs& refs, const std::string& where) {
  SessionRecord rec;
  rec.uuid = unique_uuid(s, refs.sessions, where);
  rec.device_fingerprint = refs.device(s, where);
  rec.kernel = kernel_of(s, where);
  rec.problem = problem_of(s, where);
  rec.spec.strategy = text(s, "strategy", where);
  rec.spec.budget_trials = opt_whole(s, "budget_trials", where);
  rec.spec.budget_seconds = opt_number(s, "budget_seconds", where);
  rec.started_at = text(s, "started_at", where);
  rec.ended_at = opt_text(s, "ended_at", where);
  rec.wstune_version = text(s, "wstune_version", where);
  rec.host = text(s, "host", where);
  rec.spec.objectives = objectives_of(s, where);
  return rec;
}

// The document's "sessions" with their trials.
std::vector<ImportSession> read_sessions(const json& js, ImportRefs& refs) {
  return read_each(js, "sessions", [&](const json& j, const std::string& where) {
    ImportSession is;
    is.rec = read_session_record(j, refs, where);
    is.trials = read_trials(j, is.rec.problem.global, where);
    return is;
  });
}

// One best configuration at `where`; its uuid must be new in `seen`.
ImportBest read_best(const json& b, const ImportRefs& refs, std::set<std::string>& seen, const std::string& where) {
  ImportBest ib;
  ib.best.uuid = unique_uuid(b, seen, where);
  ib.best.device_fingerprint = refs.device(b, where);
  ib.best.kernel = kernel_of(b, where);
  ib.best.problem = problem_of(b, where);
  ib.best.params = params_of(b, where);
  ib.best.local = opt_extent(b, "local", true, where, kMaxLocalDim);
  ib.best.global = opt_extent(b, "global", false, where, kMaxGlobalDim);
  check_local(ib.best.local, ib.best.global.value_or(ib.best.problem.global), true, where);
  ib.best.median_ms = number(b, "median_ms", where, 0, true);
  ib.best.null_ms = opt_number(b, "null_ms", where, 0, true);
  ib.best.rule_ms = opt_number(b, "rule_ms", where, 0, true);
  ib.best.recorded_at = text(b, "recorded_at", where);
  if (has_value(b, "session")) {
    ib.session_uuid = uuid(b, "session", where);
    refs.check_session(*ib.session_uuid, where);
  }
  return ib;
}

// The document's "best_configs".
std::vector<ImportBest> read_bests(const json& jb, const ImportRefs& refs) {
  std::set<std::string> seen;
  return read_each(jb, "best_configs",
                   [&](const json& j, const std::string& where) { return read_best(j, refs, seen, where); });
}

// One split run at `where` with its devices; its uuid must be new in `seen`.
ImportSplit read_split(const json& r, const ImportRefs& refs, std::set<std::string>& seen, const std::string& where) {
  ImportSplit sp;
  sp.uuid = unique_uuid(r, seen, where);
  sp.run.kernel = kernel_of(r, where);
  sp.run.problem = problem_of(r, where);
  sp.run.model = text(r, "model", where);
  sp.run.makespan_ms = number(r, "makespan_ms", where);
  sp.run.detail = member(r, "detail", where);
  sp.run.created_at = text(r, "created_at", where);
  sp.run.host = text(r, "host", where);
  const json& jdv = array(r, "devices", where);
  for (std::size_t k = 0; k < jdv.size(); ++k) {
    const std::string dw = fmt::format("{}.devices[{}]", where, k);
    SplitShare share{refs.device(jdv[k], dw), number(jdv[k], "share", dw), number(jdv[k], "time_ms", dw)};
    if (share.share > 1) bad(dw + ".share", fmt::format("is {}; a share is a fraction from 0 to 1", share.share));
    sp.run.devices.push_back(std::move(share));
  }
  return sp;
}

// The document's "split_runs".
std::vector<ImportSplit> read_splits(const json& jr, const ImportRefs& refs) {
  std::set<std::string> seen;
  return read_each(jr, "split_runs",
                   [&](const json& j, const std::string& where) { return read_split(j, refs, seen, where); });
}

// The document's "calibrations".
std::vector<ImportCal> read_calibrations(const json& jc, const ImportRefs& refs) {
  std::set<std::string> seen;
  return read_each(jc, "calibrations", [&](const json& j, const std::string& where) {
    ImportCal c;
    c.uuid = unique_uuid(j, seen, where);
    c.cal.device_fingerprint = refs.device(j, where);
    c.cal.kernel = kernel_of(j, where);
    c.cal.model = text(j, "model", where);
    c.cal.params = member(j, "params", where);
    c.cal.created_at = text(j, "created_at", where);
    return c;
  });
}

// A whole document, validated and converted, ready to merge.
struct ImportDoc {
  std::vector<DeviceInfo> devices;
  std::vector<ImportSession> sessions;
  std::vector<ImportBest> bests;
  std::vector<ImportSplit> splits;
  std::vector<ImportCal> cals;
};

// Phase 1: reads and checks every section of `doc` in file order; writes nothing.
ImportDoc read_document(const Store& store, const json& doc) {
  check_header(doc);
  const std::string top = "document";
  ImportRefs refs{store, {}, {}};
  ImportDoc in;
  in.devices = read_devices(array(doc, "devices", top), refs);
  in.sessions = read_sessions(array(doc, "sessions", top), refs);
  in.bests = read_bests(array(doc, "best_configs", top), refs);
  in.splits = read_splits(array(doc, "split_runs", top), refs);
  in.cals = read_calibrations(array(doc, "calibrations", top), refs);
  return in;
}

// The id of the stored session `uuid`, if any.
std::optional<std::int64_t> session_id_of(Store::Impl& m, const std::string& uuid) {
  auto& q = m.stmt("SELECT id FROM sessions WHERE uuid=?");
  q.bind(1, uuid);
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getInt64();
}

// Adds the devices not stored yet (by fingerprint).
void merge_devices(Store::Impl& m, const std::vector<DeviceInfo>& devices, ImportStats& st) {
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
}

// Inserts a session row (without trials); returns its id.
std::int64_t insert_session(Store::Impl& m, const SessionRecord& rec) {
  auto& ins = m.stmt(
      "INSERT INTO sessions(uuid,device_id,kernel_id,problem_id,strategy,budget_trials,"
      "budget_seconds,started_at,ended_at,wstune_version,host,objectives) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, rec.uuid);
  ins.bind(2, static_cast<std::int64_t>(m.device_id(rec.device_fingerprint)));
  ins.bind(3, static_cast<std::int64_t>(m.kernel_id(rec.kernel)));
  ins.bind(4, static_cast<std::int64_t>(m.problem_id(rec.problem)));
  ins.bind(5, rec.spec.strategy);
  if (rec.spec.budget_trials)
    ins.bind(6, static_cast<std::int64_t>(*rec.spec.budget_trials));
  else
    ins.bind(6);
  if (rec.spec.budget_seconds)
    ins.bind(7, *rec.spec.budget_seconds);
  else
    ins.bind(7);
  ins.bind(8, rec.started_at);
  if (rec.ended_at)
    ins.bind(9, *rec.ended_at);
  else
    ins.bind(9);
  ins.bind(10, rec.wstune_version);
  ins.bind(11, rec.host);
  bind_objectives(ins, 12, rec.spec.objectives);
  ins.exec();
  return m.db->getLastInsertRowid();
}

// Merges sessions[i]: adds it unless stored (refused when stored as another session), then its new trials.
void merge_session(const Store& store, const ImportSession& is, std::size_t i, ImportStats& st) {
  Store::Impl& m = store.impl();
  auto sid = session_id_of(m, is.rec.uuid);
  if (sid) {
    // The same uuid must be the same session: trials of another device,
    // kernel or problem never merge into it (nothing stored is changed).
    const auto held = store.session(*sid);
    if (!held || held->device_fingerprint != is.rec.device_fingerprint || held->kernel != is.rec.kernel ||
        held->problem != is.rec.problem || held->spec.strategy != is.rec.spec.strategy) {
      throw UsageError(
          fmt::format("import: sessions[{}] has uuid {}, which the database holds for another "
                      "device, kernel, problem or strategy",
                      i, is.rec.uuid));
    }
    ++st.skipped;
  } else {
    sid = insert_session(m, is.rec);
    ++st.sessions;
  }
  for (const TrialRecord& t : is.trials) {
    if (m.insert_trial(*sid, t, t.created_at))
      ++st.trials;
    else
      ++st.skipped;
  }
}

// The uuid an imported record is stored under.
const std::string& uuid_of(const ImportBest& b) {
  return b.best.uuid;
}
const std::string& uuid_of(const ImportSplit& sp) {
  return sp.uuid;
}
const std::string& uuid_of(const ImportCal& c) {
  return c.uuid;
}

// Adds each record whose uuid `table` does not hold yet (`insert` it and
// count it in `added`); one already held counts as skipped.
template <class Record, class Insert>
void merge_new(Store::Impl& m, const char* table, const std::vector<Record>& records, std::int64_t& added,
               ImportStats& st, Insert insert) {
  for (const Record& r : records) {
    if (exists_uuid(m, table, uuid_of(r))) {
      ++st.skipped;
      continue;
    }
    insert(r);
    ++added;
  }
}

// Adds the best configurations not stored yet (by uuid), linked to their
// session when they name one.
void merge_bests(Store::Impl& m, const std::vector<ImportBest>& bests, ImportStats& st) {
  merge_new(m, "best_configs", bests, st.best_configs, st, [&](const ImportBest& ib) {
    BestConfig b = ib.best;
    if (ib.session_uuid) b.session_id = session_id_of(m, *ib.session_uuid);
    m.insert_best(b, b.uuid, b.recorded_at);
  });
}

// Adds the split runs not stored yet (by uuid).
void merge_splits(Store::Impl& m, const std::vector<ImportSplit>& splits, ImportStats& st) {
  merge_new(m, "split_runs", splits, st.split_runs, st,
            [&](const ImportSplit& sp) { m.insert_split(sp.run, sp.uuid); });
}

// Adds the calibrations not stored yet (by uuid).
void merge_calibrations(Store::Impl& m, const std::vector<ImportCal>& cals, ImportStats& st) {
  merge_new(m, "split_calibrations", cals, st.calibrations, st,
            [&](const ImportCal& c) { m.insert_calibration(c.cal, c.uuid); });
}

}  // namespace

ImportStats Store::import_json(const json& doc) {
  // Phase 1: validate and convert everything; nothing is written on error.
  const ImportDoc in = read_document(*this, doc);
  // Phase 2: one transaction; any failure rolls everything back.
  Impl& m = *impl_;
  return m.guard("import", [&] {
    ImportStats st;
    SQLite::Transaction tx(*m.db, SQLite::TransactionBehavior::IMMEDIATE);
    merge_devices(m, in.devices, st);
    for (std::size_t i = 0; i < in.sessions.size(); ++i) merge_session(*this, in.sessions[i], i, st);
    merge_bests(m, in.bests, st);
    merge_splits(m, in.splits, st);
    merge_calibrations(m, in.cals, st);
    tx.commit();
    return st;
  });
}

}  // namespace wstune
