#!/usr/bin/env bash
# Issue 41: wstuned over 1, 2 and 4 GPUs (as many as the machine has), with
# and without the CPU, and the shared exhaustive campaign over one GPU worker
# against all of them. Works with one, two or four GPUs.
# Usage: scripts/bench-daemon-gpus-x4.sh [OUTDIR] (default docs/results/daemon_gpus_x4)
# Environment:
#   GPUS      device selectors of the GPUs, comma-separated (default: 1:0 ...
#             1:N-1, N from nvidia-smi -L); on PoCL e.g. 0:0,0:1,0:2,0:3
#   CPU       the CPU's selector for the "+cpu" sets (default 0:0; "" = none)
#   PARTS     "sets campaign" (default both): sets = scripts/bench-daemon-gpus.sh
#             over the sets below, campaign = scripts/bench-daemon-shared.sh
#             (the tiled matmul's exhaustive search, 2064x2064x1024, one GPU
#             worker against one per GPU)
#   SETS      override the sets (NAME=SEL,...;...); default gpu, 2gpu, 4gpu
#             (as far as there are GPUs), 2gpu+cpu, 4gpu+cpu
#   CASES     default "matmul 4096;matmul 8192;file:stencil5 8192x8192;
#             file:matmul_tiled 4096x4096x4096"
#   REPS      timed runs per job (5); REPORTED jobs per case after the
#             warm-ups (3); INPUTS (default "resident master"), MODELS
#             (default "pe-ratio measured"), OVERLAP (2), LOCAL (null):
#             passed to bench-daemon-gpus.sh; TIMELINE is on
#   CAMPAIGN_ARGS  extra options of bench-daemon-shared.sh (e.g. --size,
#             --strategy random --max-trials 400 for a shorter campaign)
# Writes OUTDIR/daemon_gpus.{md,csv}, OUTDIR/raw/ (reports, timelines) and
# OUTDIR/campaign/daemon_shared.{md,csv}.
# GPU machine: source .gpu/setup.sh && GPU_SRC=. bash scripts/gpu-all.sh build daemon-gpus-x4
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/docs/results/daemon_gpus_x4}
mkdir -p "$out"
if [ -z "${GPUS:-}" ]; then
  n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [ "${n:-0}" -ge 1 ] || { echo "no GPU found (nvidia-smi -L); give GPUS=SEL,SEL,..." >&2; exit 2; }
  GPUS=$(seq -s, -f '1:%g' 0 $((n - 1)))
fi
cpu=${CPU-0:0}
IFS=, read -ra g <<<"$GPUS"
first() { local IFS=,; echo "${g[*]:0:$1}"; }
if [ -z "${SETS:-}" ]; then
  SETS="gpu=${g[0]}"
  [ ${#g[@]} -ge 2 ] && SETS="$SETS;2gpu=$(first 2)"
  [ ${#g[@]} -ge 4 ] && SETS="$SETS;4gpu=$(first 4)"
  if [ -n "$cpu" ]; then
    [ ${#g[@]} -ge 2 ] && SETS="$SETS;2gpu+cpu=$(first 2),$cpu"
    [ ${#g[@]} -ge 4 ] && SETS="$SETS;4gpu+cpu=$(first 4),$cpu"
    [ ${#g[@]} = 1 ] && SETS="$SETS;gpu+cpu=${g[0]},$cpu"
  fi
fi
cases=${CASES:-"matmul 4096;matmul 8192;file:stencil5 8192x8192;file:matmul_tiled 4096x4096x4096"}
parts=${PARTS:-"sets campaign"}
echo "GPUs $GPUS, CPU ${cpu:-none}; sets $SETS" >&2
for part in $parts; do
  case $part in
    sets)
      INPUTS=${INPUTS:-"resident master"} MODELS=${MODELS:-"pe-ratio measured"} OVERLAP=${OVERLAP:-2} \
        LOCAL=${LOCAL:-null} TIMELINE=1 REPORTED=${REPORTED:-3} CPU_SELECTOR=$cpu \
        "$here/scripts/bench-daemon-gpus.sh" "$out" "$SETS" "$cases" "${REPS:-5}" ;;
    campaign)
      # shellcheck disable=SC2086
      "$here/scripts/bench-daemon-shared.sh" "$out/campaign" --gpus "$GPUS" ${CAMPAIGN_ARGS:-} ;;
    *) echo "unknown part $part: use sets or campaign" >&2; exit 2 ;;
  esac
done
