-- wstune store: migration from schema version 2 to 3 (PRAGMA user_version = 3).
-- Applied by wstune::Store (docs/store.md). Adds each trial's energy on its
-- device's sensor (issue 38, docs/energy.md): a JSON object as the trial's
-- one JSON form writes it ("sensor", "energy_j", "power_w", "window_ms",
-- "runs", "resolution_j", "update_period_ms", "read_ms"), NULL when not
-- measured; and the objectives a session tuned for (a JSON array of metric
-- names with their direction, e.g. ["time:min","energy:min"]; NULL: time).
-- Stored rows keep their data: old trials have no energy.

ALTER TABLE trials ADD COLUMN energy TEXT;      -- JSON object, NULL when not measured
ALTER TABLE sessions ADD COLUMN objectives TEXT;  -- JSON array, NULL: ["time:min"]
