#pragma once
// Internal: the SQLite connection behind wstune::Store, a prepared-statement
// cache and error translation. Not installed.
#include <SQLiteCpp/SQLiteCpp.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "wstune/store.hpp"

namespace wstune {

struct Store::Impl {
  std::string path;
  StoreOptions options;
  std::unique_ptr<SQLite::Database> db;
  std::map<std::string, std::unique_ptr<SQLite::Statement>, std::less<>> cache;
  std::uint64_t generation = 0;

  /// A cached prepared statement, reset and unbound.
  SQLite::Statement& stmt(std::string_view sql);
  /// Translates an SQLite failure into a StoreError naming the file, what was
  /// being done and the fix.
  [[noreturn]] void fail(const char* what, const SQLite::Exception& e) const;
  /// Runs `f` translating SQLite exceptions.
  /// Statements handed out since the last reset_used().
  std::vector<SQLite::Statement*> used;
  /// Resets the statements handed out, ending their read transactions (a
  /// stepped but unreset SELECT keeps a WAL snapshot open, and a later BEGIN
  /// IMMEDIATE on a stale snapshot fails with SQLITE_BUSY at once).
  void reset_used() noexcept;
  /// Runs `f` translating SQLite exceptions; resets used statements after.
  template <class F>
  auto guard(const char* what, F&& f) -> decltype(f()) {
    struct Reset {
      Impl* m;
      ~Reset() { m->reset_used(); }
    } reset{this};
    try {
      return f();
    } catch (const SQLite::Exception& e) {
      fail(what, e);
    }
  }
  /// A JSON column's text parsed with the depth bound of json_input.hpp;
  /// StoreError naming the file and `what` when it is deeper or malformed
  /// (written by another tool: wstune refuses such values on the way in).
  nlohmann::json stored_json(const std::string& text, const char* what) const;
  /// A trial's energy column (format/trial_json.hpp's form): nullopt when
  /// NULL; StoreError as stored_json() when it cannot be read.
  std::optional<EnergyMeasurement> stored_energy(const SQLite::Column& c) const;
  /// Refreshes the heartbeat of a session this process writes (inside the
  /// caller's transaction); false when the session is not this process's.
  bool beat(std::int64_t session_id);
  std::int64_t device_id(std::string_view fingerprint);
  std::int64_t kernel_id(const KernelKey& k);
  std::int64_t problem_id(const ProblemKey& p);
  std::int64_t insert_device(const DeviceInfo& d);
  /// Inserts a trial unless its configuration is in the session; true if inserted.
  bool insert_trial(std::int64_t session_id, const TrialRecord& t, const std::string& created_at);
  /// Inserts a best-configuration row (b.session_id as is); returns its id.
  std::int64_t insert_best(const BestConfig& b, const std::string& uuid, const std::string& at);
  /// Inserts a split run with its devices; returns its id.
  std::int64_t insert_split(const SplitRun& run, const std::string& uuid);
  /// Inserts a calibration; returns its id.
  std::int64_t insert_calibration(const StoredCalibration& c, const std::string& uuid);
};

/// Current UTC time, ISO 8601 with milliseconds ("2025-01-31T12:00:00.123Z").
std::string utc_now();
/// A random 128-bit id as 32 hex digits.
std::string new_uuid();
/// This host's name.
std::string host_name();
/// Binds a local size to the columns local_dims, local_x, local_y, local_z
/// at parameters i … i + 3 (all NULL for the driver's choice).
void bind_local(SQLite::Statement& s, int i, const LocalSize& l);
/// Reads local_dims, local_x, local_y, local_z from columns i … i + 3.
LocalSize col_local(const SQLite::Statement& s, int i);
/// Binds a session's objectives at i: a JSON array, NULL when empty (time).
void bind_objectives(SQLite::Statement& s, int i, const std::vector<std::string>& objectives);
/// A session's objectives column: empty when NULL or not an array of texts.
std::vector<std::string> col_objectives(const SQLite::Column& c);
/// Binds an optional NDRange to global_dims, global_x, global_y, global_z at i … i + 3.
void bind_extent(SQLite::Statement& s, int i, const std::optional<Extent>& e);
/// Reads an optional NDRange from columns i … i + 3 (dims, x, y, z).
std::optional<Extent> col_extent(const SQLite::Statement& s, int i);
/// Binds an optional number at parameter i (NULL when absent).
void bind_opt(SQLite::Statement& s, int i, const std::optional<double>& v);
/// Binds an optional integer at parameter i (NULL when absent).
void bind_opt(SQLite::Statement& s, int i, const std::optional<std::int64_t>& v);
/// A nullable REAL column.
std::optional<double> col_opt_double(const SQLite::Column& c);
/// A nullable INTEGER column.
std::optional<std::int64_t> col_opt_int(const SQLite::Column& c);
/// Reads a problem's NDRange from columns i … i + 3 (dims, global_x, global_y, global_z).
Extent col_problem_extent(const SQLite::Statement& s, int i);

}  // namespace wstune
