#pragma once

#include "wstune/export.h"
/// @file store.hpp
/// The measurement store: one SQLite database holding devices, kernels,
/// problems, tuning sessions, every trial (with every sample), the best
/// configuration per (device, kernel, problem) with history, split runs and
/// split-model calibrations. WAL mode, a busy timeout, foreign keys, STRICT
/// tables and a schema version (PRAGMA user_version) with forward
/// migrations; the schema is share/schema.sql (embedded in the library).
/// Format and rules: docs/store.md.
///
/// Thread safety: one Store per thread (an SQLite connection is not shared);
/// any number of processes may write the same file at once.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wstune/configuration.hpp"
#include "wstune/device.hpp"
#include "wstune/energy.hpp"
#include "wstune/error.hpp"
#include "wstune/types.hpp"

namespace wstune {

/// A database problem: unreadable, read-only, corrupt, locked, of a newer
/// schema, or a directory that cannot be created. The message names the
/// file and the fix. Command-line tools exit with status 1 on it.
class WSTUNE_EXPORT StoreError : public Error {
 public:
  using Error::Error;
};

/// The schema version this wstune writes (PRAGMA user_version).
inline constexpr int kSchemaVersion = 3;

/// A session written from another host is live while its heartbeat is
/// younger than this (seconds). Its writer refreshes the heartbeat with every
/// trial it commits and before every measurement (docs/store.md).
inline constexpr double kLiveHeartbeatSeconds = 600;

/// The schema (share/schema.sql, version 1) as embedded in the library.
WSTUNE_EXPORT std::string_view schema_sql() noexcept;
/// The forward migrations share/migrations/N.sql as embedded: element i takes
/// the schema from version i + 1 to i + 2.
WSTUNE_EXPORT std::vector<std::string_view> schema_migrations();

/// The default database path: $WSTUNE_DB if set and non-empty, else
/// $XDG_DATA_HOME/wstune/wstune.db, else $HOME/.local/share/wstune/wstune.db.
/// Throws StoreError when none of these variables is set.
WSTUNE_EXPORT std::string default_db_path();

/// How to open a Store.
struct StoreOptions {
  bool read_only = false;      ///< open without writing (no creation, no migration)
  int busy_timeout_ms = 5000;  ///< how long to wait for another writer's lock (ms)
};

/// A kernel's identity: its __kernel function name (CL_KERNEL_FUNCTION_NAME),
/// a hash of its program (fnv1a_hex() of CL_PROGRAM_SOURCE, 16 hex digits;
/// for a program without source, "il:" + the hash of CL_PROGRAM_IL or
/// "bin:" + the hash of the device's CL_PROGRAM_BINARIES; "" when unknown)
/// and the build options (CL_PROGRAM_BUILD_OPTIONS). The look-up chain
/// matches all three: another -D value or another kernel of the same
/// function name is another kernel.
struct KernelKey {
  std::string name;           ///< __kernel function name, e.g. "matmul"
  std::string source_hash;    ///< hash of the OpenCL C source, "" if unknown
  std::string build_options;  ///< clBuildProgram options, "" for none
  friend bool operator==(const KernelKey&, const KernelKey&) = default;
};

/// A problem: the global work size (NDRange, work-items; for a kernel
/// described by a tuning file, whose NDRange depends on its parameters, the
/// problem size, T1 ProblemSize) and, for wstune's own and described
/// kernels, the size text ("" for apps).
struct ProblemKey {
  Extent global;          ///< the NDRange, or the problem size (1 to 3 dimensions)
  std::string size_text;  ///< e.g. "1024x1024x1024", or ""
  friend bool operator==(const ProblemKey&, const ProblemKey&) = default;
};

/// What a tuning session is.
struct SessionSpec {
  std::string strategy;                       ///< e.g. "exhaustive", "random", "online"
  std::optional<std::int64_t> budget_trials;  ///< trial budget, none = unlimited
  std::optional<double> budget_seconds;       ///< time budget (s), none = unlimited
  /// The objectives the session tuned for, each "NAME:min" or "NAME:max"
  /// (docs/energy.md): one decides the best, several keep a Pareto front;
  /// empty = time (the median kernel time, minimised).
  std::vector<std::string> objectives = {};
};

/// A stored tuning session.
struct SessionRecord {
  std::int64_t id = 0;                      ///< row id in this database
  std::string uuid;                         ///< globally unique id (survives export/import)
  std::string device_fingerprint;           ///< DeviceInfo::fingerprint()
  KernelKey kernel;                         ///< the kernel
  ProblemKey problem;                       ///< the problem
  SessionSpec spec;                         ///< strategy and budgets
  std::string started_at;                   ///< UTC, ISO 8601
  std::optional<std::string> ended_at;      ///< UTC; none while running or after a kill
  std::string wstune_version;               ///< version of the wstune that started it
  std::string host;                         ///< host name
  bool resumed = false;                     ///< set by Store::open_session when an unfinished session was reused
  std::optional<std::int64_t> pid;          ///< the process writing it (on `host`), none when unknown
  std::optional<std::string> heartbeat_at;  ///< UTC of the writer's last sign of life, none when unknown
};

/// One measured configuration.
struct WSTUNE_EXPORT TrialRecord {
  /// Tuning parameter values (T1 TuningParameters), an object of name →
  /// number, bool or string; empty for kernels without parameters.
  nlohmann::json params = nlohmann::json::object();
  LocalSize local;                            ///< the local size (nullopt = driver default)
  std::optional<Extent> global;               ///< the NDRange it ran, when the parameters set it (none: the problem's)
  TrialStatus status = TrialStatus::correct;  ///< the status class
  std::string error;                          ///< why it failed, "" when correct
  std::vector<double> samples_ms;             ///< every kernel-time sample (ms)
  std::optional<double> compile_ms;           ///< program build time (ms)
  std::optional<double> run_ms;               ///< wall time of the runs (ms)
  std::optional<double> verify_ms;            ///< verification time (ms)
  /// Energy and power on the device's sensor (energy.hpp); none when not measured.
  std::optional<EnergyMeasurement> energy = std::nullopt;
  std::int64_t id = 0;     ///< row id (set when read back)
  std::string created_at;  ///< UTC (set when read back)
  /// The median of samples_ms; nullopt without samples.
  [[nodiscard]] std::optional<double> median_ms() const;
};

/// A best configuration (one history row).
struct WSTUNE_EXPORT BestConfig {
  std::string device_fingerprint;                    ///< the device
  KernelKey kernel;                                  ///< the kernel
  ProblemKey problem;                                ///< the problem
  nlohmann::json params = nlohmann::json::object();  ///< its tuning parameter values (see TrialRecord::params)
  LocalSize local;                                   ///< the best local size (nullopt = driver default)
  std::optional<Extent> global;                      ///< its NDRange when the parameters set it (none: the problem's)
  double median_ms = 0;                              ///< its median kernel time (ms)
  std::optional<double> null_ms;                     ///< the driver default's median (ms)
  std::optional<double> rule_ms;                     ///< the paper's §3.2.3 rule's median (ms)
  std::optional<std::int64_t> session_id;            ///< the session it was derived from
  std::int64_t id = 0;                               ///< row id (set when read back)
  std::string uuid;                                  ///< unique id (set when read back)
  std::string recorded_at;                           ///< UTC (set when read back)
  /// null_ms / median_ms (> 1: faster than NULL).
  [[nodiscard]] std::optional<double> ratio_to_null() const;
  /// rule_ms / median_ms (> 1: faster than the paper's rule).
  [[nodiscard]] std::optional<double> ratio_to_rule() const;
};

/// A lean current-best row for ranking in the look-up chain.
struct BestCandidate {
  std::int64_t id = 0;            ///< best_configs row id (Store::best_by_id)
  Extent global;                  ///< its problem's NDRange
  LocalSize local;                ///< its local size
  double median_ms = 0;           ///< its median kernel time (ms)
  std::optional<double> null_ms;  ///< the driver default's median in the same session (ms), if measured
};

/// Filter for Store::best_configs(); empty fields match everything.
struct BestFilter {
  std::string device;            ///< fingerprint, or a case-insensitive substring of the device name
  std::string kernel;            ///< kernel function name (exact)
  std::optional<Extent> global;  ///< exact global size
  bool history = false;          ///< all rows instead of the current best per key
};

/// One device's part of a split run.
struct SplitShare {
  std::string device_fingerprint;  ///< the device (must be stored with put_device first)
  double share = 0;                ///< fraction of the split units, 0..1
  double time_ms = 0;              ///< its measured time (ms)
};

/// One split run of an NDRange over several devices.
struct SplitRun {
  KernelKey kernel;                                  ///< the kernel
  ProblemKey problem;                                ///< the whole problem
  std::string model;                                 ///< the split model, e.g. "pe-ratio"
  double makespan_ms = 0;                            ///< the slowest device's time (ms)
  std::vector<SplitShare> devices;                   ///< per-device shares and times, in order
  nlohmann::json detail = nlohmann::json::object();  ///< opaque extra data
  std::string created_at;                            ///< UTC (set when read back)
  std::string host;                                  ///< host (set when read back)
};

/// A split-model calibration for one device and kernel.
struct StoredCalibration {
  std::string device_fingerprint;  ///< the device
  KernelKey kernel;                ///< the kernel
  std::string model;               ///< the model name
  nlohmann::json params;           ///< opaque JSON
  std::string created_at;          ///< UTC (set when read back)
};

/// Result of Store::check().
struct CheckReport {
  int schema_version = 0;             ///< PRAGMA user_version
  bool ok = false;                    ///< integrity and foreign keys fine
  std::vector<std::string> problems;  ///< integrity_check / foreign_key_check messages
  std::string journal_mode;           ///< e.g. "wal"
  std::int64_t devices = 0, kernels = 0, problems_count = 0, sessions = 0, trials = 0, best_configs = 0, split_runs = 0,
               calibrations = 0;  ///< row counts
};

/// What Store::import_json() did.
struct ImportStats {
  std::int64_t devices = 0, sessions = 0, trials = 0, best_configs = 0, split_runs = 0,
               calibrations = 0;  ///< rows added
  std::int64_t skipped = 0;       ///< rows already present (not duplicated)
};

/// 16 hex digits of FNV-1a 64 of `text` (used for KernelKey::source_hash).
WSTUNE_EXPORT std::string fnv1a_hex(std::string_view text);

/// The measurement store. All methods throw StoreError on a database
/// failure (with the path and the fix); writes are transactions that leave
/// the database unchanged on failure.
class WSTUNE_EXPORT Store {
 public:
  /// Opens (creating it and its parent directories unless read-only) the
  /// database at `path` (":memory:" for a private in-memory one), applies
  /// forward migrations and refuses a newer schema, a corrupt, read-only
  /// (when writing), locked or foreign file with StoreError.
  explicit Store(const std::string& path, StoreOptions options = {});
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// The file it was opened with.
  [[nodiscard]] const std::string& path() const noexcept;
  /// PRAGMA user_version.
  [[nodiscard]] int schema_version() const;
  /// Incremented by every write of a best configuration through this object
  /// (used by Lookup to drop its cache).
  [[nodiscard]] std::uint64_t generation() const noexcept;

