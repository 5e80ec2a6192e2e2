#!/usr/bin/env bash
# Split models against the sweep oracle on two unlike devices.
# Usage: scripts/bench-split.sh [DEVICE1,DEVICE2] [TAG] [extra bench_split options]
#   DEVICE: P:D, cpu, gpu or a name substring (wstune devices lists them).
# Writes docs/results/split_<TAG>.{csv,md} and split_<TAG>_<kernel>{_sweep.csv,.svg}.
# Examples:
#   POCL_DEVICES="basic pthread" scripts/bench-split.sh 0:0,0:1 pocl \
#       --sizes matmul=256,bilinear=1024,sort=65536,trapezoid=65536
#   scripts/bench-split.sh gpu,cpu h100-pocl     # on the GPU machine, paper sizes
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
devices=${1:-0:0,0:1}
tag=${2:-pocl}
shift $(( $# > 2 ? 2 : $# )) || true
. "$here/scripts/bench-common.sh"
wstune_build_targets bench_split
mkdir -p "$here/docs/results"
"$build/bench/bench_split" --devices "$devices" --tag "$tag" --out-dir "$here/docs/results" "$@"
