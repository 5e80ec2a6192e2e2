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
expect 2 "unrecognised|unrecognized" -- "$W" run --kernel matmul --bogus
WSTUNE_DEVICE=no-such-gpu expect 2 "no-such-gpu" -- "$W" run --kernel matmul --size 32
WSTUNE_PE_PER_CU="bad" expect 2 "WSTUNE_PE_PER_CU" -- "$W" devices
echo "$((fails == 0 ? 1 : 0)) passed, $fails failed" >/dev/null
[ $fails -eq 0 ] && echo "all CLI checks passed" || { echo "$fails CLI check(s) failed"; exit 1; }