  /// Stores a device (by fingerprint; an existing row is kept) and returns its row id.
  std::int64_t put_device(const DeviceInfo& d);
  /// The stored device with this fingerprint.
  [[nodiscard]] std::optional<DeviceInfo> device(std::string_view fingerprint) const;
  /// All stored devices.
  [[nodiscard]] std::vector<DeviceInfo> devices() const;
  /// Stores a kernel identity (existing rows kept) and returns its row id.
  std::int64_t put_kernel(const KernelKey& k);
  /// The stored kernel identities whose function name is `name`, oldest first.
  [[nodiscard]] std::vector<KernelKey> kernels(std::string_view name) const;
  /// Stores a problem (existing rows kept) and returns its row id.
  std::int64_t put_problem(const ProblemKey& p);

  /// Starts a session written by this process (host, pid, heartbeat), or
  /// with `resume` reuses the newest unfinished one (ended_at NULL) of the
  /// same device, kernel, problem and strategy that is not live (see
  /// session_live(); a session of this very process is reused too) and takes
  /// it over (its pid, host and heartbeat become this process's), all in one
  /// transaction: a session being written by another live process is never
  /// resumed (SessionRecord::resumed tells). Stores device, kernel and problem.
  SessionRecord open_session(const DeviceInfo& device, const KernelKey& kernel, const ProblemKey& problem,
                             const SessionSpec& spec, bool resume = true);
  /// Marks a session finished (sets ended_at) unless another process has
  /// taken it over.
  void end_session(std::int64_t session_id);
  /// True when the session's writer is alive: on this host, its pid names a
  /// running process (not a zombie) that started before the session's last
  /// heartbeat (so a reused pid does not count); on another host, its
  /// heartbeat is younger than kLiveHeartbeatSeconds. False for a finished
  /// session or one with no recorded writer (imported, or schema version 1).
  [[nodiscard]] bool session_live(const SessionRecord& session) const;
  /// Refreshes the heartbeat of a session this process writes; false (and
  /// nothing written) when it is not, or no longer, this process's.
  bool heartbeat(std::int64_t session_id);
  /// A stored session; nullopt if absent.
  [[nodiscard]] std::optional<SessionRecord> session(std::int64_t session_id) const;
  /// All sessions, oldest first.
  [[nodiscard]] std::vector<SessionRecord> sessions() const;

