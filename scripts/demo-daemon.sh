#!/usr/bin/env bash
# The daemon part of the demo: wstuned with 3 ranks (master + two unlike PoCL
# workers: PoCL's `basic` device with 1 compute unit and its `pthread` device
# with all cores) over all four kernels of share/examples/jobs.json, stored
# into the default embedded SQLite database ($WSTUNE_DB, else
# $XDG_DATA_HOME/wstune/wstune.db, else ~/.local/share/wstune/wstune.db):
#   1. tune: every worker searches local sizes; the master stores every trial;
#   2. run: each job split over both workers (stored local sizes), verified;
# then `wstune query` shows what was stored, and where.
# Usage: scripts/demo-daemon.sh [JOBS.json]   (WSTUNE_BUILD_DIR picks the build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${WSTUNE_BUILD_DIR:-$here/build}
case "$build" in /*) ;; *) build=$here/$build ;; esac
jobs=${1:-$here/share/examples/jobs.json}
if [ ! -x "$build/daemon/wstuned" ] || [ ! -x "$build/cli/wstune" ]; then
  [ -f "$build/CMakeCache.txt" ] || cmake -S "$here" -B "$build" >/dev/null
  cmake --build "$build" --target wstuned wstune_cli -j "$(nproc)" >/dev/null
fi
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$build/pocl-cache}
. "$here/daemon/mpi-launch.sh"
wstuned_launcher
W=$build/daemon/wstuned
mapfile -t basic < <(wstuned_env POCL_DEVICES basic)
mapfile -t pthread < <(wstuned_env POCL_DEVICES pthread)
# MPMD: rank 0 the master, rank 1 on PoCL basic, rank 2 on PoCL pthread.
launch() {
  "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n 1 "$W" "$@" : -n 1 "${basic[@]}" "$W" "$@" : -n 1 "${pthread[@]}" "$W" "$@"
}
echo "== wstuned tune ($MPI_FLAVOR $(basename "$MPI_LAUNCHER"), 3 ranks)"
launch tune --job "$jobs"
echo "== wstuned run ($MPI_FLAVOR $(basename "$MPI_LAUNCHER"), 3 ranks)"
launch run --job "$jobs"
db=$("$build/cli/wstune" db path 2>/dev/null || true)
echo "== wstune query"
"$build/cli/wstune" query
echo "database: ${db:-the default path (wstune db path)}"
