#!/usr/bin/env bash
# Records an exhaustive table (simulation mode's input, bench/tables/NAME.json.gz)
# with wstuned: WORKERS worker ranks on one device share one exhaustive search
# (the master hands each configuration to an idle worker; each worker builds
# in its own isolated process, so program builds run WORKERS at a time where a
# driver builds one at a time per process). Every trial lands in a database
# that persists in the build directory: a run stopped at SECONDS (its master
# killed) is continued by the next call with the same NAME, which measures no
# stored configuration again (docs/daemon.md, Resume). When the session is
# finished the table is exported and gzipped.
# Workers time their kernels one at a time (WSTUNE_TIMING_LOCK on a lock file
# beside the database; docs/tuning.md), so a trial's samples never include
# another worker's kernel; builds, transfers and verification stay parallel.
# Usage: scripts/record-table-shared.sh NAME WORKERS DEVICE SECONDS KERNEL_FILE SIZE [REPS [WARMUP]]
#   e.g. scripts/record-table-shared.sh matmul_tiled-1024-h100 14 gpu 540 \
#          share/examples/kernels/matmul_tiled.json 1024x1024x1024 5
# Prints the trials stored so far and whether the session finished. Workers
# share the device's timeline: the trials' kernel times are the profiling
# events of their own runs, and docs/results/ compares them with runs of one
# process (the showcase's) where both measured a configuration.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 6 ] || { echo "usage: $0 NAME WORKERS DEVICE SECONDS KERNEL_FILE SIZE [REPS [WARMUP]]" >&2; exit 2; }
name=$1 workers=$2 device=$3 seconds=$4 file=$5 size=$6 reps=${7:-5} warmup=${8:-1}
case "$file" in /*) ;; *) file=$here/$file ;; esac
. "$here/scripts/bench-common.sh"
wstune_build_targets wstuned wstune_cli
. "$here/daemon/mpi-launch.sh"
wstuned_launcher
dir=$build/tables-shared/$name
mkdir -p "$dir"
db=$dir/table.db
cat >"$dir/jobs.json" <<JSON
{"jobs": [{"kernel_file": "$file", "size": "$size", "strategy": "exhaustive",
           "max_trials": 4000000000, "repetitions": $reps, "warmup": $warmup, "retune": false}]}
JSON
stored() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('SELECT count(*) FROM trials').fetchone()[0])" "$db" 2>/dev/null || echo 0; }
finished() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); sys.exit(0 if c.execute('SELECT count(*) FROM sessions WHERE ended_at IS NOT NULL').fetchone()[0] else 1)" "$db" 2>/dev/null; }
if finished; then
  echo "$name: the session finished before ($(stored) trials); exporting"
else
  before=$(stored)
  rm -f "$dir/master.pid"
  t0=$SECONDS
  mapfile -t lock_env < <(wstuned_env WSTUNE_TIMING_LOCK "$dir/timing.lock")
  "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" "${lock_env[@]}" -n "$((workers + 1))" "$build/daemon/wstuned" tune --job "$dir/jobs.json" \
    --device "$device" --db "$db" --json --timeout 600 --pid-file "$dir/master.pid" \
    >"$dir/report-$(date +%s).json" 2>>"$dir/wstuned.err" &
  launcher=$!
  while kill -0 "$launcher" 2>/dev/null && [ $((SECONDS - t0)) -lt "$seconds" ]; do sleep 1; done
  stopped=0
  if kill -0 "$launcher" 2>/dev/null; then
    # The master killed: its session stays unfinished and the next call takes it over.
    stopped=1
    kill -KILL "$(cat "$dir/master.pid")" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$launcher" 2>/dev/null || break; sleep 1; done
    kill -KILL "$launcher" 2>/dev/null || true
  fi
  status=0
  wait "$launcher" 2>/dev/null || status=$?
  if [ "$stopped" = 0 ] && [ "$status" != 0 ]; then
    echo "$name: wstuned failed (status $status); see $dir/wstuned.err" >&2
    tail -5 "$dir/wstuned.err" >&2
    exit 1
  fi
  echo "$name: $((SECONDS - t0)) s, trials stored $before -> $(stored)"
  tail -3 "$dir/wstuned.err"
fi
if finished; then
  "$build/cli/wstune" export --db "$db" "$dir/table.json"
  mkdir -p "$here/bench/tables"
  gzip -9 -c "$dir/table.json" >"$here/bench/tables/$name.json.gz"
  echo "$name: finished; recorded bench/tables/$name.json.gz"
else
  echo "$name: not finished; run the same command again to continue"
fi
