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
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstuned-signal.XXXXXX")
DB=$TMP/wstune.db
PIDFILE=$TMP/master.pid
launcher=
procs=()
cleanup() {
  # Only what this test started: the launcher and the processes below it.
  for p in "${procs[@]}" $launcher; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- stderr ---"; cat "$TMP/err" 2>/dev/null; echo "--- stdout ---"; cat "$TMP/out" 2>/dev/null; exit 1; }

# Rows of split_runs: the sqlite3 CLI when there is one, else `wstune db check`.
runs() {
  [ -f "$DB" ] || { echo 0; return; }
  local n
  if command -v sqlite3 >/dev/null 2>&1; then
    n=$(sqlite3 -readonly "$DB" "SELECT count(*) FROM split_runs" 2>/dev/null)
  else
    n=$("$WSTUNE" db check --db "$DB" 2>/dev/null | sed -n 's/.* \([0-9][0-9]*\) split runs.*/\1/p')
  fi
  echo "${n:-0}"
}
# Every process below $1 (the launcher's proxies and the ranks).
descendants() {
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done
}
alive() {  # a process that exists and is not a zombie
  local st
  st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
  [ -n "$st" ] && [[ "$st" != Z* ]]
}

total=9
python3 - "$TMP/jobs.json" "$total" <<'PY'
import json, sys
long = {"kernel": "matmul", "size": "512", "repetitions": 30}
jobs = [{"kernel": "matmul", "size": "64"}] + [long] * (int(sys.argv[2]) - 1)
json.dump({"defaults": {"repetitions": 2, "split": "even", "local": "null"}, "jobs": jobs}, open(sys.argv[1], "w"))
PY

"$MPIEXEC" "$NPFLAG" 3 "$WSTUNED" run --job "$TMP/jobs.json" --db "$DB" --json --timeout 120 \
  --pid-file "$PIDFILE" >"$TMP/out" 2>"$TMP/err" &
launcher=$!

for _ in $(seq 1 1200); do  # up to 120 s for the first job's row
  [ "$(runs)" -ge 1 ] && break
  kill -0 "$launcher" 2>/dev/null || fail "wstuned ended before the first row appeared"
  sleep 0.1
done
[ "$(runs)" -ge 1 ] || fail "no row after 120 s"
[ -s "$PIDFILE" ] || fail "no --pid-file $PIDFILE"
master=$(cat "$PIDFILE")
mapfile -t procs < <(descendants "$launcher")
echo "first row stored; launcher $launcher, master $master, processes: ${procs[*]}"
case "$TARGET" in
  launcher) kill -"$SIG" "$launcher" ;;
  master) kill -"$SIG" "$master" ;;
  *) fail "TARGET must be launcher or master" ;;
esac
sent=$SECONDS

for _ in $(seq 1 600); do  # everything gone within 60 s
  kill -0 "$launcher" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$launcher" 2>/dev/null && fail "the launcher still runs 60 s after SIG$SIG"
wait "$launcher"; rc=$?
launcher=
for p in "${procs[@]}"; do
  for _ in $(seq 1 50); do alive "$p" || break; sleep 0.1; done
  alive "$p" && fail "process $p of the run still alive after the launcher exited"
done
echo "exit status $rc, $((SECONDS - sent)) s after SIG$SIG"
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
