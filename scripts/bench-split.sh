#!/usr/bin/env bash
# Split models against the oracle on two or more unlike devices (two: a sweep
# of the first device's share; three or more: a grid over the shares).
# Usage: scripts/bench-split.sh [DEVICE1,DEVICE2[,...]] [TAG] [extra bench_split options]
#   DEVICE: P:D, cpu, gpu or a name substring (wstune devices lists them).
# Writes docs/results/split_<TAG>.{csv,md} and split_<TAG>_<kernel>{_sweep.csv,.svg}
# (two devices) or split_<TAG>_<kernel>_grid.csv (three or more).
# Examples:
#   POCL_DEVICES="basic pthread" scripts/bench-split.sh 0:0,0:1 pocl \
#       --sizes matmul=256,bilinear=1024,sort=65536,trapezoid=65536
#   POCL_DEVICES="basic pthread pthread" POCL_MAX_PTHREAD_COUNT=2 scripts/bench-split.sh 0:0,0:1,0:2 pocl-3dev \
#       --sizes matmul=256,bilinear=1024,sort=65536,trapezoid=65536
#   scripts/bench-split.sh gpu,cpu h100-pocl     # on the GPU machine, paper sizes
#   scripts/bench-split.sh 1:0,1:1,0:0 h200x2-cpu --kernels matmul --sizes matmul=4096   # docs/results/split_h200x2-cpu.md
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
devices=${1:-0:0,0:1}
tag=${2:-pocl}
shift $(( $# > 2 ? 2 : $# )) || true
. "$here/scripts/bench-common.sh"
wstune_build_targets bench_split
mkdir -p "$here/docs/results"
"$build/bench/bench_split" --devices "$devices" --tag "$tag" --out-dir "$here/docs/results" "$@"
