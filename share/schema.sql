-- wstune store, schema version 1 (PRAGMA user_version = 1).
-- Applied by wstune::Store when a database is created; later versions add
-- forward migrations (see docs/store.md). The library embeds this text
-- (generated at build time by lib/CMakeLists.txt).
-- Every table is STRICT; history tables are insert-only (nothing is
-- overwritten): the current best configuration is the newest row.

-- One OpenCL device, identified by DeviceInfo::fingerprint().
CREATE TABLE devices (
  id                    INTEGER PRIMARY KEY,
  fingerprint           TEXT NOT NULL UNIQUE,
  name                  TEXT NOT NULL,
  vendor                TEXT NOT NULL,
  type                  TEXT NOT NULL,
  platform              TEXT NOT NULL,
  driver_version        TEXT NOT NULL,
  opencl_version        TEXT NOT NULL,
  architecture          TEXT NOT NULL,
  compute_units         INTEGER NOT NULL,
  pe_per_cu             INTEGER NOT NULL,
  pe_source             TEXT NOT NULL,
  pe_detail             TEXT NOT NULL,
  max_clock_mhz         INTEGER NOT NULL,
  max_work_group_size   INTEGER NOT NULL,
  max_work_item_sizes   TEXT NOT NULL,     -- JSON array of work-items
  local_mem_bytes       INTEGER NOT NULL,
  global_mem_bytes      INTEGER NOT NULL,
  preferred_wg_multiple INTEGER NOT NULL,
  native_float_width    INTEGER NOT NULL,
  extensions            TEXT NOT NULL,     -- JSON array of strings
  info_json             TEXT NOT NULL,     -- to_json(DeviceInfo), every property
  first_seen            TEXT NOT NULL      -- UTC, ISO 8601
) STRICT;
CREATE INDEX devices_arch ON devices(architecture);
CREATE INDEX devices_vendor_type ON devices(vendor, type);

-- One kernel: its __kernel function name, a hash of its source, build options.
CREATE TABLE kernels (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  source_hash   TEXT NOT NULL,
  build_options TEXT NOT NULL,
  UNIQUE (name, source_hash, build_options)
) STRICT;

-- One problem: a global work size (NDRange) and, for wstune's own kernels,
-- the kernel-specific size text (e.g. "1024x1024x1024"; "" for apps).
CREATE TABLE problems (
  id        INTEGER PRIMARY KEY,
  dims      INTEGER NOT NULL CHECK (dims IN (1, 2, 3)),
  global_x  INTEGER NOT NULL CHECK (global_x > 0),
  global_y  INTEGER NOT NULL CHECK (global_y > 0),
  global_z  INTEGER NOT NULL CHECK (global_z > 0),
  size_text TEXT NOT NULL,
  UNIQUE (dims, global_x, global_y, global_z, size_text)
) STRICT;

-- One tuning session of one kernel, problem and device.
CREATE TABLE sessions (
  id             INTEGER PRIMARY KEY,
  uuid           TEXT NOT NULL UNIQUE,
  device_id      INTEGER NOT NULL REFERENCES devices(id),
  kernel_id      INTEGER NOT NULL REFERENCES kernels(id),
  problem_id     INTEGER NOT NULL REFERENCES problems(id),
  strategy       TEXT NOT NULL,
  budget_trials  INTEGER,                 -- NULL: no limit
  budget_seconds REAL,                    -- NULL: no limit
  started_at     TEXT NOT NULL,           -- UTC, ISO 8601
  ended_at       TEXT,                    -- NULL while running or after a kill
  wstune_version TEXT NOT NULL,
  host           TEXT NOT NULL
) STRICT;
CREATE INDEX sessions_key ON sessions(device_id, kernel_id, problem_id, strategy);

-- One configuration measured in a session; at most one per configuration.
-- local_* are NULL for the driver default (a NULL local_work_size).
CREATE TABLE trials (
  id          INTEGER PRIMARY KEY,
  session_id  INTEGER NOT NULL REFERENCES sessions(id),
  config      TEXT NOT NULL,              -- "null", "256" or "32x8"
  local_dims  INTEGER,
  local_x     INTEGER,
  local_y     INTEGER,
  status      TEXT NOT NULL CHECK (status IN
                ('correct','compile','runtime','constraints','correctness','timeout')),
  error       TEXT NOT NULL,
  samples_ms  TEXT NOT NULL,              -- JSON array: every kernel-time sample (ms)
  median_ms   REAL,                       -- NULL when no sample
  compile_ms  REAL,
  run_ms      REAL,
  verify_ms   REAL,
  created_at  TEXT NOT NULL,
  UNIQUE (session_id, config)
) STRICT;

-- Best configurations per (device, kernel, problem), with history: a new
-- best is a new row; the current one is the newest (largest id).
CREATE TABLE best_configs (
  id            INTEGER PRIMARY KEY,
  uuid          TEXT NOT NULL UNIQUE,
  device_id     INTEGER NOT NULL REFERENCES devices(id),
  kernel_id     INTEGER NOT NULL REFERENCES kernels(id),
  problem_id    INTEGER NOT NULL REFERENCES problems(id),
  session_id    INTEGER REFERENCES sessions(id),  -- the session it came from, if any
  config        TEXT NOT NULL,
  local_dims    INTEGER,
  local_x       INTEGER,
  local_y       INTEGER,
  median_ms     REAL NOT NULL,
  null_ms       REAL,                     -- the driver default's median
  rule_ms       REAL,                     -- the paper's §3.2.3 rule's median
  ratio_to_null REAL,                     -- null_ms / median_ms (≥ 1 is better)
  ratio_to_rule REAL,                     -- rule_ms / median_ms
  recorded_at   TEXT NOT NULL
) STRICT;
-- Covers the look-up's scan (device, kernel → problem, newest id, shape).
CREATE INDEX best_key ON best_configs(device_id, kernel_id, problem_id, id, local_dims, local_x, local_y);

-- Split runs of one NDRange over several devices (the daemon).
CREATE TABLE split_runs (
  id          INTEGER PRIMARY KEY,
  uuid        TEXT NOT NULL UNIQUE,
  kernel_id   INTEGER NOT NULL REFERENCES kernels(id),
  problem_id  INTEGER NOT NULL REFERENCES problems(id),
  model       TEXT NOT NULL,
  makespan_ms REAL NOT NULL,
  detail      TEXT NOT NULL,              -- opaque JSON
  created_at  TEXT NOT NULL,
  host        TEXT NOT NULL
) STRICT;
CREATE TABLE split_run_devices (
  split_run_id INTEGER NOT NULL REFERENCES split_runs(id),
  position     INTEGER NOT NULL,
  device_id    INTEGER NOT NULL REFERENCES devices(id),
  share        REAL NOT NULL,             -- fraction of the split units, 0..1
  time_ms      REAL NOT NULL,
  PRIMARY KEY (split_run_id, position)
) STRICT;

-- Split-model calibrations per device and kernel (opaque JSON, history kept).
CREATE TABLE split_calibrations (
  id         INTEGER PRIMARY KEY,
  uuid       TEXT NOT NULL UNIQUE,
  device_id  INTEGER NOT NULL REFERENCES devices(id),
  kernel_id  INTEGER NOT NULL REFERENCES kernels(id),
  model      TEXT NOT NULL,
  params     TEXT NOT NULL,               -- opaque JSON
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX calibrations_key ON split_calibrations(device_id, kernel_id, model, id);
