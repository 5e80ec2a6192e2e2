#!/usr/bin/env bash
# wstuned's master with --listen and workers that connect over TCP
# (`wstuned worker --connect`, plain processes) on one host (issue 40). A
# shared exhaustive tune of matmul_tiled 32x32x32 (80 configurations), PoCL
# pthread with one thread (one fingerprint, one shared search):
#   CASE kill:  two workers; one SIGKILLed once 5 trials are stored: the
#               master exits 0, the report names the lost worker (rank and
#               host), every configuration is stored exactly once.
#   CASE join:  one worker; a second connects once 5 trials are stored and
#               measures some of the rest; exit 0, each configuration once.
#   CASE drain: two workers; one gets SIGTERM once 5 trials are stored: it
#               answers its trial, says bye and exits 0; the master exits 0,
#               each configuration once, the report says it was drained.
# No timings are asserted; timeouts are generous for a loaded machine.
# Usage: tcp_workers_test.sh MPIEXEC WSTUNED SHARE CASE
set -uo pipefail
MPIEXEC=$1 WSTUNED=$2 SHARE=$3 CASE=$4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstuned-tcp.XXXXXX")
DB=$TMP/wstune.db
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$TMP"/*.err; do echo "--- $f ---"; tail -n 40 "$f"; done
  echo "--- stdout ---"; head -c 3000 "$TMP/out" 2>/dev/null
  exit 1
}
rows() {
  [ -f "$DB" ] || { echo 0; return; }
  python3 -c "import sqlite3,sys; print(sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True).execute('SELECT count(*) FROM trials').fetchone()[0])" "$DB" 2>/dev/null || echo 0
}
# No program binary cache: the faults below land mid-search only while the
# search still builds its programs (a warm cache finishes 80 trials in a second).
export POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1 WSTUNE_CACHE_DIR=off
nworkers=2
[ "$CASE" = join ] && nworkers=1
"$MPIEXEC" -n 1 "$WSTUNED" tune --kernel-file "$SHARE/examples/kernels/matmul_tiled.json" --size 32x32x32 \
  --strategy exhaustive --max-trials 80 -r 2 --db "$DB" --json --timeout 300 --register-timeout 120 \
  --listen 127.0.0.1:0 --wait-workers "$nworkers" >"$TMP/out" 2>"$TMP/master.err" &
master=$!
pids+=("$master")
port=
for _ in $(seq 1 600); do
  port=$(sed -n 's/^wstuned: listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/master.err")
  [ -n "$port" ] && break
  kill -0 "$master" 2>/dev/null || fail "the master ended before it listened"
  sleep 0.1
done
[ -n "$port" ] || fail "the master did not say where it listens"
start_worker() {  # start_worker N: worker N in the background, its pid in w<N>
  "$WSTUNED" worker --connect "127.0.0.1:$port" >"$TMP/w$1.out" 2>"$TMP/w$1.err" &
  eval "w$1=$!"
  pids+=("$!")
}
for i in $(seq 1 "$nworkers"); do start_worker "$i"; done
for _ in $(seq 1 3000); do  # up to 300 s for 5 trials
  [ "$(rows)" -ge 5 ] && break
  kill -0 "$master" 2>/dev/null || fail "the master ended before 5 trials were stored"
  sleep 0.1
done
[ "$(rows)" -ge 5 ] || fail "not 5 trials stored after 300 s"
at=$(rows)
case $CASE in
  kill) kill -KILL "$w2"; echo "worker 2 SIGKILLed at $at trials stored" ;;
  join) start_worker 2; echo "worker 2 joined at $at trials stored" ;;
  drain)
    kill -TERM "$w2"
    for _ in $(seq 1 600); do kill -0 "$w2" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$w2" 2>/dev/null && fail "worker 2 still runs 60 s after SIGTERM"
    wait "$w2"
    rc=$?
    [ "$rc" = 0 ] || fail "the drained worker exited $rc"
    grep -q "leaving: drained" "$TMP/w2.err" || fail "the drained worker did not say it leaves"
    echo "worker 2 drained at $at trials stored, exit 0"
    ;;
esac
for _ in $(seq 1 "${WAIT_S:-480}"); do kill -0 "$master" 2>/dev/null || break; sleep 1; done
kill -0 "$master" 2>/dev/null && fail "the master still runs after ${WAIT_S:-480} s"
wait "$master"
rc=$?
[ "$rc" = 0 ] || fail "the master exited $rc"
python3 - "$TMP/out" "$DB" "$CASE" "$(hostname)" <<'PY' || fail "report or database"
import json, sqlite3, sys
text, db, case, host = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
doc = json.loads(text[text.index("{"):])
job = doc["jobs"][0]
assert job["status"] == "ok", (job["status"], job.get("error"))
res = job["workers"][0]["result"]
measured = res["measured_by_rank"]
rows = [r for (r,) in sqlite3.connect(db).execute("SELECT config FROM trials")]
assert len(rows) == len(set(rows)), f"{len(rows)} rows, {len(set(rows))} distinct: a configuration measured twice"
assert sum(measured.values()) == len(rows), f"measured {measured} != {len(rows)} rows"
assert len(rows) == res["space_size"] + 1 or len(rows) >= 80, f"{len(rows)} rows of {res['space_size'] + 1}"
assert len(res["shared_by"]) == 2, res["shared_by"]
peers = [w for w in doc["workers"] if w.get("peer", "").startswith("tcp 127.0.0.1:")]
assert len(peers) == 2, doc["workers"]
if case == "kill":
    lost = [f for f in job["faults"] if "lost: " in f]
    assert len(lost) == 1 and host in lost[0] and "rank " in lost[0], job["faults"]
    gone = [w for w in doc["workers"] if w["problem"].startswith("lost: ")]
    assert len(gone) == 1 and gone[0]["host"] == host, doc["workers"]
elif case == "drain":
    assert any("drained" in f for f in job["faults"]), job["faults"]
else:
    assert job["faults"] == [], job["faults"]
    assert len(measured) == 2 and all(n > 0 for n in measured.values()), f"the joiner measured nothing: {measured}"
print(f"ok: {len(rows)} configurations stored once each, measured by rank {measured}; faults {job['faults']}")
PY
