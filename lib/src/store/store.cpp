// wstune::Store: opening, migrations, and the row-level API. Export/import
// live in store_io.cpp.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <sqlite3.h>

#include "format/json.hpp"
#include "format/json_input.hpp"
#include "store/store_impl.hpp"
#include "wstune/timing.hpp"
#include "wstune/version.hpp"

namespace wstune {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- helpers -----------------------------------------------------------------

std::string utc_now() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t t = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

std::string new_uuid() {
  thread_local std::mt19937_64 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(),
                      rd(),
                      rd(),
                      rd(),
                      static_cast<unsigned>(getpid()),
                      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count())};
    return std::mt19937_64(seq);
  }();
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string fnv1a_hex(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::optional<double> TrialRecord::median_ms() const {
  if (samples_ms.empty()) return std::nullopt;
  return Samples{samples_ms}.median();
}

std::optional<double> BestConfig::ratio_to_null() const {
  if (!null_ms || median_ms <= 0) return std::nullopt;
  return *null_ms / median_ms;
}

std::optional<double> BestConfig::ratio_to_rule() const {
  if (!rule_ms || median_ms <= 0) return std::nullopt;
  return *rule_ms / median_ms;
}

std::string default_db_path() {
  if (const char* p = std::getenv("WSTUNE_DB"); p && *p) return p;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return (fs::path(x) / "wstune" / "wstune.db").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".local" / "share" / "wstune" / "wstune.db").string();
  throw StoreError("no database path: set WSTUNE_DB, XDG_DATA_HOME or HOME, or pass --db FILE");
}

// ---- Impl ----------------------------------------------------------------------

SQLite::Statement& Store::Impl::stmt(std::string_view sql) {
  auto it = cache.find(sql);
  if (it == cache.end()) {
    it = cache.emplace(std::string(sql), std::make_unique<SQLite::Statement>(*db, std::string(sql))).first;
  } else {
    it->second->reset();
    it->second->clearBindings();
  }
  used.push_back(it->second.get());
  return *it->second;
}

void Store::Impl::reset_used() noexcept {
  for (SQLite::Statement* s : used) {
    try {
      s->reset();
    } catch (...) {  // reset reports the last step's error again; it was handled then
    }
  }
  used.clear();
}

void Store::Impl::fail(const char* what, const SQLite::Exception& e) const {
  const int code = e.getErrorCode() & 0xff;
  switch (code) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw StoreError(
          fmt::format("database {} is locked by another process ({} waited {} ms: {}); retry when "
                      "the other wstune finishes, or raise the busy timeout",
                      path, what, options.busy_timeout_ms, e.what()));
    case SQLITE_READONLY:
    case SQLITE_PERM:
      throw StoreError(
          fmt::format("database {} is read-only ({}: {}); make the file and its directory "
                      "writable or pass --db / WSTUNE_DB with a writable path",
                      path, what, e.what()));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      throw StoreError(
          fmt::format("database {} is corrupt or not an SQLite database ({}: {}); it was left "
                      "untouched: move it aside (or restore a backup) or pass --db another file",
                      path, what, e.what()));
    case SQLITE_CANTOPEN:
      throw StoreError(
          fmt::format("cannot open database {} ({}: {}); check the path and its permissions or "
                      "pass --db another file",
                      path, what, e.what()));
    case SQLITE_FULL:
      throw StoreError(fmt::format("database {}: disk full ({}: {}); free space and retry", path, what, e.what()));
    default:
      throw StoreError(fmt::format("database {}: {} failed: {}", path, what, e.what()));
  }
}

json Store::Impl::stored_json(const std::string& text, const char* what) const {
  try {
    return parse_json_input(text, what);
  } catch (const UsageError& e) {
    throw StoreError(
        fmt::format("database {} holds {} that wstune cannot read ({}); it was written by another "
                    "tool: repair or remove that row",
                    path, what, e.what()));
  }
}

