#!/usr/bin/env bash
# On the GPU machine (see ../shared/gpu/README.md): build from the committed
# tree and record `wstune devices` and `wstune run` of each kernel on the GPU
# and on the PoCL CPU into $OUT. Usage: source .gpu/setup.sh && scripts/gpu-foundation.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
# Build the committed tree: scripts/gpu-export.sh puts it in .gpu/src (carried).
SRC=$PWD
[ -d .gpu/src ] && SRC=$PWD/.gpu/src
cd "$SRC"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >"$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
cmake --build build-gpu -j16 >"$OUT/build.log" 2>&1 || { grep -B2 -A8 "error" "$OUT/build.log" | head -60; exit 1; }
W=build-gpu/cli/wstune
{
  echo "\$ wstune devices"; $W devices
  for dev in gpu cpu; do
    for spec in "matmul 1024" "matmul 1000" "matmul 4096" "bilinear 1024" "bilinear 1920x1080:1280x720" \
                "sort 262144" "sort 1000000" "trapezoid 262144" "trapezoid 3000000"; do
      set -- $spec
      [ "$dev" = cpu ] && [ "$2" = 4096 ] && continue
      echo; echo "\$ wstune run --kernel $1 --size $2 --device $dev --repeat 5"
      $W run --kernel "$1" --size "$2" --device "$dev" --repeat 5
    done
  done
} 2>&1 | tee "$OUT/foundation.txt"
$W devices --json >"$OUT/devices.json"