  /// Stores one trial in its own transaction (refreshing the session's
  /// heartbeat when this process writes it); false (and nothing written)
  /// when the session already has this configuration. Throws UsageError for
  /// params nested deeper than kMaxJsonDepth (json_input.hpp).
  bool add_trial(std::int64_t session_id, const TrialRecord& t);
  /// Stores trials in one transaction; returns how many were new (already
  /// measured configurations are skipped, never overwritten).
  std::size_t add_trials(std::int64_t session_id, const std::vector<TrialRecord>& trials);
  /// True when the session has a trial of the configuration (`params`,
  /// `local`) (resume check).
  [[nodiscard]] bool measured(std::int64_t session_id, const LocalSize& local,
                              const nlohmann::json& params = nlohmann::json::object()) const;
  /// The session's trials in insertion order.
  [[nodiscard]] std::vector<TrialRecord> trials(std::int64_t session_id) const;
  /// Number of trials, in one session or (nullopt) in the database.
  [[nodiscard]] std::int64_t trial_count(std::optional<std::int64_t> session_id = std::nullopt) const;

  /// Appends a best-configuration history row; returns its row id. A best
  /// of a session (BestConfig::session_id) is recorded only by the session's
  /// writer: StoreError when another process writes that session. The
  /// current best per (device, kernel, problem) is the newest row.
  std::int64_t record_best(const BestConfig& b);
  /// Derives the best configuration of a session from its trials (fastest
  /// correct median; null_ms from its "null" trial, rule_ms from the trial
  /// of `rule_local` when given) and records it. nullopt when the session
  /// has no correct trial.
  std::optional<BestConfig> derive_best(std::int64_t session_id, const LocalSize* rule_local = nullptr);
  /// Current best configurations (or all history rows), newest first.
  [[nodiscard]] std::vector<BestConfig> best_configs(const BestFilter& filter = {}) const;
  /// Current best local sizes for one kernel (the whole KernelKey) and NDRange
  /// dimensionality on the devices of one scope of the look-up chain: a
  /// fingerprint when `fingerprint` is set, else an architecture when
  /// `architecture` is set, else a (vendor, type) pair. Lean rows for
  /// ranking; fetch the winner with best_by_id(). Newest first.
  [[nodiscard]] std::vector<BestCandidate> candidates(const KernelKey& kernel, unsigned dims,
                                                      std::string_view fingerprint, std::string_view architecture,
                                                      std::string_view vendor, std::string_view type) const;
  /// One best-configuration row by id, or nullopt.
  [[nodiscard]] std::optional<BestConfig> best_by_id(std::int64_t id) const;
  /// The current best for one device fingerprint, kernel (the whole
  /// KernelKey) and exact global size (newest row), or nullopt.
  [[nodiscard]] std::optional<BestConfig> exact_best(std::string_view fingerprint, const KernelKey& kernel,
                                                     const Extent& global) const;

