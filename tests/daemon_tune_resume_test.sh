#!/usr/bin/env bash
# The master SIGKILLed during a tune (issue 14): every trial it received is
# in the database (committed as it arrived), and a rerun with --resume
# continues the same session without measuring a stored configuration again.
# Two workers with one fingerprint share the search (PoCL "pthread pthread").
# Checked on the store: the rerun reports the session resumed with the
# trials stored before the kill; the configurations it measured are exactly
# the missing ones (stored before + measured by the rerun = rows after, and
# the rows are every configuration of the space and the baseline, each once).
# Usage: daemon_tune_resume_test.sh MPIEXEC NPFLAG WSTUNED WSTUNE SHARE
set -uo pipefail
MPIEXEC=$1 NPFLAG=$2 WSTUNED=$3 WSTUNE=$4 SHARE=$5
source "$(dirname "$0")/daemon_test_lib.sh"
export POCL_DEVICES="pthread pthread" POCL_MAX_PTHREAD_COUNT=1

trials() { rows trials; }
args=(tune --kernel-file "$SHARE/examples/kernels/stencil5.json" --size 32x16 --strategy exhaustive -r 3
      --db "$DB" --json --timeout 120)
ROWS=trials MIN_ROWS=10 start_and_wait "${args[@]}" --pid-file "$PIDFILE"
kill -KILL "$master"
wait_gone "the master's SIGKILL"
before=$(trials)
echo "master $master killed with $before trials stored; launcher status $rc"
"$WSTUNE" db check --db "$DB" >"$TMP/check" 2>&1 || fail "db check after the kill: $(cat "$TMP/check")"

"$MPIEXEC" "$NPFLAG" 3 "$WSTUNED" "${args[@]}" --resume >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" = 0 ] || fail "the --resume rerun exited $rc"
python3 - "$TMP/out" "$DB" "$before" <<'PY' || fail "resume report or database"
import json, sqlite3, sys
text, db, before = open(sys.argv[1]).read(), sys.argv[2], int(sys.argv[3])
doc = json.loads(text[text.index("{"):])
job = doc["jobs"][0]
assert job["status"] == "ok", job["status"]
res = job["workers"][0]["result"]
c = sqlite3.connect(db)
sessions = c.execute("SELECT id, ended_at FROM sessions").fetchall()
assert len(sessions) == 1 and sessions[0][1], f"one session, finished: {sessions}"
assert res["session"]["resumed"] and res["session"]["resumed_trials"] == before, res["session"]
rows = [r for (r,) in c.execute("SELECT config FROM trials")]
measured = sum(res["measured_by_rank"].values())
total = res["space_size"] + 1
assert before < total, f"the kill came after the search ({before} of {total})"
assert len(rows) == len(set(rows)) == total, f"{len(rows)} rows, {len(set(rows))} distinct, {total} configurations"
assert before + measured == total, f"{before} stored + {measured} measured by the rerun != {total}: a stored configuration was measured again"
assert c.execute("SELECT count(*) FROM best_configs").fetchone()[0] == 1
print(f"ok: {before} trials survived the kill, the rerun measured the other {measured}, none twice")
PY
