# Shared by the wstuned launcher tests (daemon_signal_test.sh,
# daemon_kill_test.sh); source it after setting MPIEXEC NPFLAG WSTUNED WSTUNE.
# Provides a scratch directory $TMP (removed at exit with every process this
# test started: $launcher and ${procs[@]}), $DB and $PIDFILE in it, and:
#   fail MESSAGE           print the message and wstuned's stderr, exit 1
#   rows TABLE             rows of TABLE in $DB (0 before it exists)
#   runs                   rows of split_runs
#   descendants PID        every process below PID
#   alive PID              the process exists and is not a zombie
#   write_jobs N REPS      $TMP/jobs.json: a quick matmul 64, then N-1 matmul 512 of REPS repetitions
#   start_and_wait ARGS... mpiexec -n 3 wstuned ARGS (stdout $TMP/out, stderr
#                          $TMP/err) in the background, until the first job's
#                          row is stored (until `$ROWS` prints at least
#                          $MIN_ROWS when set); sets launcher, master (from
#                          $PIDFILE) and procs (every process of the run)
#   wait_gone WHAT         the launcher ends within 60 s (else fail "... after
#                          WHAT") and every process of the run within 5 s
#                          more; sets rc (its status) and sent_to_end (s)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstuned-launcher.XXXXXX")
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
# Rows of a table in $DB (0 before it exists): the sqlite3 CLI when there is
# one, else Python's sqlite3.
rows() {
  [ -f "$DB" ] || { echo 0; return; }
  local n
  if command -v sqlite3 >/dev/null 2>&1; then
    n=$(sqlite3 -readonly "$DB" "SELECT count(*) FROM $1" 2>/dev/null)
  else
    n=$(python3 -c "import sqlite3; print(sqlite3.connect('file:$DB?mode=ro', uri=True).execute('SELECT count(*) FROM $1').fetchone()[0])" 2>/dev/null)
  fi
  echo "${n:-0}"
}
runs() { rows split_runs; }
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
write_jobs() {
  python3 - "$TMP/jobs.json" "$1" "$2" <<'PY'
import json, sys
long = {"kernel": "matmul", "size": "512", "repetitions": int(sys.argv[3])}
jobs = [{"kernel": "matmul", "size": "64"}] + [long] * (int(sys.argv[2]) - 1)
json.dump({"defaults": {"repetitions": 2, "split": "even", "local": "null"}, "jobs": jobs}, open(sys.argv[1], "w"))
PY
}
start_and_wait() {
  "$MPIEXEC" "$NPFLAG" 3 "$WSTUNED" "$@" >"$TMP/out" 2>"$TMP/err" &
  launcher=$!
  local rows=${ROWS:-runs} min=${MIN_ROWS:-1}
  for _ in $(seq 1 1200); do  # up to 120 s for the first job's row
    [ "$($rows)" -ge "$min" ] && break
    kill -0 "$launcher" 2>/dev/null || fail "wstuned ended before the first row appeared"
    sleep 0.02
  done
  [ "$($rows)" -ge "$min" ] || fail "no row after 120 s"
  [ -s "$PIDFILE" ] || fail "no --pid-file $PIDFILE"
  master=$(cat "$PIDFILE")
  mapfile -t procs < <(descendants "$launcher")
}
wait_gone() {
  local start=$SECONDS p
  for _ in $(seq 1 600); do  # everything gone within 60 s
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$launcher" 2>/dev/null && fail "the launcher still runs 60 s after $1"
  wait "$launcher"; rc=$?
  launcher=
  sent_to_end=$((SECONDS - start))
  for p in "${procs[@]}"; do
    for _ in $(seq 1 50); do alive "$p" || break; sleep 0.1; done
    alive "$p" && fail "process $p ($(ps -o args= -p "$p")) of the run still alive after the launcher exited"
  done
}