  /// Stores a split run (devices must be stored); returns its row id.
  /// Throws UsageError when its detail nests deeper than kMaxJsonDepth.
  std::int64_t record_split_run(const SplitRun& run);
  /// Split runs of a kernel name ("" = all), oldest first.
  [[nodiscard]] std::vector<SplitRun> split_runs(std::string_view kernel = {}) const;
  /// Appends a calibration (history kept); returns its row id. Throws
  /// UsageError when its params nest deeper than kMaxJsonDepth.
  std::int64_t put_calibration(const StoredCalibration& c);
  /// The newest calibration of a device fingerprint, kernel name and model.
  [[nodiscard]] std::optional<StoredCalibration> calibration(std::string_view fingerprint, std::string_view kernel,
                                                             std::string_view model) const;

  /// PRAGMA integrity_check and foreign_key_check, schema version, counts.
  [[nodiscard]] CheckReport check() const;

  /// Everything as one JSON document (format: docs/store.md).
  [[nodiscard]] nlohmann::json export_json() const;
  /// Merges an export document in one transaction: rows already present
  /// (same fingerprint, uuid, or session+configuration) are skipped. Throws
  /// UsageError naming the JSON path when the document is malformed or holds
  /// what the store cannot (rules in docs/store.md: nesting beyond
  /// kMaxJsonDepth, a newer schema, bad uuids, local sizes of the wrong
  /// dimensionality or that do not divide a correct configuration's NDRange,
  /// negative or non-finite times, a correct trial without samples, a best
  /// of a session that is nowhere, a uuid the database holds for another
  /// session; nothing written), StoreError on a database failure.
  ImportStats import_json(const nlohmann::json& doc);

  struct WSTUNE_NO_EXPORT Impl;
  /// Internal (lib/src/store/store_impl.hpp).
  [[nodiscard]] Impl& impl() const noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace wstune
