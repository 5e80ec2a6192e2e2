#!/usr/bin/env bash
# wstuned's split over several devices (issue 41) under the real MPI
# launcher, on PoCL CPU devices standing in for GPUs.
# Usage: daemon_gpus_test.sh MPIEXEC NPFLAG WSTUNED WSTUNE SHARE CASE
#   timeline  matmul over three devices ("basic pthread pthread"), four jobs
#             each with inputs worker, resident and master, whole blocks and
#             three chunks: every job verified; the --timeline file well
#             formed (tests/timeline_check.py: upload before kernel before
#             download per chunk, answers within the makespan, the critical
#             path the last answer); resident inputs uploaded only in each
#             worker's first job; worker inputs in every job; the critical
#             path in each progress line
#   steady    two identical devices ("pthread pthread"): calibrated, then six
#             measured jobs, all verified: one model for both before any cost
#             is learned (equal shares, the second job keeps the first's plan)
#   t1        the 2-D stencil and the tiled matmul example kernel files split
#             over three devices (even, pe-ratio; whole and chunked; inputs
#             from the master), every result verified, timelines well formed
set -uo pipefail
MPIEXEC=$1 NPFLAG=$2 WSTUNED=$3 WSTUNE=$4 SHARE=$5 CASE=$6
source "$(dirname "$0")/daemon_test_lib.sh"
CHECK="$(dirname "$0")/timeline_check.py"

daemon() {  # daemon NP ARGS...: wstuned under the launcher, JSON in $TMP/out
  local np=$1
  shift
  "$MPIEXEC" "$NPFLAG" "$np" "$WSTUNED" "$@" --db "$DB" --json --timeout 120 >"$TMP/out" 2>"$TMP/err"
  rc=$?
}
jobs_file() {  # jobs_file N JSON-DEFAULTS: $TMP/jobs.json with N copies of one job
  python3 -c "import json,sys; d=json.loads(sys.argv[2]); print(json.dumps({'defaults': d, 'jobs': [{}] * int(sys.argv[1])}))" \
    "$1" "$2" >"$TMP/jobs.json"
}
verified() {  # every job ok and verified
  python3 - "$TMP/out" <<'PY' || fail "a job failed or did not verify"
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text[text.index("{"):])
assert doc["jobs"], "no job"
for j in doc["jobs"]:
    assert j["status"] == "ok" and j["verified"], (j["status"], j["error"])
PY
}

case $CASE in
timeline)
  export POCL_DEVICES="basic pthread pthread"
  for inputs in worker resident master; do
    for overlap in 1 3; do
      jobs_file 4 "{\"kernel\": \"matmul\", \"size\": \"96x96x64\", \"repetitions\": 2, \"warmup\": 1, \"split\": \"even\", \"local\": \"null\", \"inputs\": \"$inputs\", \"overlap\": $overlap}"
      daemon 4 run --job "$TMP/jobs.json" --timeline "$TMP/timeline.json" --no-store
      [ "$rc" = 0 ] || fail "inputs $inputs overlap $overlap exited $rc"
      verified
      expect="chunks=$overlap"
      [ "$inputs" = resident ] && expect="$expect resident"
      [ "$inputs" = worker ] && expect="$expect uploads"
      python3 "$CHECK" "$TMP/timeline.json" "$TMP/out" $expect || fail "timeline (inputs $inputs, overlap $overlap)"
      [ "$(grep -c 'critical path: rank' "$TMP/err")" = 4 ] || fail "a progress line without its critical path"
    done
  done
  # Master inputs, the workers' own, then master inputs again for the same
  # problem: the whole inputs the master sent first were replaced on the
  # workers, so it sends them again (before the fix every worker refused
  # the third job: "does not hold it").
  python3 -c "import json; m={'inputs': 'master'}; print(json.dumps({'defaults': {'kernel': 'matmul', 'size': '96x96x64', 'repetitions': 1, 'split': 'even', 'local': 'null'}, 'jobs': [m, {'inputs': 'worker'}, m]}))" >"$TMP/jobs.json"
  daemon 4 run --job "$TMP/jobs.json" --no-store
  [ "$rc" = 0 ] || fail "master, worker, master inputs exited $rc: $(tail -3 "$TMP/err")"
  verified
  # Without --timeline: no critical path, no file.
  daemon 4 run --kernel matmul --size 64x64x64 -r 1 --no-store
  [ "$rc" = 0 ] || fail "run without --timeline exited $rc"
  ! grep -q 'critical path' "$TMP/err" || fail "critical path without --timeline"
  daemon 4 run --kernel matmul --size 64x64x64 -r 1 --no-store --inputs elsewhere
  [ "$rc" = 2 ] || fail "--inputs elsewhere: exit $rc, expected 2"
  grep -q "inputs 'elsewhere': use worker" "$TMP/err" || fail "--inputs elsewhere: no message naming the choices"
  echo "ok: timelines of worker, resident and master inputs, whole and chunked"
  ;;
