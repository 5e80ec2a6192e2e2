#!/usr/bin/env bash
# wstuned with T1 kernel files under the real MPI launcher (issue 14).
# Usage: daemon_kernel_file_test.sh MPIEXEC NPFLAG WSTUNED WSTUNE SHARE CASE
#   unlike  two unlike workers (PoCL basic, pthread) tune stencil5 into one
#           database: one session and one best per device, tuning parameters
#           in every trial and best row; a rerun skips both devices (tuned),
#           "retune" searches again
#   split   stencil5 (2-D, halo rows) run over 2 and 3 workers, even and
#           proportional, every result gathered and verified; calibrate then the
#           measured model; a kernel file without wstune.Split planned over
#           two workers fails naming the field (exit 1), one worker runs it
#   shared  two workers with one fingerprint (PoCL "pthread pthread") divide
#           one exhaustive search: both measure, one session, the trial rows
#           are exactly the configurations measured (none twice), every
#           configuration of the space once; then, kept in memory
#           (--no-store), a differential evolution's announced generations
#           measured by both workers within the budget
set -uo pipefail
MPIEXEC=$1 NPFLAG=$2 WSTUNED=$3 WSTUNE=$4 SHARE=$5 CASE=$6
source "$(dirname "$0")/daemon_test_lib.sh"
STENCIL=$SHARE/examples/kernels/stencil5.json

daemon() {  # daemon NP ARGS...: wstuned under the launcher, JSON in $TMP/out
  local np=$1
  shift
  "$MPIEXEC" "$NPFLAG" "$np" "$WSTUNED" "$@" --db "$DB" --json --timeout 120 >"$TMP/out" 2>"$TMP/err"
  rc=$?
}
check() {  # check PYTHON: assertions over the report ($TMP/out) and the database
  python3 - "$TMP/out" "$DB" <<PY || fail "assertions ($CASE)"
import json, sqlite3, sys
text = open(sys.argv[1]).read()
doc = json.loads(text[text.index("{"):])
db = sqlite3.connect(sys.argv[2])
q = lambda sql: db.execute(sql).fetchall()
$1
PY
}

case $CASE in
unlike)
  export POCL_DEVICES="basic pthread"
  daemon 3 tune --kernel-file "$STENCIL" --size 16x16 --max-trials 12 -r 2
  [ "$rc" = 0 ] || fail "tune exited $rc"
  check '
fps = {w["device"]["fingerprint"] for w in doc["workers"]}
assert len(fps) == 2, f"two unlike devices expected, got {fps}"
job = doc["jobs"][0]
assert job["status"] == "ok", job
assert {w["fingerprint"] for w in job["workers"]} == fps
sessions = q("SELECT s.id, d.fingerprint FROM sessions s JOIN devices d ON d.id = s.device_id")
assert sorted(f for _, f in sessions) == sorted(fps), sessions
best = q("SELECT params FROM best_configs")
assert len(best) == 2, best
for (params,) in best:
    p = json.loads(params)
    assert set(p) == {"WPTX", "WPTY"}, f"best row without the tuning parameters: {params}"
trials = q("SELECT params, status FROM trials")
assert len(trials) >= 2 * 12, len(trials)
assert all(set(json.loads(p)) == {"WPTX", "WPTY"} for p, _ in trials)
assert any(s == "correct" for _, s in trials)
print(f"ok: {len(sessions)} sessions, {len(trials)} trials, bests {best}")'
  daemon 3 tune --kernel-file "$STENCIL" --size 16x16 --max-trials 12 -r 2
  [ "$rc" = 0 ] || fail "the rerun exited $rc"
  grep -q "is tuned for stencil5 16x16" "$TMP/err" || fail "the rerun did not say the devices are tuned"
  check '
assert doc["jobs"][0]["status"] == "stored", doc["jobs"][0]["status"]
assert q("SELECT count(*) FROM sessions")[0][0] == 2, "a tuned device was searched again"
print("ok: rerun skipped both tuned devices")'
  daemon 3 tune --kernel-file "$STENCIL" --size 16x16 --max-trials 3 -r 1 --retune
  [ "$rc" = 0 ] || fail "the --retune run exited $rc"
  check '
assert doc["jobs"][0]["status"] == "ok"
assert q("SELECT count(*) FROM sessions")[0][0] == 4, "--retune did not search both devices again"
print("ok: --retune searched both again")'
  ;;
split)
  export POCL_DEVICES="basic pthread"
  for np in 3 4; do
    for model in even proportional; do
      daemon $np run --kernel-file "$STENCIL" --size 64x96 --config '{"WPTY": 2}' --split $model -r 1
      [ "$rc" = 0 ] || fail "run over $((np - 1)) workers ($model) exited $rc"
      check "
