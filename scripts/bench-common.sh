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