namespace {

void bind_opt(SQLite::Statement& s, int i, const std::optional<double>& v) {
  if (v)
    s.bind(i, *v);
  else
    s.bind(i);
}
void bind_opt(SQLite::Statement& s, int i, const std::optional<std::int64_t>& v) {
  if (v)
    s.bind(i, static_cast<std::int64_t>(*v));
  else
    s.bind(i);
}
std::optional<double> col_opt_double(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getDouble();
}
std::optional<std::int64_t> col_opt_int(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}
// Forward migrations: migrations[v] takes user_version v to v + 1.
std::vector<std::string_view> migrations() {
  std::vector<std::string_view> steps{schema_sql()};
  for (std::string_view m : schema_migrations()) steps.push_back(m);
  return steps;
}

bool is_memory(const std::string& path) {
  return path == ":memory:" || path.empty() || path.rfind("file:", 0) == 0;
}

}  // namespace

void bind_local(SQLite::Statement& s, int i, const LocalSize& l) {
  bind_extent(s, i, l);
  if (l && l->dims < 3) s.bind(i + 3);  // local_z is NULL below three dimensions (schema v1 rows)
}

LocalSize col_local(const SQLite::Statement& s, int i) {
  return col_extent(s, i);
}

void bind_extent(SQLite::Statement& s, int i, const std::optional<Extent>& e) {
  if (!e) {
    for (int k = 0; k < 4; ++k) s.bind(i + k);
    return;
  }
  s.bind(i, static_cast<int>(e->dims));
  s.bind(i + 1, static_cast<std::int64_t>(e->x));
  s.bind(i + 2, static_cast<std::int64_t>(e->y));
  s.bind(i + 3, static_cast<std::int64_t>(e->z));
}

std::optional<Extent> col_extent(const SQLite::Statement& s, int i) {
  if (s.getColumn(i).isNull()) return std::nullopt;
  return col_problem_extent(s, i);
}

Extent col_problem_extent(const SQLite::Statement& s, int i) {
  const auto z = s.getColumn(i + 3);
  return Extent{static_cast<std::size_t>(s.getColumn(i + 1).getInt64()),
                static_cast<std::size_t>(s.getColumn(i + 2).getInt64()),
                z.isNull() ? std::size_t{1} : static_cast<std::size_t>(z.getInt64()),
                static_cast<unsigned>(s.getColumn(i).getInt())};
}

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

// ---- opening -----------------------------------------------------------------

namespace {

// Refuses a database path that is a directory, or a device, FIFO or socket;
// returns whether the file exists.
bool existing_file(const std::string& path, std::error_code& ec) {
  const fs::path p(path);
  if (fs::is_directory(p, ec)) {
    throw StoreError(fmt::format("database path {} is a directory; pass a file, e.g. --db {}/wstune.db", path, path));
  }
  const bool exists = fs::exists(p, ec);
  if (exists && !fs::is_regular_file(p, ec)) {
    // A device, FIFO or socket (--db /dev/null): SQLite would put its
    // journal beside it (/dev/null-journal). Nothing is created.
    throw StoreError(
        fmt::format("database path {} is not a regular file (a device, FIFO or socket); pass a file, "
                    "e.g. --db ./wstune.db",
                    path));
  }
  return exists;
}

// Creates the missing directory a new database goes in.
void create_parent(const std::string& path, std::error_code& ec) {
  const fs::path p(path);
  if (!p.has_parent_path() || fs::exists(p.parent_path(), ec)) return;
  fs::create_directories(p.parent_path(), ec);
  if (ec) {
    throw StoreError(
        fmt::format("cannot create directory {} for database {}: {}; create it or pass --db / "
                    "WSTUNE_DB with a writable path",
                    p.parent_path().string(), path, ec.message()));
  }
}

// Checks a database file before SQLite opens it: its kind, that it exists to
// be read, and its directory and permission to be written.
void check_path(const std::string& path, const StoreOptions& options) {
  std::error_code ec;
  const bool exists = existing_file(path, ec);
  if (options.read_only && !exists) {
    throw StoreError(
        fmt::format("database {} does not exist; run 'wstune tune' first or pass --db / WSTUNE_DB "
                    "naming an existing database",
                    path));
  }
  if (!options.read_only && !exists) create_parent(path, ec);
  if (!options.read_only && exists && access(path.c_str(), W_OK) != 0) {
    throw StoreError(
        fmt::format("database {} is read-only; make it writable (chmod u+w) or pass --db / "
                    "WSTUNE_DB with a writable copy",
                    path));
  }
}

// A database path as an SQLite file: URI, '%', '?' and '#' escaped.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#')
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else
      uri += c;
  }
  return uri;
}