job = doc['jobs'][0]
assert job['status'] == 'ok' and job['verified'], job
parts = [p for p in job['parts'] if p['share'] > 0]
assert len(parts) == $np - 1 or '$model' != 'even' and len(parts) >= 2, f'{len(parts)} workers got a slice'
blocks = sorted((p['block']['begin'], p['block']['end']) for p in parts)
assert blocks[0][0] == 0 and blocks[-1][1] == 96 and all(a[1] == b[0] for a, b in zip(blocks, blocks[1:])), blocks
print(f'ok: $model over {len(parts)} workers, rows {blocks}, verified')"
    done
  done
  daemon 3 calibrate --kernel-file "$STENCIL" --size 64x48
  [ "$rc" = 0 ] || fail "calibrate exited $rc"
  daemon 3 run --kernel-file "$STENCIL" --size 64x48 --split measured -r 1
  [ "$rc" = 0 ] || fail "the measured split exited $rc"
  check "
job = doc['jobs'][-1]
assert job['status'] == 'ok' and job['verified'] and job['model'] == 'measured', job
assert q('SELECT count(*) FROM split_calibrations')[0][0] == 2
print('ok: calibrated, measured split verified')"
  # A kernel file without wstune.Split is planned as `wstune split` plans
  # it; its blocks of part of the range cannot run, so the job fails naming
  # wstune.Split (as `wstune split --run` does); one worker runs the whole.
  daemon 3 run --kernel-file "$SHARE/examples/kernels/reduction.json" --size 10007 -r 1
  [ "$rc" = 1 ] || fail "a kernel file without wstune.Split over two workers: exit $rc, expected 1"
  check "
job = doc['jobs'][0]
assert job['status'] == 'failed' and 'needs wstune.Split' in job['error'], job
units = job['units']
assert len(units) == 2 and sum(units) == 10007 and min(units) > 0, units
print(f'ok: no wstune.Split: planned {units}, failed naming wstune.Split')"
  daemon 2 run --kernel-file "$SHARE/examples/kernels/reduction.json" --size 10007 --local rule --overlap 1 -r 1
  [ "$rc" = 0 ] || fail "a kernel file without wstune.Split on one worker exited $rc"
  check "
job = doc['jobs'][0]
assert job['status'] == 'ok' and job['verified'] and job['units'] == [10007], job
print('ok: no wstune.Split: one worker runs the whole range, verified')"
  ;;
shared)
  export POCL_DEVICES="pthread pthread" POCL_MAX_PTHREAD_COUNT=1
  daemon 3 tune --kernel-file "$STENCIL" --size 16x16 --strategy exhaustive -r 1
  [ "$rc" = 0 ] || fail "tune exited $rc"
  check '
fps = {w["device"]["fingerprint"] for w in doc["workers"]}
assert len(fps) == 1, fps
res = doc["jobs"][0]["workers"][0]["result"]
by = res["measured_by_rank"]
assert set(by) == {"1", "2"} and all(n > 0 for n in by.values()), f"both workers measure: {by}"
assert res["shared_by"] == [1, 2]
(sessions,) = q("SELECT count(*) FROM sessions")[0]
assert sessions == 1, f"{sessions} sessions for one fingerprint"
rows = q("SELECT config FROM trials")
assert len(rows) == len({c for (c,) in rows})
assert sum(by.values()) == len(rows), f"measured {sum(by.values())} configurations, stored {len(rows)}: one measured twice"
space = res["space_size"]
assert len(rows) == space + 1, f"{len(rows)} rows for {space} configurations and the baseline"
assert q("SELECT count(*) FROM best_configs")[0][0] == 1
print(f"ok: one search, {len(rows)} configurations, measured by rank {by}")'
  # Kept in memory (--no-store), a differential evolution announces its
  # generations: both workers measure them, and every trial measured ahead is
  # one of the budget's evaluations (before 2026-11-24 tune() took them as
  # stored: 30 measured for a budget of 24, 6 of them "from_store").
  daemon 3 tune --kernel-file "$STENCIL" --size 16x16 --strategy differential --max-trials 24 -r 1 --no-store
  [ "$rc" = 0 ] || fail "tune --no-store exited $rc"
  check '
res = doc["jobs"][0]["workers"][0]["result"]
by = res["measured_by_rank"]
assert set(by) == {"1", "2"} and all(n > 0 for n in by.values()), f"both workers measure the generations: {by}"
assert res["evaluations"] == 24, res["evaluations"]
assert sum(by.values()) == 24, f"measured {sum(by.values())} configurations for a budget of 24"
assert not any(t["from_store"] for t in res["trials"]), "a trial measured ahead came back as stored"
assert res["measured_ahead_unused"] == 0, res["measured_ahead_unused"]
print(f"ok: in memory, 24 evaluations measured by rank {by}")'
  ;;
*) fail "unknown case $CASE" ;;
esac
