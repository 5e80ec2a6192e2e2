// wstune::Store: opening and migrating the database, the helpers every row
// family shares, and the integrity check. The row families live in
// store_devices.cpp, store_sessions.cpp, store_best.cpp,
// store_split_runs.cpp and store_calibrations.cpp; export/import in
// store_io.cpp.
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
#include "format/trial_json.hpp"
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

std::optional<EnergyMeasurement> Store::Impl::stored_energy(const SQLite::Column& c) const {
  if (c.isNull()) return std::nullopt;
  const json j = stored_json(c.getString(), "a trial's energy");
  try {
    return energy_from_json(j, "energy");
  } catch (const UsageError& e) {
    throw StoreError(fmt::format(
        "database {} holds a trial's energy that wstune cannot read ({}): repair or remove that row", path, e.what()));
  }
}

void bind_objectives(SQLite::Statement& s, int i, const std::vector<std::string>& objectives) {
  if (objectives.empty()) {
    s.bind(i);
  } else {
    s.bind(i, json(objectives).dump());
  }
}

std::vector<std::string> col_objectives(const SQLite::Column& c) {
  if (c.isNull()) return {};
  const json j = json::parse(c.getString(), nullptr, false);
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const json& o : j)
    if (o.is_string()) out.push_back(o.get<std::string>());
  return out;
}

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

namespace {

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
