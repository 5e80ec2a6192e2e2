#!/usr/bin/env bash
# Runs wstune's benchmarks on the GPU machine (../shared/gpu/README.md) from
# the committed tree that scripts/gpu-export.sh put in .gpu/src, and packs
# docs/results plus logs into $OUT/results.tgz.
# Usage (device call, carry .gpu):
#   source .gpu/setup.sh && bash .gpu/src/scripts/gpu-all.sh STEP...
#   source .gpu/setup.sh && GPU_SRC=. bash scripts/gpu-all.sh STEP...
# GPU_SRC=. builds the device's copy of the working tree itself into
# ./build-gpu (git-ignored, so it stays between calls while the machine is
# warm): several calls of a few steps each share one build.
# Logs go to $OUT/logs.tgz and $OUT/steps.log, results to $OUT/results.tgz.
# Steps: build ctest tune (= tune-gpu tune-cpu) split split3-KERNEL daemon
# daemon-shared peers paper store (in the order given). daemon-shared
# (nvidia-h200-x2): scripts/bench-daemon-shared.sh on GPUs SHARED_GPUS
# (1:0,1:1) with SHARED_ARGS, into docs/results/daemon_shared_h200x2/. STEP_TIMEOUT (540 s) bounds each
# benchmark. Device selectors there: gpu = NVIDIA H100 (1:0), cpu = 16-core
# PoCL (0:0); on nvidia-h200-x2 the GPUs are 1:0 and 1:1, the CPU 0:0.
# split3-KERNEL (KERNEL: matmul, bilinear, sort, trapezoid): the measured
# model on both GPUs and the CPU against the grid oracle at issue #18's sizes
# (docs/results/split_h200x2-cpu.md); SPLIT3_DEVICES overrides 1:0,1:1,0:0.
set -uo pipefail
ROOT=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LOGS=/tmp/gpu-logs; mkdir -p "$LOGS"
SRC=${GPU_SRC:-$ROOT/.gpu/src}
SRC=$(cd "$SRC" && pwd)
cd "$SRC"
[ -e .gpu ] || ln -s "$ROOT/.gpu" .gpu          # wheels for bench-peers.sh
export WSTUNE_BUILD_DIR=$SRC/build-gpu
export POCL_CACHE_DIR=$SRC/build-gpu/pocl-cache
export XDG_DATA_HOME=$SRC/build-gpu/xdg-data
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/steps.log"; }
step_timeout=${STEP_TIMEOUT:-540}
logged() {  # LOG LINES COMMAND...: COMMAND (bounded by STEP_TIMEOUT) into $LOGS/LOG.log, then its last LINES
  local log=$1 lines=$2; shift 2
  timeout "$step_timeout" "$@" >"$LOGS/$log.log" 2>&1
  tail -"$lines" "$LOGS/$log.log"
}
for step in "$@"; do
  log "start $step"
  case $step in
    build)
      cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >"$LOGS/cmake.log" 2>&1 &&
      cmake --build build-gpu -j16 >"$LOGS/build.log" 2>&1 || { grep -B2 -A8 error "$LOGS/build.log" | head -80; exit 1; } ;;
    ctest)
      (cd build-gpu && timeout "$step_timeout" ctest -j8 --timeout 300 >"$LOGS/ctest.log" 2>&1); tail -15 "$LOGS/ctest.log" ;;
    tune|tune-gpu|tune-cpu)
      # the two sizes per kernel, one not a power of two; the CPU's matmul smaller
      sizes="bilinear=1024 bilinear=1920x1080:1280x720 sort=262144 sort=1000000 trapezoid=262144 trapezoid=3000000"
      [ "$step" = tune-cpu ] || logged tune 25 scripts/bench-tune.sh gpu h100 --case matmul=1024 matmul=1000 $sizes
      [ "$step" = tune-gpu ] || logged tune-cpu 25 scripts/bench-tune.sh cpu h100-host-pocl --case matmul=256 matmul=250 $sizes ;;
    split)
      logged split 30 scripts/bench-split.sh gpu,cpu h100-pocl ;;
    split3-*)
      kernel=${step#split3-}
      case $kernel in
        matmul) size=4096 ;; bilinear) size=2048x2048:4096x4096 ;; sort) size=4194304 ;; trapezoid) size=16777216 ;;
        *) log "unknown kernel in $step"; continue ;;
      esac
      logged "$step" 30 scripts/bench-split.sh "${SPLIT3_DEVICES:-1:0,1:1,0:0}" "h200x2-cpu-$kernel" \
        --kernels "$kernel" --sizes "$kernel=$size" ;;
    daemon)
      logged daemon 30 env WSTUNE_DAEMON_CASES="${DAEMON_CASES:-}" WSTUNE_DAEMON_MODELS="${DAEMON_MODELS:-}" \
        scripts/bench-daemon.sh --tag h100-pocl --dev1 gpu --dev2 cpu ;;
    daemon-shared)
      # issue 14: matmul_tiled's 1,248 configurations on one GPU, then on both sharing one search
      logged daemon-shared 30 scripts/bench-daemon-shared.sh docs/results/daemon_shared_h200x2 \
        --gpus "${SHARED_GPUS:-1:0,1:1}" ${SHARED_ARGS:-} ;;
    peers)
      logged peers 30 scripts/bench-peers.sh --device 1:0 --preset gpu --tag h100 --build build-gpu --clblast 1024,4096 ;;
    paper)
      logged paper 30 scripts/bench-paper.sh gpu,cpu h100-pocl ${PAPER_ARGS:-} ;;
    store)
      logged store 10 scripts/bench-store.sh h100-host ;;
    *) log "unknown step $step" ;;
  esac
  log "end $step"
  # Packed after every step: a call cut off at its limit still returns the
  # steps that finished.
  tar czf "$OUT/results.tgz" docs/results 2>/dev/null
  tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null
done
