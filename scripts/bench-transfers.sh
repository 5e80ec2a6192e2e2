#!/usr/bin/env bash
# The split's transfers against each device's measured pinned bandwidth
# (issue 18): `wstune devices --bandwidth` on every device of the sets, then
# bench_transfers (split models pe-ratio and measured; per device h2d/d2h
# GB/s against the measured pinned bandwidth, gather+finish ms) for each
# device set.
# Usage: scripts/bench-transfers.sh OUTDIR [extra bench_transfers options]
#   SETS    device sets separated by ';' and their tags by TAGS (default: the
#           2×H200 machine, GPUs 1:0 and 1:1, PoCL CPU 0:0:
#           "1:0;1:0,1:1;1:0,1:1,0:0" tagged "one-gpu;two-gpus;two-gpus-cpu")
#   SIZES   kernel=size,... (default: matmul=4096, bilinear 2048²→4096²,
#           sort=4194304, trapezoid=16777216)
#   MODELS  split models (default pe-ratio,measured)
#   BYTES   bytes per bandwidth transfer (default 268435456)
#   OVERLAP chunks per block to compare, interleaved (default 1,2,4,8;
#           MultiDeviceRunner::set_overlap, `wstune split --overlap`)
#   PASSES  passes over the OVERLAP values (default 3)
# Writes OUTDIR/devices_bandwidth.{txt,json} and, per set,
# OUTDIR/transfers_<tag>.{md,csv} and transfers_<tag>_bandwidth.json.
# Examples:
#   GPU machine (device call, carry .gpu):
#     source .gpu/setup.sh && GPU_SRC=. bash scripts/gpu-all.sh build transfers
#   Local smoke test on PoCL:
#     POCL_DEVICES="basic pthread" SETS="0:1;0:0,0:1" TAGS="pocl-one;pocl-two" BYTES=8388608 \
#       SIZES=matmul=256,bilinear=512,sort=65536,trapezoid=65536 scripts/bench-transfers.sh /tmp/xfer
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/bench-transfers.sh OUTDIR [bench_transfers options]}
shift
sets=${SETS:-"1:0;1:0,1:1;1:0,1:1,0:0"}
tags=${TAGS:-"one-gpu;two-gpus;two-gpus-cpu"}
sizes=${SIZES:-matmul=4096,bilinear=2048x2048:4096x4096,sort=4194304,trapezoid=16777216}
models=${MODELS:-pe-ratio,measured}
bytes=${BYTES:-268435456}
overlap=${OVERLAP:-1,2,4,8}
passes=${PASSES:-3}
. "$here/scripts/bench-common.sh"
wstune_build_targets wstune_cli bench_transfers
mkdir -p "$out"
out=$(cd "$out" && pwd)
IFS=';' read -r -a set_list <<<"$sets"
IFS=';' read -r -a tag_list <<<"$tags"
[ "${#set_list[@]}" -eq "${#tag_list[@]}" ] || { echo "SETS and TAGS differ in length" >&2; exit 2; }
every=$(printf '%s\n' "${set_list[@]}" | tr ',' '\n' | sort -u | paste -sd, -)
"$build/cli/wstune" devices --bandwidth --bytes "$bytes" --device "$every" | tee "$out/devices_bandwidth.txt"
"$build/cli/wstune" devices --bandwidth --bytes "$bytes" --device "$every" --json >"$out/devices_bandwidth.json"
for i in "${!set_list[@]}"; do
  "$build/bench/bench_transfers" --devices "${set_list[$i]}" --tag "${tag_list[$i]}" --out-dir "$out" \
    --sizes "$sizes" --models "$models" --bandwidth-bytes "$bytes" --overlap "$overlap" --passes "$passes" "$@"
done
ls "$out"