// Reads the schema version, reopening a read-only database as immutable
// where SQLite cannot create the -shm file a WAL reader needs.
int read_version(Store::Impl& m, int flags) {
  try {
    return m.db->execAndGet("PRAGMA user_version").getInt();
  } catch (const SQLite::Exception& e) {
    const int code = e.getErrorCode() & 0xff;
    if (!m.options.read_only || is_memory(m.path) || (code != SQLITE_READONLY && code != SQLITE_CANTOPEN)) {
      m.fail("read the schema version", e);
    }
    // A WAL database in a directory this process cannot write: SQLite cannot
    // create the -shm file a reader needs. Read it as immutable (no locks;
    // nobody can be writing it where we cannot create files, or the writer
    // keeps -shm there already). Issue 17: a read-only database could not
    // even be queried.
    const std::string uri = file_uri(m.path);
    m.guard("open read-only", [&] {
      m.db =
          std::make_unique<SQLite::Database>(uri + "?immutable=1", flags | SQLITE_OPEN_URI, m.options.busy_timeout_ms);
    });
    return m.guard("read the schema version", [&] { return m.db->execAndGet("PRAGMA user_version").getInt(); });
  }
}

// Refuses a schema version newer than this wstune knows.
void refuse_newer(const Store::Impl& m, int version) {
  if (version <= kSchemaVersion) return;
  throw StoreError(
      fmt::format("database {} has schema version {}, written by a newer wstune (this one, {}, "
                  "knows up to {}); use that newer wstune or pass --db another file; the database "
                  "was not changed",
                  m.path, version, wstune::version(), kSchemaVersion));
}

// Foreign keys on; a writable database also in WAL mode (files only) with
// synchronous=NORMAL.
void set_pragmas(Store::Impl& m) {
  m.guard("set pragmas", [&] {
    m.db->exec("PRAGMA foreign_keys=ON");
    if (!m.options.read_only) {
      if (!is_memory(m.path)) {
        const std::string mode = m.db->execAndGet("PRAGMA journal_mode=WAL").getString();
        if (mode != "wal")
          throw StoreError(fmt::format("database {}: cannot switch to WAL mode (got {})", m.path, mode));
      }
      m.db->exec("PRAGMA synchronous=NORMAL");
    }
  });
}

// Takes an older schema `version` to kSchemaVersion in one IMMEDIATE
// transaction; refuses a read-only database and an SQLite one not wstune's.
void migrate(Store::Impl& m, int version) {
  if (m.options.read_only) {
    throw StoreError(
        fmt::format("database {} has schema version {} and needs migrating to {}; open it once "
                    "writable (e.g. 'wstune db check --db {}')",
                    m.path, version, kSchemaVersion, m.path));
  }
  m.guard("migrate the schema", [&] {
    SQLite::Transaction tx(*m.db, SQLite::TransactionBehavior::IMMEDIATE);
    version = m.db->execAndGet("PRAGMA user_version").getInt();  // another process may have migrated
    if (version == 0 && m.db->execAndGet("SELECT count(*) FROM sqlite_master").getInt() > 0) {
      throw StoreError(
          fmt::format("{} is an SQLite database but not a wstune one (it has tables and schema version "
                      "0); it was left untouched: pass --db another file",
                      m.path));
    }
    const auto steps = migrations();
    for (int v = version; v < kSchemaVersion; ++v) m.db->exec(std::string(steps.at(static_cast<std::size_t>(v))));
    m.db->exec(fmt::format("PRAGMA user_version={}", kSchemaVersion));
    tx.commit();
  });
}

}  // namespace

