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
# daemon-paper daemon-shared tune-pool peers conformance energy paper store warm-start transfers examples prime tunecost showcase tables (in the
# order given). energy: scripts/bench-energy-gpu.sh (issue 38; ENERGY_TAG, ENERGY_ARGS such as
# "--gpus 1:0,1:1" on a two-GPU kind). conformance: scripts/bench-conformance-gpu.sh (issue 36; CONFORMANCE_KERNELS splits the five
# examples over calls when STEP_TIMEOUT is short). transfers: pinned bandwidth and the split's transfers
# (issue 18; TRANSFERS_OUT and bench-transfers.sh's SETS, TAGS, OVERLAP, PASSES); examples: the T1 example kernels tuned on the GPU (issue 13);
# prime: trapezoid at a prime size against 10^6 (issue 13); tunecost: the
# tuner's time per trial beyond the kernel runs on large buffers (issue 15);
# showcase: the tiled matmul against CLBlast within budgets (issue 15,
# SHOWCASE_RUNS overrides the N:FRACTION[:SECONDS] list); tables: exhaustive
# tables of the examples for simulation mode (TABLE_SECONDS > 0 adds the
# tiled matmul's at 1024, bounded to that many seconds).
# daemon-paper: the paper's comparison through wstuned (scripts/bench-daemon-paper.sh).
# warm-start: scripts/bench-warm-start.sh gpu h100 (issue 39; SCALE, STRATEGY, REF_EVALS, RUN_EVALS, SEEDS): warm vs cold
# searches, then the best-kernel app's first and second start (programs compiled, wall time), also with --tune-online.
# tune-pool: issue 37's build pool, scripts/bench-tune-pool.sh on the tiled matmul at 1024
# (--build-jobs 0 against 15 builders over POOL_EVALS (300) configurations; POOL_FULL=1 adds the
# whole space, POOL_BUDGET (420) s a call, resumed by the next call from build-gpu/pool-state or
# POOL_RESUME (a pool-state.tgz from $OUT)); docs/results/build_pool_h100.md.
# isolation: wstuned with and without its isolated OpenCL process at matmul
# 4096 on the GPU (scripts/bench-daemon-isolation.sh).
# table-shared: the tiled matmul's exhaustive table at 1024 (bench/tables/
# matmul_tiled-1024-h100.json.gz) over TABLE_WORKERS (14) wstuned workers on
# the GPU, SHARED_TABLE_SECONDS (480) per call, continued by the next call.
# table-4096: the same at 4096 (bench/tables/matmul_tiled-4096-h100.json.gz), 2 timed runs per
# configuration under WSTUNE_TIMING_LOCK; continues the database carried at TABLE_RESUME.
# daemon-gpus-x4 (issue 41; any kind with 1, 2 or 4 GPUs): scripts/bench-daemon-gpus-x4.sh into
# docs/results/daemon_gpus_x4/ (PARTS "sets campaign", SETS, CASES, GPUS, CAMPAIGN_ARGS there;
# STEP_TIMEOUT bounds it: run PARTS=sets and PARTS=campaign in separate calls).
# daemon-gpus (nvidia-h200-x2): scripts/bench-daemon-gpus.sh, wstuned over one GPU, both, both +
# the CPU (DAEMON_GPUS_SETS), issue 18's four cases, into docs/results/daemon_gpus_h200x2/.
# table-recheck: that table's 10 fastest and 10 random others re-measured alone
# (docs/results/showcase_h100_raw/table-recheck-4096.txt).
# daemon-shared (nvidia-h200-x2): scripts/bench-daemon-shared.sh on GPUs
# SHARED_GPUS (1:0,1:1) with SHARED_ARGS, into
# docs/results/daemon_shared_h200x2/. STEP_TIMEOUT (540 s) bounds each
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
      cmake --build build-gpu -j16 --target ${BUILD_TARGETS:-all} >"$LOGS/build.log" 2>&1 || { grep -B2 -A8 error "$LOGS/build.log" | head -80; exit 1; } ;;
    ctest)
      (cd build-gpu && timeout "$step_timeout" ctest -j8 --timeout 300 >"$LOGS/ctest.log" 2>&1); tail -15 "$LOGS/ctest.log" ;;
    tune|tune-gpu|tune-cpu)
      # the issue's two sizes per kernel, one not a power of two; the CPU's matmul smaller
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
    transfers)  # issue 18: split transfers against the measured pinned bandwidth (2×H200 + CPU)
      logged transfers 40 scripts/bench-transfers.sh "${TRANSFERS_OUT:-docs/results/transfers_h200x2}" ;;
    daemon)
      logged daemon 30 env WSTUNE_DAEMON_CASES="${DAEMON_CASES:-}" WSTUNE_DAEMON_MODELS="${DAEMON_MODELS:-}" \
        scripts/bench-daemon.sh --tag h100-pocl --dev1 gpu --dev2 cpu --budget-s "${DAEMON_BUDGET_S:-480}" ;;
    daemon-paper)  # the paper's comparison through wstuned (baseline / paper / wstune), GPU + CPU workers
      logged daemon-paper 30 scripts/bench-daemon-paper.sh --tag h100-pocl --dev1 gpu --dev2 cpu ;;
    isolation)  # the isolated OpenCL process's cost at matmul 4096, one GPU worker, side by side
      logged isolation 20 scripts/bench-daemon-isolation.sh docs/results/daemon_isolation_h100/side_by_side.txt \
        gpu matmul 4096 10 3 ;;
    daemon-shared)
      # issue 14: matmul_tiled's 1,248 configurations on one GPU, then on both sharing one search
      logged daemon-shared 30 scripts/bench-daemon-shared.sh docs/results/daemon_shared_h200x2 \
        --gpus "${SHARED_GPUS:-1:0,1:1}" ${SHARED_ARGS:-} ;;
    tune-pool)
      pool=(--build build-gpu --device gpu --tag h100 --evals "${POOL_EVALS:-300}" --state build-gpu/pool-state)
      [ "${POOL_FULL:-0}" = 1 ] && pool+=(--full --budget-s "${POOL_BUDGET:-420}")
      [ -n "${POOL_RESUME:-}" ] && pool+=(--resume "$ROOT/$POOL_RESUME")
      logged tune-pool 40 scripts/bench-tune-pool.sh "${pool[@]}" ;;
    peers)
      logged peers 30 scripts/bench-peers.sh --device 1:0 --preset gpu --tag h100 --build build-gpu --clblast 1024,4096 ;;
    energy)  # issue 38: tune by time and energy (NVML), the front, the energy-aware split, the observer's overhead
      logged energy 80 scripts/bench-energy-gpu.sh --build build-gpu --tag "${ENERGY_TAG:-h100}" ${ENERGY_ARGS:-} ;;
    conformance)  # issue 36: Kernel Tuner's five OpenCL examples, wstune vs Kernel Tuner's T1 reader
      logged conformance 30 scripts/bench-conformance-gpu.sh --build build-gpu --tag h100 \
        --kernels "${CONFORMANCE_KERNELS:-vector_add,reduction,stencil,matmul,convolution}" ;;
    paper)
      logged paper 30 scripts/bench-paper.sh gpu,cpu h100-pocl ${PAPER_ARGS:-} ;;
    store)
      logged store 10 scripts/bench-store.sh h100-host ;;
    warm-start)  # issue 39: warm vs cold start at untuned sizes; the best-kernel app's two starts
      logged warm-start 40 scripts/bench-warm-start.sh gpu h100 ;;
    examples)
      EX=share/examples/kernels
      logged examples 20 scripts/bench-examples.sh gpu h100 "$EX/matmul_tiled.json@1024x1024x1024@300" \
        "$EX/stencil5.json@4096x4096@150" "$EX/reduction.json@16777216@150" "$EX/stencil7_3d.json@256x256x256@150" \
        "kernels/matmul.json@2048x2048x2048@100" "kernels/bilinear.json@IW=2048,IH=2048,OW=4096,OH=4096@100" ;;
    prime)
      for n in 1000000 1000003; do
        timeout "$step_timeout" build-gpu/cli/wstune tune --kernel trapezoid --size "$n" --device gpu --no-store \
          --json >"docs/results/prime_h100_trapezoid_$n.json" 2>>"$LOGS/prime.log"
      done
      python3 - docs/results/prime_h100_trapezoid_{1000000,1000003}.json <<'PY' | tee docs/results/prime_h100.md
