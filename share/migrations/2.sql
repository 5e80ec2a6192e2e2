-- wstune store: migration from schema version 1 to 2 (PRAGMA user_version = 2).
-- Applied by wstune::Store after schema.sql (docs/store.md). Adds tuning
-- parameters (T1 TuningParameters: one JSON object per configuration), the
-- z dimension of local sizes, the NDRange each configuration ran (it depends
-- on the parameters when the work per work-item is tuned), and the process
-- that writes a session (host, pid, heartbeat), so that a live session is
-- never resumed by another process.

ALTER TABLE trials ADD COLUMN params TEXT NOT NULL DEFAULT '{}';   -- JSON object: parameter name → value
ALTER TABLE trials ADD COLUMN local_z INTEGER;                      -- NULL for NULL or 1-/2-D local sizes
ALTER TABLE trials ADD COLUMN global_dims INTEGER;                  -- the NDRange it ran; NULL: the problem's
ALTER TABLE trials ADD COLUMN global_x INTEGER;
ALTER TABLE trials ADD COLUMN global_y INTEGER;
ALTER TABLE trials ADD COLUMN global_z INTEGER;

ALTER TABLE best_configs ADD COLUMN params TEXT NOT NULL DEFAULT '{}';
ALTER TABLE best_configs ADD COLUMN local_z INTEGER;
ALTER TABLE best_configs ADD COLUMN global_dims INTEGER;
ALTER TABLE best_configs ADD COLUMN global_x INTEGER;
ALTER TABLE best_configs ADD COLUMN global_y INTEGER;
ALTER TABLE best_configs ADD COLUMN global_z INTEGER;
DROP INDEX best_key;
CREATE INDEX best_key ON best_configs(device_id, kernel_id, problem_id, id, local_dims, local_x, local_y, local_z);

ALTER TABLE sessions ADD COLUMN pid INTEGER;                         -- the writing process; NULL when unknown
ALTER TABLE sessions ADD COLUMN heartbeat_at TEXT;                   -- UTC of its last sign of life
