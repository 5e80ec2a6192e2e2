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
. "$here/scripts/bench-common.sh"
wstune_build_targets bench_tune
mkdir -p "$here/docs/results"
"$build/bench/bench_tune" --device "$device" --tag "$tag" --out-dir "$here/docs/results" "$@"