Store::Store(const std::string& path, StoreOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path.empty() ? ":memory:" : path;
  m.options = options;
  if (!is_memory(m.path)) check_path(m.path, options);
  const int flags = options.read_only ? SQLite::OPEN_READONLY : (SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  m.guard("open",
          [&] { m.db = std::make_unique<SQLite::Database>(m.path, flags | SQLITE_OPEN_URI, options.busy_timeout_ms); });
  const int version = read_version(m, flags);
  refuse_newer(m, version);
  set_pragmas(m);
  if (version != kSchemaVersion) migrate(m, version);
}

Store::~Store() = default;
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

const std::string& Store::path() const noexcept {
  return impl_->path;
}
std::uint64_t Store::generation() const noexcept {
  return impl_->generation;
}

int Store::schema_version() const {
  return impl_->guard("read the schema version", [&] { return impl_->db->execAndGet("PRAGMA user_version").getInt(); });
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

// ---- sessions -----------------------------------------------------------------------

namespace {
constexpr std::string_view kSessionSelect =
    "SELECT s.id,s.uuid,d.fingerprint,k.name,k.source_hash,k.build_options,p.dims,p.global_x,p.global_y,"
    "p.global_z,p.size_text,s.strategy,s.budget_trials,s.budget_seconds,s.started_at,s.ended_at,s.wstune_version,"
    "s.host,s.pid,s.heartbeat_at "
    "FROM sessions s JOIN devices d ON d.id=s.device_id JOIN kernels k ON k.id=s.kernel_id "
    "JOIN problems p ON p.id=s.problem_id ";

SessionRecord session_from_row(SQLite::Statement& q) {
  SessionRecord r;
  r.id = q.getColumn(0).getInt64();
  r.uuid = q.getColumn(1).getString();
  r.device_fingerprint = q.getColumn(2).getString();
  r.kernel = {q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getString()};
  r.problem.global = col_problem_extent(q, 6);
  r.problem.size_text = q.getColumn(10).getString();
  r.spec.strategy = q.getColumn(11).getString();
  r.spec.budget_trials = col_opt_int(q.getColumn(12));
  r.spec.budget_seconds = col_opt_double(q.getColumn(13));
  r.started_at = q.getColumn(14).getString();
  if (!q.getColumn(15).isNull()) r.ended_at = q.getColumn(15).getString();
  r.wstune_version = q.getColumn(16).getString();
  r.host = q.getColumn(17).getString();
  r.pid = col_opt_int(q.getColumn(18));
  if (!q.getColumn(19).isNull()) r.heartbeat_at = q.getColumn(19).getString();
  return r;
}
}  // namespace

// ---- live sessions ----------------------------------------------------------------------

namespace {

// Seconds since the epoch of an ISO 8601 UTC time ("2025-01-31T12:00:00.123Z").
std::optional<double> parse_utc(const std::string& text) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &ms) < 6) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + ms / 1000.0;
}

double now_utc() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Whether process `pid` on this host runs (a zombie does not), and when it
// started (seconds since the epoch; nullopt where /proc does not say).
struct ProcessState {
  bool running = false;
  std::optional<double> started;
};
ProcessState process_state(std::int64_t pid) {
  ProcessState st;
  if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) return st;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return st;
  st.running = true;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(stat, line)) return st;
  // pid (comm) state ppid ... field 22 = starttime in clock ticks since boot;
  // comm may hold spaces and parentheses, so count from the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return st;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  rest >> state;
  if (state == "Z" || state == "X") {
    st.running = false;
    return st;
  }
  std::string field;
  for (int i = 4; i < 22 && rest >> field; ++i) {
  }
  unsigned long long ticks = 0;
  if (!(rest >> ticks)) return st;
  std::ifstream boot("/proc/stat");
  std::string key;
  double btime = 0;
  while (boot >> key) {
    if (key == "btime") {
      boot >> btime;
      break;
    }
    std::getline(boot, key);
  }
  const long hz = sysconf(_SC_CLK_TCK);
  if (btime > 0 && hz > 0) st.started = btime + static_cast<double>(ticks) / static_cast<double>(hz);
  return st;
}

