#!/usr/bin/env bash
# SIGINT / SIGTERM at wstuned's master under the real MPI launcher (issue 6:
# "shuts the workers down and keeps everything recorded so far").
# Usage: daemon_signal_test.sh MPIEXEC NPFLAG WSTUNED WSTUNE SIGNAL TARGET
#   SIGNAL  INT or TERM
#   TARGET  launcher: to mpiexec, as Ctrl-C in a terminal does (MPICH's hydra
#           forwards it to every rank); master: to rank 0 alone (its pid from
#           --pid-file), the workers get no signal
# A quick first job, then long ones; the signal goes out once the first job's
# row is in the database (no sleeps to guess timing). Then: every process of
# the run exits within 60 s, the status is 130, the JSON report says
# interrupted, and the database holds exactly the rows of the jobs that
# finished ok (at least the first, not all).
set -uo pipefail
MPIEXEC=$1 NPFLAG=$2 WSTUNED=$3 WSTUNE=$4 SIG=$5 TARGET=$6
source "$(dirname "$0")/daemon_test_lib.sh"

total=9
write_jobs "$total" 30
start_and_wait run --job "$TMP/jobs.json" --db "$DB" --json --timeout 120 --pid-file "$PIDFILE"
echo "first row stored; launcher $launcher, master $master, processes: ${procs[*]}"
case "$TARGET" in
  launcher) kill -"$SIG" "$launcher" ;;
  master) kill -"$SIG" "$master" ;;
  *) fail "TARGET must be launcher or master" ;;
esac
wait_gone "SIG$SIG"
echo "exit status $rc, $sent_to_end s after SIG$SIG"
[ "$rc" = 130 ] || fail "exit status $rc, expected 130 (stopped by a signal)"
grep -q "stop requested" "$TMP/err" || fail "the master did not report the stop"
[ -e "$PIDFILE" ] && fail "the --pid-file was not removed"

rows=$(runs)
python3 - "$TMP/out" "$rows" "$total" <<'PY' || fail "report or database check"
import json, sys
text, rows, total = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3])
doc = json.loads(text[text.index("{"):])  # hydra may print its own lines first
ok = [j for j in doc["jobs"] if j["status"] == "ok"]
assert doc["interrupted"] is True, "report not marked interrupted"
assert 1 <= len(ok) < total, f"{len(ok)} of {total} jobs ok: the signal did not stop the run"
assert all(j["verified"] for j in ok), "a finished job was not verified"
assert [j["status"] for j in doc["jobs"]].count("interrupted") <= 1, "more than one job interrupted"
assert rows == len(ok), f"database holds {rows} runs, the report {len(ok)} finished jobs"
print(f"ok: {len(ok)} of {total} jobs finished before the signal, all {rows} stored; interrupted run reported")
PY
