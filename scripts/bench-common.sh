# Sourced by scripts/bench-*.sh. wstune_build_targets TARGET...: configures
# ${WSTUNE_BUILD_DIR:-build} as a Release build if it is not configured yet,
# builds the targets, sets $build (absolute) and a per-build PoCL kernel
# cache. Needs $here (the project root).
wstune_build_targets() {
  build=${WSTUNE_BUILD_DIR:-$here/build}
  case "$build" in /*) ;; *) build=$here/$build ;; esac
  [ -f "$build/CMakeCache.txt" ] || cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target "$@" -j "$(nproc)" >/dev/null
  export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$build/pocl-cache}
}

# Warm-up jobs the wstuned benchmarks run of a job with the measured split
# model before the one they report: the first runs the calibration's plan,
# the second runs it again and teaches each worker's costs (wstuned learns
# only from a block the worker ran in the job before), the third runs the
# plan those costs give (a moved block's first run pays new buffers and
# PoCL's compile per NDRange). Read by the benchmarks' Python.
export WSTUNED_MEASURED_WARMUPS=3

# wstuned_bench_setup NAME: for the wstuned benchmarks. Builds wstuned, finds
# the MPI launcher (daemon/mpi-launch.sh: MPI_LAUNCHER, MPI_FLAGS,
# MPI_FLAVOR), and sets W (the wstuned binary), out (docs/results), raw (a
# fresh docs/results/NAME_raw) and db (a fresh scratch database in the build,
# not a result). Needs $here.
wstuned_bench_setup() {
  wstune_build_targets wstuned
  . "$here/daemon/mpi-launch.sh"
  wstuned_launcher
  W=$build/daemon/wstuned
  out=$here/docs/results
  raw=$out/${1}_raw
  rm -rf "$raw"
  mkdir -p "$raw"
  db=$build/bench-$1.db
  rm -f "$db" "$db-wal" "$db-shm"
}
