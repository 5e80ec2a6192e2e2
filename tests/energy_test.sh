#!/usr/bin/env bash
# Objectives beyond time on a machine without energy sensors (PoCL, no
# powercap): a tune says "energy: not measured" and still answers; an energy
# objective falls back to the time, saying why; a tuning file's
# wstune.Metrics decide (GFLOP/s:max) and keep a Pareto front; the trial JSON
# carries "energy": null and the metrics; the store keeps the session's
# objectives and T4 names them; a bad objective is a usage error (exit 2);
# an energy split without measured power is refused naming the device.
# Usage: energy_test.sh PATH/TO/wstune SOURCE_DIR WORK_DIR
set -u
W=$1
SRC=$2
WORK=$3
EX=$SRC/share/examples/kernels
rm -rf "$WORK" && mkdir -p "$WORK"
DB=$WORK/e.db
fails=0
. "$(dirname "$0")/expect.sh"
export POCL_DEVICES="basic pthread"
T=(--device 0:1 --db "$DB" --repeat 2 --min-time 0 --median-error 0 --trial-timeout 120 --size 64x64x64 --max-evals 6)
M=(--kernel-file "$EX/matmul_tiled.json")
expect 0 "energy: not measured \(no objective needs energy: --energy auto" -- "$W" tune "${M[@]}" "${T[@]}"
expect 0 "energy: not measured \(no RAPL" -- "$W" tune "${M[@]}" "${T[@]}" --energy on
expect 0 "objective energy:min: best - \(energy:min needs energy, not measured .*the time decides\)" -- \
  "$W" tune "${M[@]}" "${T[@]}" --objective energy
expect 0 "objective GFLOP/s:max: best [0-9]" -- "$W" tune "${M[@]}" "${T[@]}" --objective GFLOP/s:max --no-resume
expect 0 "Pareto front over 2 \([1-9][0-9]* configurations\)" -- \
  "$W" tune "${M[@]}" "${T[@]}" --objectives time,GFLOP/s:max --no-resume
expect 0 "no trial has every objective's value" -- "$W" tune "${M[@]}" "${T[@]}" --objectives time,energy --no-store
"$W" tune "${M[@]}" "${T[@]}" --objectives time,GFLOP/s:max --energy on --no-store --json >"$WORK/tune.json" 2>/dev/null
python3 - "$WORK/tune.json" <<'PY' && echo "ok: tune --json" || { echo "FAIL: tune --json"; fails=$((fails+1)); }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["objectives"] == ["time:min", "GFLOP/s:max"], j["objectives"]
assert j["energy_sensor"] == "" and "RAPL" in j["energy_note"], j["energy_note"]
assert j["best"]["energy"] is None
assert j["best"]["metrics"]["GFLOP/s"] > 0 and "GFLOP/J" not in j["best"]["metrics"]
assert len(j["front"]) >= 1 and all("metrics" in t for t in j["front"])
PY
expect 0 "trials of .* sessions \(T4\)" -- "$W" export --format t4 "$WORK/t4.json" --db "$DB"
python3 - "$WORK/t4.json" <<'PY' && echo "ok: T4 objectives" || { echo "FAIL: T4 objectives"; fails=$((fails+1)); }
import json, sys
r = json.load(open(sys.argv[1]))["results"]
names = {tuple(x["objectives"]) for x in r}
assert ("time", "GFLOP/s") in names and ("time",) in names, names
assert all(m["unit"] for x in r for m in x["measurements"])
PY
expect 2 "no metric 'speed'; use one of: time, energy, power, edp, GFLOP/J, GFLOP/s" -- \
  "$W" tune "${M[@]}" "${T[@]}" --objective speed
expect 2 "give one" -- "$W" tune "${M[@]}" "${T[@]}" --objective time --objectives time,energy
expect 2 "--energy maybe" -- "$W" tune "${M[@]}" "${T[@]}" --energy maybe
expect 2 "only the measured model" -- "$W" split --kernel matmul --size 64 --devices 0:0,0:1 --objective energy
expect 2 "has none: calibrate it where its energy sensor is readable" -- \
  "$W" split --kernel matmul --size 64 --devices 0:0,0:1 --model measured --objective energy --no-store
expect 0 "energy per job: - \(not measured" -- \
  "$W" split --kernel matmul --size 64 --devices 0:0,0:1 --model measured --no-store --run --refine 0
# A fake powercap tree (WSTUNE_POWERCAP_ROOT; its counter never moves: 0 W)
# gives the CPU devices a RAPL observer: the trials' and the split run's
# energy are then measured (issue 38: the observation code shared by the
# CLI's evaluator and wstuned's workers).
PC=$WORK/powercap/intel-rapl:0
mkdir -p "$PC" && echo package-0 >"$PC/name" && echo 5000000 >"$PC/energy_uj" && echo 262143328850 >"$PC/max_energy_range_uj"
WSTUNE_POWERCAP_ROOT=$WORK/powercap "$W" tune "${M[@]}" "${T[@]}" --energy on --no-store --json >"$WORK/tune-rapl.json" 2>/dev/null
python3 - "$WORK/tune-rapl.json" <<'PY' && echo "ok: tune with a fake RAPL" || { echo "FAIL: tune with a fake RAPL"; fails=$((fails+1)); }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["energy_sensor"] == "rapl" and j["energy_note"] == "", (j["energy_sensor"], j["energy_note"])
assert j["best"]["energy"]["sensor"] == "rapl" and j["best"]["energy"]["runs"] >= 1, j["best"]["energy"]
PY
WSTUNE_POWERCAP_ROOT=$WORK/powercap expect 0 "energy per job: [0-9.]+ J over every device" -- \
  "$W" split --kernel matmul --size 64 --devices 0:0,0:1 --model measured --no-store --run --refine 0
[ $fails -eq 0 ] && echo "all energy checks passed" || { echo "$fails energy check(s) failed"; exit 1; }