bool writer_live(const std::string& host, std::optional<std::int64_t> pid,
                 const std::optional<std::string>& heartbeat) {
  if (!pid) return false;  // no recorded writer: imported, or schema version 1
  const auto beat = heartbeat ? parse_utc(*heartbeat) : std::nullopt;
  if (host != host_name()) return beat && now_utc() - *beat < kLiveHeartbeatSeconds;
  if (*pid == getpid()) return true;
  const ProcessState st = process_state(*pid);
  if (!st.running) return false;
  // A process that started after the session's last heartbeat (2 s for the
  // granularity of btime) cannot be its writer: the pid was reused.
  return !(st.started && beat && *st.started > *beat + 2);
}

}  // namespace

bool Store::session_live(const SessionRecord& s) const {
  return !s.ended_at && writer_live(s.host, s.pid, s.heartbeat_at);
}

bool Store::heartbeat(std::int64_t session_id) {
  return impl_->guard("refresh a session's heartbeat", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const bool ours = impl_->beat(session_id);
    tx.commit();
    return ours;
  });
}

bool Store::Impl::beat(std::int64_t session_id) {
  auto& u = stmt("UPDATE sessions SET heartbeat_at=? WHERE id=? AND pid=? AND host=?");
  u.bind(1, utc_now());
  u.bind(2, static_cast<std::int64_t>(session_id));
  u.bind(3, static_cast<std::int64_t>(getpid()));
  u.bind(4, host_name());
  return u.exec() == 1;
}

SessionRecord Store::open_session(const DeviceInfo& device, const KernelKey& kernel, const ProblemKey& problem,
                                  const SessionSpec& spec, bool resume) {
  Impl& m = *impl_;
  return m.guard("open a session", [&] {
    SQLite::Transaction tx(*m.db, SQLite::TransactionBehavior::IMMEDIATE);
    const auto dev = m.insert_device(device);
    const auto ker = m.kernel_id(kernel);
    const auto pro = m.problem_id(problem);
    std::optional<std::int64_t> id;
    bool resumed = false;
    if (resume) {
      // The newest unfinished session whose writer is gone (or is this
      // process); a live one belongs to its writer (issue 17: five processes
      // resumed one live session and wrote five best rows).
      auto& q = m.stmt(
          "SELECT id,host,pid,heartbeat_at FROM sessions WHERE device_id=? AND kernel_id=? AND "
          "problem_id=? AND strategy=? AND ended_at IS NULL ORDER BY id DESC");
      q.bind(1, static_cast<std::int64_t>(dev));
      q.bind(2, static_cast<std::int64_t>(ker));
      q.bind(3, static_cast<std::int64_t>(pro));
      q.bind(4, spec.strategy);
      while (q.executeStep()) {
        const std::string host = q.getColumn(1).getString();
        const auto pid = col_opt_int(q.getColumn(2));
        const std::optional<std::string> beat =
            q.getColumn(3).isNull() ? std::nullopt : std::optional<std::string>(q.getColumn(3).getString());
        const bool mine = pid && *pid == getpid() && host == host_name();
        if (mine || !writer_live(host, pid, beat)) {
          id = q.getColumn(0).getInt64();
          break;
        }
      }
      q.reset();
      if (id) {
        auto& take = m.stmt("UPDATE sessions SET host=?,pid=?,heartbeat_at=? WHERE id=?");
        take.bind(1, host_name());
        take.bind(2, static_cast<std::int64_t>(getpid()));
        take.bind(3, utc_now());
        take.bind(4, static_cast<std::int64_t>(*id));
        take.exec();
        resumed = true;
      }
    }
    if (!id) {
      auto& ins = m.stmt(
          "INSERT INTO sessions(uuid,device_id,kernel_id,problem_id,strategy,budget_trials,"
          "budget_seconds,started_at,ended_at,wstune_version,host,pid,heartbeat_at) "
          "VALUES(?,?,?,?,?,?,?,?,NULL,?,?,?,?)");
      ins.bind(1, new_uuid());
      ins.bind(2, static_cast<std::int64_t>(dev));
      ins.bind(3, static_cast<std::int64_t>(ker));
      ins.bind(4, static_cast<std::int64_t>(pro));
      ins.bind(5, spec.strategy);
      bind_opt(ins, 6, spec.budget_trials);
      bind_opt(ins, 7, spec.budget_seconds);
      ins.bind(8, utc_now());
      ins.bind(9, std::string(wstune::version()));
      ins.bind(10, host_name());
      ins.bind(11, static_cast<std::int64_t>(getpid()));
      ins.bind(12, utc_now());
      ins.exec();
      id = m.db->getLastInsertRowid();
    }
    tx.commit();
    auto& q = m.stmt(std::string(kSessionSelect) + "WHERE s.id=?");
    q.bind(1, static_cast<std::int64_t>(*id));
    q.executeStep();
    SessionRecord r = session_from_row(q);
    r.resumed = resumed;
    return r;
  });
}

