#!/usr/bin/env bash
# Guided vs exhaustive local-work-size search, NULL and the paper's rule as
# ratios to the optimum, tuning time per evaluation.
# Usage: scripts/bench-tune.sh [DEVICE] [TAG] [extra bench_tune options]
#   DEVICE: P:D, cpu, gpu or a name substring (wstune devices lists them).
# Writes docs/results/tune_<TAG>.{csv,md}.
# Examples:
#   scripts/bench-tune.sh cpu pocl                  # small default sizes, a few minutes on PoCL
#   scripts/bench-tune.sh gpu h100 --case matmul=1024 matmul=1000 bilinear=1024 bilinear=1000 \
#       sort=262144 sort=200000 trapezoid=262144 trapezoid=200000
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
device=${1:-default}
tag=${2:-pocl}
shift $(( $# > 2 ? 2 : $# )) || true
build=${WSTUNE_BUILD_DIR:-$here/build}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target bench_tune -j "$(nproc)" >/dev/null
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$build/pocl-cache}
mkdir -p "$here/docs/results"
"$build/bench/bench_tune" --device "$device" --tag "$tag" --out-dir "$here/docs/results" "$@"
