#!/usr/bin/env bash
# `wstune tune` into the store, killed with SIGKILL mid-session, then resumed:
# nothing measured twice, nothing lost, best configuration derived.
# Usage: tune_resume_test.sh PATH/TO/wstune
set -euo pipefail
W=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstune-resume.XXXXXX")
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$TMP"' EXIT
DB=$TMP/tune.db
count() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute(sys.argv[2]).fetchone()[0])" "$DB" "$1" 2>/dev/null || echo 0; }
args=(tune --kernel matmul --size 96 --strategy exhaustive --repeat 3 --db "$DB")
"$W" "${args[@]}" >"$TMP/first.out" 2>&1 &
pid=$!
# Kill once some, but not all, trials are committed.
for _ in $(seq 1 600); do
  n=$(count "SELECT count(*) FROM trials")
  [ "$n" -ge 5 ] && break
  sleep 0.05
done
kill -9 $pid; wait $pid 2>/dev/null || true
before=$(count "SELECT count(*) FROM trials")
ended=$(count "SELECT count(*) FROM sessions WHERE ended_at IS NOT NULL")
echo "killed with $before trial(s) stored, finished sessions: $ended"
[ "$before" -ge 5 ] || { echo "FAIL: the kill came before 5 trials"; exit 1; }
[ "$ended" = 0 ] || { echo "FAIL: the killed session was marked finished"; exit 1; }
"$W" "${args[@]}" --json >"$TMP/second.json" 2>"$TMP/second.err"
grep -q "resuming session 1 with $before stored trial" "$TMP/second.err" || { echo "FAIL: no resume"; cat "$TMP/second.err"; exit 1; }
python3 - "$DB" "$TMP/second.json" "$before" <<'PY'
import json, sqlite3, sys
db, out, before = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
c = sqlite3.connect(db)
sessions = c.execute("SELECT count(*), sum(ended_at IS NOT NULL) FROM sessions").fetchone()
assert sessions == (1, 1), f"one finished session expected, got {sessions}"
rows = c.execute("SELECT config FROM trials WHERE session_id = 1").fetchall()
configs = [r[0] for r in rows]
assert len(configs) == len(set(configs)), "a configuration was stored twice"
space = out["space_size"] + 1  # + NULL
assert len(configs) == space, f"{len(configs)} trials stored, the space has {space}"
from_store = sum(1 for t in out["trials"] if t["from_store"])
assert from_store == before, f"{from_store} trials reused, {before} were stored before the kill"
assert out["evaluations"] == space - before, f"measured {out['evaluations']}, expected {space - before}"
best = c.execute("SELECT config FROM best_configs").fetchall()
assert len(best) == 1, f"one best configuration expected, got {best}"
print(f"resume ok: {before} stored before the kill, {out['evaluations']} measured after, {space} in all, best {best[0][0]}")
PY