steady)
  # One thread per device: the two devices share this machine's cores without
  # crowding each other (timing noise, not a slower device).
  export POCL_DEVICES="pthread pthread" POCL_MAX_PTHREAD_COUNT=1
  daemon 3 calibrate --kernel matmul --size 256x256x128 --calibrate-budget-ms 100
  [ "$rc" = 0 ] || fail "calibrate exited $rc"
  jobs_file 6 '{"kernel": "matmul", "size": "256x256x128", "repetitions": 2, "split": "measured", "local": "null", "inputs": "resident"}'
  daemon 3 run --job "$TMP/jobs.json"
  [ "$rc" = 0 ] || fail "measured run exited $rc"
  verified
  python3 - "$TMP/out" <<'PY' || fail "shares on identical devices"
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text[text.index("{"):])
plans = [[p["block"]["end"] - p["block"]["begin"] for p in j["parts"]] for j in doc["jobs"]]
# Before any cost is learned both run on one model (one calibration per
# fingerprint): equal shares, and the second job keeps the first's plan.
# Later jobs are not asserted here: on this 2-core VM a worker's learned
# cost can jump far beyond the 10 % noise (a share of 193/63 rows was seen),
# which the pooling rule rightly takes as the worker's own
# (Daemon.IdenticalDevicesWithinNoiseShareOneModel tests the rule).
for units in plans[:2]:
    assert len(units) == 2 and abs(units[0] - units[1]) <= 16, f"unequal shares before any cost was learned: {plans}"
assert plans[0] == plans[1], f"the second job moved the first's plan: {plans}"
print("ok: equal shares before costs were learned; plans", plans)
PY
  ;;
t1)
  export POCL_DEVICES="basic pthread pthread"
  for file in stencil5:64x96 matmul_tiled:192x64x32; do
    name=${file%%:*} size=${file#*:}
    for split in even pe-ratio; do
      for overlap in 1 2; do
        for inputs in worker master; do
          daemon 4 run --kernel-file "$SHARE/examples/kernels/$name.json" --size "$size" --split $split \
            --overlap $overlap --inputs $inputs -r 2 --timeline "$TMP/timeline.json" --no-store
          [ "$rc" = 0 ] || fail "$name $split overlap $overlap inputs $inputs exited $rc"
          verified
          python3 - "$TMP/out" <<'PY' || fail "$name: not split over three workers"
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text[text.index("{"):])
parts = [p for p in doc["jobs"][0]["parts"] if p["share"] > 0]
assert len(parts) == 3, f"{len(parts)} workers got a block"
PY
          python3 "$CHECK" "$TMP/timeline.json" "$TMP/out" >/dev/null || fail "$name timeline"
          echo "ok: $name $size $split overlap $overlap inputs $inputs over 3 devices, verified"
        done
      done
    done
  done
  ;;
*)
  echo "unknown case $CASE"
  exit 2
  ;;
esac
