#!/usr/bin/env bash
# A worker rank killed with SIGKILL under the real MPI launcher (issue 17).
# MPICH's hydra then SIGKILLs every other rank at once, the master included
# (measured, docs/daemon.md "A whole rank killed"), so the run ends. What
# must hold, and is checked here:
#   - the launcher ends within 60 s with a non-zero status, and every process
#     of the run is gone (ranks, their isolated OpenCL processes, the
#     --pid-file guardian);
#   - the --pid-file is not left behind (the guardian removes it);
#   - the database is intact and holds exactly the jobs finished before the
#     kill (each committed when its result came in: nothing received is lost);
#   - a rerun with --resume runs only the jobs that were not stored: every
#     job of the list is stored exactly once, none twice.
# Usage: daemon_kill_test.sh MPIEXEC NPFLAG WSTUNED WSTUNE
set -uo pipefail
MPIEXEC=$1 NPFLAG=$2 WSTUNED=$3 WSTUNE=$4
source "$(dirname "$0")/daemon_test_lib.sh"

total=4
write_jobs "$total" 10
args=(run --job "$TMP/jobs.json" --db "$DB" --json --timeout 120)
start_and_wait "${args[@]}" --pid-file "$PIDFILE"
# A worker rank: a wstuned whose parent is the launcher's proxy, not the master.
victim=
for p in "${procs[@]}"; do
  [ "$p" = "$master" ] && continue
  parent=$(ps -o ppid= -p "$p" | tr -d ' ')
  comm=$(ps -o comm= -p "$parent" 2>/dev/null)
  if [[ "$comm" == hydra_pmi_prox* ]] && [ "$(ps -o comm= -p "$p")" = wstuned ]; then victim=$p; break; fi
done
[ -n "$victim" ] || fail "no worker rank found among ${procs[*]}"
isolated=$(ps -o pid= --ppid "$victim" | tr -d ' ')
echo "first row stored; master $master, killing worker rank pid $victim (its isolated OpenCL process: $isolated)"
kill -KILL "$victim"
wait_gone "the SIGKILL"
echo "launcher exit status $rc, $sent_to_end s after the SIGKILL"
[ "$rc" != 0 ] || fail "exit status 0 after a worker rank was killed"
for _ in $(seq 1 50); do [ -e "$PIDFILE" ] || break; sleep 0.1; done
[ -e "$PIDFILE" ] && fail "the --pid-file was left behind (stale: it names the dead master $master)"
done_before=$(runs)
"$WSTUNE" db check --db "$DB" >"$TMP/check" 2>&1 || fail "db check after the kill: $(cat "$TMP/check")"
echo "$done_before of $total jobs stored before the kill"
[ "$done_before" -ge 1 ] && [ "$done_before" -lt "$total" ] || fail "$done_before of $total stored: the kill did not land mid-run"

# The rerun resumes: the stored jobs are not run again.
"$MPIEXEC" "$NPFLAG" 3 "$WSTUNED" "${args[@]}" --resume >"$TMP/out2" 2>"$TMP/err2"
rc=$?
[ "$rc" = 0 ] || { cat "$TMP/err2"; fail "the --resume rerun exited $rc"; }
python3 - "$TMP/out2" "$DB" "$total" "$done_before" <<'PY' || fail "resume report or database"
import json, sqlite3, sys
text, db, total, before = open(sys.argv[1]).read(), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
doc = json.loads(text[text.index("{"):])
status = [j["status"] for j in doc["jobs"]]
assert status.count("stored") == before, f"{status.count('stored')} jobs skipped as stored, {before} were stored"
assert status.count("ok") == total - before, f"statuses {status}"
c = sqlite3.connect(db)
rows = [json.loads(d) for (d,) in c.execute("SELECT detail FROM split_runs")]
keys = {r["run_key"] for r in rows}
assert len(keys) == 1, f"run keys {keys}"
index = sorted(r["index"] for r in rows)
assert index == list(range(total)), f"job indices stored {index}: each of the {total} jobs exactly once"
assert all(r["status"] == "ok" and r["verified"] for r in rows)
print(f"ok: rerun skipped {before} stored job(s), ran {total - before}; {len(rows)} runs stored, each job once")
PY
