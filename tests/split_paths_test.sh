#!/usr/bin/env bash
# One split, two paths (issue 35): `wstune split --json` and `mpiexec -n 3
# wstuned run --json` over PoCL's basic and pthread devices (ranks 1 and 2
# get them in that order, as --devices 0:0,0:1) must plan the same blocks:
# both call the library's model_blocks(). Cases: matmul 64 with each fixed
# model (pe-ratio gave the CLI 26/38 rows and wstuned 16/48 before), an
# odd-length sort (its last partial step), and a T1 file without
# wstune.Split (examples' reduction.json), which wstuned plans as `wstune
# split` does (it refused it before) and whose job then fails naming
# wstune.Split, as `wstune split --run` fails; the report's fractions are
# the blocks' shares; on one worker that file runs whole, unchunked. Usage: split_paths_test.sh MPIEXEC NPFLAG WSTUNED WSTUNE SHARE
set -uo pipefail
MPIEXEC=$1 NPFLAG=$2 WSTUNED=$3 WSTUNE=$4 SHARE=$5
source "$(dirname "$0")/daemon_test_lib.sh"
export POCL_DEVICES="basic pthread"
REDUCTION=$SHARE/examples/kernels/reduction.json

# KERNEL-ARGS|SIZE|MODEL|DAEMON-STATUS
cases=(
  "--kernel matmul|64|pe-ratio|ok"
  "--kernel matmul|64|proportional|ok"
  "--kernel matmul|64|even|ok"
  "--kernel sort|4097|pe-ratio|ok"
  "--kernel-file $REDUCTION|10007|pe-ratio|failed"
)
n=0
for c in "${cases[@]}"; do
  IFS='|' read -r kernel size model status <<<"$c"
  read -ra kargs <<<"$kernel"
  name="$(basename "${kargs[1]}" .json) $size $model"
  "$WSTUNE" split "${kargs[@]}" --size "$size" --devices 0:0,0:1 --model "$model" --local null --json \
    >"$TMP/cli.json" 2>"$TMP/err" || fail "$name: wstune split exited $?"
  "$MPIEXEC" "$NPFLAG" 3 "$WSTUNED" run "${kargs[@]}" --size "$size" --split "$model" --local null -r 1 \
    --no-store --json --timeout 120 >"$TMP/out" 2>"$TMP/err"
  rc=$?
  python3 - "$TMP/cli.json" "$TMP/out" "$name" "$status" "$rc" <<'PY' || fail "$name: the two paths differ"
import json, sys
cli = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
name, status, rc = sys.argv[3], sys.argv[4], int(sys.argv[5])
assert job["status"] == status, f"wstuned: {job['status']} (expected {status}): {job['error']}"
assert (rc == 0) == (status == "ok"), f"wstuned exited {rc} for a job {status}"
cli_units = [s["end"] - s["begin"] for s in cli["shares"]]
total = sum(cli_units)
assert job["units"] == cli_units, f"wstune split {cli_units}, wstuned {job['units']}"
assert job["dim"] == {"x": 0, "y": 1}[cli["dim"]], f"dimension: wstune split {cli['dim']}, wstuned {job['dim']}"
assert job["fractions"] == [u / total for u in cli_units], f"fractions {job['fractions']} are not the blocks' shares"
if status == "ok":
    ran = [p["block"]["end"] - p["block"]["begin"] for p in sorted(job["parts"], key=lambda p: p["rank"])]
    assert ran == [u for u in cli_units if u], f"ran {ran}, planned {cli_units}"
    assert job["verified"], job["verify"]
else:
    assert "wstune.Split" in job["error"], job["error"]
print(f"ok: {name}: both {cli_units} along {cli['dim']}, wstuned {status}")
PY
  n=$((n + 1))
done
# One worker runs a file without wstune.Split whole (local rule: its __local
# argument is sized from the local size), even under the default
# overlap (2 chunks): a kernel that cannot run part of its range is not chunked.
"$MPIEXEC" "$NPFLAG" 2 "$WSTUNED" run --kernel-file "$REDUCTION" --size 10007 --local rule -r 1 --no-store --json \
  --timeout 120 >"$TMP/out" 2>"$TMP/err" || fail "reduction on one worker: wstuned exited $? ($(tail -3 "$TMP/err"))"
python3 - "$TMP/out" <<'PY' || fail "reduction on one worker did not run whole and verify"
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
assert job["status"] == "ok" and job["verified"], job
assert [p.get("chunks", 1) for p in job["parts"]] == [1], job["parts"]
PY
echo "ok: $n splits planned alike by wstune split and wstuned run; a file without wstune.Split runs whole on one worker"