void Store::end_session(std::int64_t session_id) {
  impl_->guard("end a session", [&] {
    auto& u = impl_->stmt(
        "UPDATE sessions SET ended_at=? WHERE id=? AND ended_at IS NULL AND "
        "(pid IS NULL OR (pid=? AND host=?))");
    u.bind(1, utc_now());
    u.bind(2, static_cast<std::int64_t>(session_id));
    u.bind(3, static_cast<std::int64_t>(getpid()));
    u.bind(4, host_name());
    u.exec();
  });
}

std::optional<SessionRecord> Store::session(std::int64_t session_id) const {
  return impl_->guard("read a session", [&]() -> std::optional<SessionRecord> {
    auto& q = impl_->stmt(std::string(kSessionSelect) + "WHERE s.id=?");
    q.bind(1, static_cast<std::int64_t>(session_id));
    if (!q.executeStep()) return std::nullopt;
    return session_from_row(q);
  });
}

std::vector<SessionRecord> Store::sessions() const {
  return impl_->guard("read sessions", [&] {
    std::vector<SessionRecord> out;
    auto& q = impl_->stmt(std::string(kSessionSelect) + "ORDER BY s.id");
    while (q.executeStep()) out.push_back(session_from_row(q));
    return out;
  });
}

// ---- trials ----------------------------------------------------------------------------

bool Store::Impl::insert_trial(std::int64_t session_id, const TrialRecord& t, const std::string& created_at) {
  check_json_depth(t.params, "a trial's params");
  auto& ins = stmt(
      "INSERT INTO trials(session_id,config,local_dims,local_x,local_y,local_z,status,error,samples_ms,median_ms,"
      "compile_ms,run_ms,verify_ms,created_at,params,global_dims,global_x,global_y,global_z) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(session_id,config) DO NOTHING");
  ins.bind(1, static_cast<std::int64_t>(session_id));
  ins.bind(2, configuration_key(t.params, t.local));
  bind_local(ins, 3, t.local);
  ins.bind(7, std::string(to_string(t.status)));
  ins.bind(8, t.error);
  ins.bind(9, json(t.samples_ms).dump());
  bind_opt(ins, 10, t.median_ms());
  bind_opt(ins, 11, t.compile_ms);
  bind_opt(ins, 12, t.run_ms);
  bind_opt(ins, 13, t.verify_ms);
  ins.bind(14, created_at.empty() ? utc_now() : created_at);
  ins.bind(15, t.params.dump());
  bind_extent(ins, 16, t.global);
  return ins.exec() == 1;
}

bool Store::add_trial(std::int64_t session_id, const TrialRecord& t) {
  return impl_->guard("store a trial", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const bool added = impl_->insert_trial(session_id, t, {});
    impl_->beat(session_id);
    tx.commit();
    return added;
  });
}

