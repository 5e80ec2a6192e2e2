#!/usr/bin/env bash
# wstuned's workers over TCP across three "hosts" (issue 40): network
# namespaces joined through a bridge (tests/cluster/netns-hosts.sh). The
# master (`mpiexec -n 1 wstuned tune --listen`) runs on host 0; workers are
# plain processes (`wstuned worker --connect`) on hosts 0, 1 and 2, every
# one PoCL pthread with one thread (one fingerprint, one shared search of
# matmul_tiled 32x32x32, 80 configurations, exhaustive).
#   CASE kill: host 2 killed (every process on it SIGKILLed) once 5 trials
#              are stored: the same launch exits 0, each configuration is
#              stored once, the report names the lost worker with host 2.
#   CASE join: workers on hosts 0 and 1; host 2's joins once 5 trials are
#              stored and measures some; exit 0, each configuration once.
#   CASE link: host 2's link down for 5 s once 5 trials are stored, then up:
#              exit 0, each configuration once, no fault (nothing lost).
# Needs root (ip netns, unshare); exits 77 (skipped) without it: CI runs
# it as root.
# Usage: tcp_cluster_test.sh MPIEXEC WSTUNED SHARE CASE
set -uo pipefail
MPIEXEC=$1 WSTUNED=$2 SHARE=$3 CASE=$4
here=$(cd "$(dirname "$0")" && pwd)
hosts=$here/netns-hosts.sh
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
  echo "SKIP: needs root, ip (iproute2) and unshare (util-linux)"
  exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstuned-tcpcluster.XXXXXX")
DB=$TMP/wstune.db
NAME=wst$$$RANDOM
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  "$hosts" down "$NAME"
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$TMP"/*.err; do echo "--- $f ---"; tail -n 30 "$f"; done
  echo "--- stdout ---"; head -c 3000 "$TMP/out" 2>/dev/null
  exit 1
}
rows() {
  [ -f "$DB" ] || { echo 0; return; }
  python3 -c "import sqlite3,sys; print(sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True).execute('SELECT count(*) FROM trials').fetchone()[0])" "$DB" 2>/dev/null || echo 0
}
"$hosts" up "$NAME" 3 || fail "could not make the hosts"
# No program binary cache: the faults land mid-search only while it still builds.
export POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1 WSTUNE_CACHE_DIR=off
addr=$("$hosts" addr 0)
port=7470
nworkers=3
[ "$CASE" = join ] && nworkers=2
"$hosts" exec "$NAME-h0" "$MPIEXEC" -n 1 "$WSTUNED" tune --kernel-file "$SHARE/examples/kernels/matmul_tiled.json" \
  --size 32x32x32 --strategy exhaustive --max-trials 80 -r 2 --db "$DB" --json --timeout 300 \
  --register-timeout 120 --listen "$addr:$port" --wait-workers "$nworkers" >"$TMP/out" 2>"$TMP/master.err" &
master=$!
pids+=("$master")
worker() {  # worker I: a worker on host I
  "$hosts" exec "$NAME-h$1" "$WSTUNED" worker --connect "$addr:$port" --register-timeout 120 \
    >"$TMP/w$1.out" 2>"$TMP/w$1.err" &
  pids+=("$!")
}
for i in $(seq 0 $((nworkers - 1))); do worker "$i"; done
for _ in $(seq 1 3000); do
  [ "$(rows)" -ge 5 ] && break
  kill -0 "$master" 2>/dev/null || fail "the master ended before 5 trials were stored"
  sleep 0.1
done
[ "$(rows)" -ge 5 ] || fail "not 5 trials after 300 s"
at=$(rows)
case $CASE in
  kill) "$hosts" kill "$NAME-h2"; echo "host 2 killed at $at trials stored" ;;
  join) worker 2; echo "host 2's worker joined at $at trials stored" ;;
  link)
    "$hosts" link "$NAME" 2 down || fail "link down"
    sleep 5
    "$hosts" link "$NAME" 2 up || fail "link up"
    echo "host 2's link was down 5 s from $at trials stored to $(rows)"
    ;;
esac
for _ in $(seq 1 "${WAIT_S:-480}"); do kill -0 "$master" 2>/dev/null || break; sleep 1; done
kill -0 "$master" 2>/dev/null && fail "the master still runs after ${WAIT_S:-480} s"
wait "$master"
rc=$?
[ "$rc" = 0 ] || fail "the master exited $rc"
python3 - "$TMP/out" "$DB" "$NAME" "$CASE" <<'PY' || fail "report or database"
import json, sqlite3, sys
text, db, name, case = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
doc = json.loads(text[text.index("{"):])
job = doc["jobs"][0]
assert job["status"] == "ok", (job["status"], job.get("error"))
res = job["workers"][0]["result"]
measured = res["measured_by_rank"]
rows = [r for (r,) in sqlite3.connect(db).execute("SELECT config FROM trials")]
assert len(rows) == len(set(rows)), f"{len(rows)} rows, {len(set(rows))} distinct: a configuration measured twice"
assert sum(measured.values()) == len(rows), f"measured {measured} != {len(rows)} rows"
by_host = {w["host"]: w for w in doc["workers"]}
assert set(by_host) == {f"{name}-h{i}" for i in range(3)}, sorted(by_host)
h2 = by_host[f"{name}-h2"]
if case == "kill":
    lost = [f for f in job["faults"] if "lost: " in f]
    assert len(lost) == 1 and f"{name}-h2" in lost[0] and f"rank {h2['rank']} " in lost[0], job["faults"]
    assert h2["problem"].startswith("lost: "), h2
else:
    assert job["faults"] == [], job["faults"]
    assert measured.get(str(h2["rank"]), 0) > 0, f"host 2 measured nothing: {measured}"
print(f"ok: {len(rows)} configurations stored once each, by rank {measured}; faults {job['faults']}")
PY