import json, sys
print("# Trapezoid at a prime size on the H100 (issue 13)\n")
print("Command: `wstune tune --kernel trapezoid --size N --device gpu --no-store --json` for N = 10^6 and 1,000,003.\n")
print("| intervals | best local | best ms | NULL ms | global |\n|---|---|---|---|---|")
for f in sys.argv[1:]:
    d = json.load(open(f)); b = d["best"]; l = b["local"]
    loc = "null" if l is None else "x".join(str(l[k]) for k in "xyz"[: l["dims"]])
    null = d["baseline"]["median_ms"] if d["baseline"].get("status") == "correct" else None
    print(f"| {d['size']} | {loc} | {b['median_ms']:.4f} | {null if null is None else round(null, 4)} | {d.get('global')} |")
PY
      ;;
    tunecost)
      for c in "matmul 4096" "bilinear 2048x2048:4096x4096" "sort 4194304" "trapezoid 16777216"; do
        set -- $c
        echo "== $1 $2" | tee -a docs/results/tunecost_h100.txt
        timeout "$step_timeout" build-gpu/cli/wstune tune --kernel "$1" --size "$2" --device gpu --no-store \
          --max-evals 40 2>&1 | grep -E "per trial beyond|best" | tee -a docs/results/tunecost_h100.txt
      done ;;
    showcase)
      logged showcase 20 scripts/bench-showcase.sh gpu h100 ${SHOWCASE_RUNS:-1024:0.01 1024:0.05 4096:0.01 4096:0.05:240} ;;
    tables)
      EX=share/examples/kernels
      logged tables 20 bash -c "scripts/bench-strategies.sh record reduction-16m-h100 --kernel-file $EX/reduction.json --size 16777216 --device gpu &&
        scripts/bench-strategies.sh record stencil5-4096-h100 --kernel-file $EX/stencil5.json --size 4096x4096 --device gpu &&
        scripts/bench-strategies.sh record stencil7-3d-256-h100 --kernel-file $EX/stencil7_3d.json --size 256x256x256 --device gpu &&
        scripts/bench-strategies.sh record bilinear-4096-h100 --kernel bilinear --size 2048x2048:4096x4096 --device gpu"
      if [ "${TABLE_SECONDS:-0}" -gt 0 ]; then
        EXHAUSTIVE_TABLE=matmul_tiled-1024-h100 logged table-matmul 20 \
          scripts/bench-showcase.sh gpu h100-exhaustive "1024:1:$TABLE_SECONDS"
      fi ;;
    table-shared)
      # issue 15: the tiled matmul's exhaustive table at 1024, TABLE_WORKERS ranks building at once;
      # a call cut at SHARED_TABLE_SECONDS is continued by the next (the build directory persists while warm)
      (step_timeout=$(( ${SHARED_TABLE_SECONDS:-480} + 90 ))
       logged table-shared 12 scripts/record-table-shared.sh matmul_tiled-1024-h100 "${TABLE_WORKERS:-14}" gpu \
         "${SHARED_TABLE_SECONDS:-480}" share/examples/kernels/matmul_tiled.json 1024x1024x1024 5)
      gzip -c build-gpu/tables-shared/matmul_tiled-1024-h100/table.db >"$OUT/table-shared.db.gz" 2>/dev/null || true ;;
    table-4096)
      # issue 15: the tiled matmul's exhaustive table at 4096 (timed one worker at a time, 2 runs per
      # configuration: a warm-up that counts when steady, and a sample). The database of an earlier
      # call, gzipped at TABLE_RESUME (default .gpu/state/table-4096.db.gz) when carried, is continued.
      (name=matmul_tiled-4096-h100 dir=build-gpu/tables-shared/matmul_tiled-4096-h100
       resume=${TABLE_RESUME:-.gpu/state/table-4096.db.gz}
       mkdir -p "$dir"
       [ -f "$resume" ] && [ ! -f "$dir/table.db" ] && gunzip -c "$resume" >"$dir/table.db"
       step_timeout=$(( ${SHARED_TABLE_SECONDS:-480} + 120 ))
       logged table-4096 12 scripts/record-table-shared.sh "$name" "${TABLE_WORKERS:-14}" gpu \
         "${SHARED_TABLE_SECONDS:-480}" share/examples/kernels/matmul_tiled.json 4096x4096x4096 2
       # a master killed at the time limit may leave pages in the WAL: fold them in first
       python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" \
         "$dir/table.db" 2>/dev/null
       gzip -c "$dir/table.db" >"$OUT/table-4096.db.gz" 2>/dev/null || true) ;;
    daemon-gpus-x4)  # issue 41: wstuned over 1/2/4 GPUs (as many as there are) +- the CPU, and the campaign
      logged daemon-gpus-x4 60 scripts/bench-daemon-gpus-x4.sh \
        "${DAEMON_GPUS_OUT:-docs/results/daemon_gpus_x4}" ;;
    daemon-gpus)  # issue 18: wstuned over one GPU, both GPUs, both GPUs + the CPU (nvidia-h200-x2)
      logged daemon-gpus 40 scripts/bench-daemon-gpus.sh "${DAEMON_GPUS_OUT:-docs/results/daemon_gpus_h200x2}" \
        "${DAEMON_GPUS_SETS:-gpu=1:0;2gpu=1:0,1:1;2gpu+cpu=1:0,1:1,0:0}" ;;
    table-recheck)
      # issue 15: the 4096 table's 10 fastest and 10 random others re-measured alone (15 runs each)
      logged table-recheck 6 scripts/recheck-table.sh bench/tables/matmul_tiled-4096-h100.json.gz \
        share/examples/kernels/matmul_tiled.json 4096x4096x4096 gpu docs/results/showcase_h100_raw/table-recheck-4096.txt ;;
    *) log "unknown step $step" ;;
  esac
  log "end $step"
  # Packed after every step: a call cut off at its limit still returns the
  # steps that finished.
  tar czf "$OUT/results.tgz" docs/results bench/tables 2>/dev/null
  tar czf "$OUT/logs.tgz" -C "$LOGS" . 2>/dev/null
done