std::size_t Store::add_trials(std::int64_t session_id, const std::vector<TrialRecord>& trials) {
  return impl_->guard("store trials", [&] {
    SQLite::Transaction tx(*impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    const std::string now = utc_now();
    std::size_t added = 0;
    for (const TrialRecord& t : trials) added += impl_->insert_trial(session_id, t, now) ? 1 : 0;
    impl_->beat(session_id);
    tx.commit();
    return added;
  });
}

bool Store::measured(std::int64_t session_id, const LocalSize& local, const json& params) const {
  return impl_->guard("look up a trial", [&] {
    auto& q = impl_->stmt("SELECT 1 FROM trials WHERE session_id=? AND config=?");
    q.bind(1, static_cast<std::int64_t>(session_id));
    q.bind(2, configuration_key(params, local));
    return q.executeStep();
  });
}

std::vector<TrialRecord> Store::trials(std::int64_t session_id) const {
  return impl_->guard("read trials", [&] {
    std::vector<TrialRecord> out;
    auto& q = impl_->stmt(
        "SELECT local_dims,local_x,local_y,local_z,status,error,samples_ms,compile_ms,run_ms,"
        "verify_ms,id,created_at,params,global_dims,global_x,global_y,global_z FROM trials "
        "WHERE session_id=? ORDER BY id");
    q.bind(1, static_cast<std::int64_t>(session_id));
    while (q.executeStep()) {
      TrialRecord t;
      t.local = col_local(q, 0);
      t.status = parse_trial_status(q.getColumn(4).getString());
      t.error = q.getColumn(5).getString();
      t.samples_ms = json::parse(q.getColumn(6).getString()).get<std::vector<double>>();
      t.compile_ms = col_opt_double(q.getColumn(7));
      t.run_ms = col_opt_double(q.getColumn(8));
      t.verify_ms = col_opt_double(q.getColumn(9));
      t.id = q.getColumn(10).getInt64();
      t.created_at = q.getColumn(11).getString();
      t.params = impl_->stored_json(q.getColumn(12).getString(), "a trial's params");
      t.global = col_extent(q, 13);
      out.push_back(std::move(t));
    }
    return out;
  });
}

std::int64_t Store::trial_count(std::optional<std::int64_t> session_id) const {
  return impl_->guard("count trials", [&] {
    auto& q =
        impl_->stmt(session_id ? "SELECT count(*) FROM trials WHERE session_id=?" : "SELECT count(*) FROM trials");
    if (session_id) q.bind(1, static_cast<std::int64_t>(*session_id));
    q.executeStep();
    return q.getColumn(0).getInt64();
  });
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

// ---- split runs and calibrations ------------------------------------------------------------

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

// ---- check ------------------------------------------------------------------------------------

CheckReport Store::check() const {
  Impl& m = *impl_;
  return m.guard("check the database", [&] {
    CheckReport r;
    r.schema_version = m.db->execAndGet("PRAGMA user_version").getInt();
    r.journal_mode = m.db->execAndGet("PRAGMA journal_mode").getString();
    SQLite::Statement ic(*m.db, "PRAGMA integrity_check");
    while (ic.executeStep()) {
      const std::string msg = ic.getColumn(0).getString();
      if (msg != "ok") r.problems.push_back("integrity: " + msg);
    }
    SQLite::Statement fk(*m.db, "PRAGMA foreign_key_check");
    while (fk.executeStep()) {
      r.problems.push_back(fmt::format("foreign key: table {} row {} refers to a missing {} row",
                                       fk.getColumn(0).getString(), fk.getColumn(1).getInt64(),
                                       fk.getColumn(2).getString()));
    }
    auto count = [&](const char* table) {
      return m.db->execAndGet(fmt::format("SELECT count(*) FROM {}", table)).getInt64();
    };
    r.devices = count("devices");
    r.kernels = count("kernels");
    r.problems_count = count("problems");
    r.sessions = count("sessions");
    r.trials = count("trials");
    r.best_configs = count("best_configs");
    r.split_runs = count("split_runs");
    r.calibrations = count("split_calibrations");
    r.ok = r.problems.empty() && r.schema_version == kSchemaVersion;
    return r;
  });
}

}  // namespace wstune
