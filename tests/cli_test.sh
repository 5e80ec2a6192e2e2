#!/usr/bin/env bash
# End-to-end checks of the wstune CLI: exit codes (0 ok, 1 runtime, 2 usage),
# one clear line for bad input, JSON output. Usage: cli_test.sh PATH/TO/wstune
set -u
W=$1
fails=0
. "$(dirname "$0")/expect.sh"
expect 0 "devices" -- "$W" --help
expect 0 "^wstune [0-9]+\.[0-9]+\.[0-9]+" -- "$W" --version
expect 0 "^wstune [0-9]" -- "$W" run --version
expect 2 "usage" -- "$W"
expect 2 "unknown command 'frobnicate'" -- "$W" frobnicate
expect 0 "--kernel" -- "$W" run --help
expect 0 "PE/CU" -- "$W" devices
expect 0 '"pe_source"' -- "$W" devices --json
"$W" devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d and all(x["compute_units"]>0 and x["pe_per_cu"]>0 and x["total_pe"]==x["compute_units"]*x["pe_per_cu"] for x in d)' \
  && echo "ok: devices --json is valid JSON with CU x PE" || { echo "FAIL: devices --json"; fails=$((fails+1)); }
# --bandwidth: every kind measured per device, the JSON readable by split --run --bandwidth
bw=$(mktemp)
"$W" devices --bandwidth --bytes 1048576 --repetitions 2 --device 0:0 --json >"$bw"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==1 and d[0]["error"]=="" and all(len(d[0][k]["wall_ms"]["samples_ms"])==2 and d[0][k]["wall_gbps"]>0 for k in ("pageable_h2d","pageable_d2h","pinned_h2d","pinned_d2h"))' "$bw" \
  && echo "ok: devices --bandwidth --json" || { echo "FAIL: devices --bandwidth --json"; fails=$((fails+1)); }
expect 0 "pinned h2d" -- "$W" devices --bandwidth --bytes 1048576 --repetitions 1 --device 0:0
expect 2 "positive size" -- "$W" devices --bandwidth --bytes 0 --device 0:0
expect 0 "h2d % pinned" -- "$W" split --kernel sort --size 4096 --devices 0:0,0:0 --run --repeat 1 --bandwidth "$bw"
expect 2 "cannot read" -- "$W" split --kernel sort --size 4096 --devices 0:0,0:0 --run --bandwidth /no/such/file.json
rm -f "$bw"
expect 0 "status: correct" -- "$W" run --kernel matmul --size 64 --local 8,8 --repeat 2
expect 0 "verified" -- "$W" run --kernel sort --size 1000 --repeat 2
expect 0 '"status": "correct"' -- "$W" run --kernel trapezoid --size 1000 --json --repeat 1
expect 0 "status: correct" -- "$W" run --kernel bilinear --size 64x48:32x24 --local null --repeat 1
expect 2 "unknown kernel 'fft'.*matmul" -- "$W" run --kernel fft
expect 2 "matmul size '12q' is malformed" -- "$W" run --kernel matmul --size 12q
expect 2 "does not divide" -- "$W" run --kernel sort --size 1000 --local 7
expect 0 "global 70x70, local 7x7" -- "$W" run --kernel matmul --size 64 --local 7,7 --repeat 1
expect 2 "not a valid local size" -- "$W" run --kernel matmul --size 64 --local 0
expect 2 "matches no OpenCL device" -- "$W" run --kernel matmul --size 64 --device no-such-gpu
expect 2 "repeat" -- "$W" run --kernel matmul --size 64 --repeat 0
expect 2 "negative values are not allowed" -- "$W" run --kernel matmul --size 64 --repeat -1
expect 2 "negative values are not allowed" -- "$W" tune --kernel matmul --size 64 --max-evals=-3 --no-store
expect 2 "trial-timeout" -- "$W" tune --kernel matmul --size 64 --trial-timeout nan --no-store
expect 2 "trapezoid size" -- "$W" run --kernel trapezoid --size 8589934592:2147483648
expect 2 "kernel" -- "$W" run --size 64
# The command is named once: "wstune run: ...", not "wstune run: run: ...".
expect 2 "^wstune run: unrecogni[sz]ed option '--bogus'; see 'wstune run --help'" -- "$W" run --kernel matmul --bogus
# wstune simulate: a T4 table replayed without a device; bad tables exit 2 naming the JSON path.
sim=$(mktemp -d)
python3 - "$sim" <<'PY'
import json, sys
d = sys.argv[1]
results = [{"configuration": {"A": a, "B": b}, "times": {"runtimes": [1.0 + abs(a - 3) + abs(b - 2)]},
            "invalidity": "correct", "correctness": 1} for a in range(6) for b in range(5)]
json.dump({"schema_version": "1.0.0", "results": results}, open(f"{d}/t4.json", "w"))
results[4]["times"]["runtimes"] = ["x"]
json.dump({"schema_version": "1.0.0", "results": results}, open(f"{d}/bad.json", "w"))
PY
expect 0 "best/optimum 1.000" -- "$W" simulate "$sim/t4.json" --strategy exhaustive
# The space's configurations as tune counts them: every result but the baseline (the first).
n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$sim/t4.json")
expect 0 "t4.json: $((n - 1)) configurations, strategy exhaustive, $n evaluations" -- "$W" simulate "$sim/t4.json" --strategy exhaustive
expect 0 "\"space_size\": $((n - 1))," -- "$W" simulate "$sim/t4.json" --strategy exhaustive --json
expect 0 '"best_over_optimum"' -- "$W" simulate "$sim/t4.json" --json --max-evals 5 --strategy bayes
expect 2 "bad.json: results\[4\].times.runtimes\[0\] is not a number" -- "$W" simulate "$sim/bad.json"
expect 2 "cannot read" -- "$W" simulate "$sim/missing.json"
expect 2 "unknown strategy 'hill'.*bayes" -- "$W" simulate "$sim/t4.json" --strategy hill
rm -rf "$sim"
# --sweep STEP with two devices as with three: a step that does not divide 100 is refused before anything runs.
expect 2 "^wstune split: --sweep 7: give a step in \(0, 50\] percent that divides 100" -- "$W" split --kernel matmul --size 256 --devices 0:0,0:0 --sweep 7
expect 2 "^wstune split: --sweep 60: give a step in \(0, 50\]" -- "$W" split --kernel matmul --size 256 --devices 0:0,0:0 --sweep 60
WSTUNE_DEVICE=no-such-gpu expect 2 "no-such-gpu" -- "$W" run --kernel matmul --size 32
WSTUNE_PE_PER_CU="bad" expect 2 "WSTUNE_PE_PER_CU" -- "$W" devices
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed" >/dev/null
[ $fails -eq 0 ] && echo "all CLI checks passed" || { echo "$fails CLI check(s) failed"; exit 1; }
