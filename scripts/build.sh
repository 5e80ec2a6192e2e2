#!/usr/bin/env bash
# Configures and builds wstune into ${WSTUNE_BUILD_DIR:-build} (GCC).
# WSTUNE_SANITIZE=1 (or WSTUNE_FUZZ=1) builds with Debian's clang-14, ASan +
# UBSan and the libFuzzer targets of fuzz/ (WSTUNE_FUZZ), into build-asan by
# default. `scripts/build.sh --targets T...` builds only those targets.
# Idempotent: a build directory configured with another compiler is
# reconfigured from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
if [ "${1:-}" = --targets ]; then shift; targets=("$@"); fi
default_dir=build
extra=()
cxx=$(command -v g++)
if [ "${WSTUNE_SANITIZE:-0}" = 1 ] || [ "${WSTUNE_FUZZ:-0}" = 1 ]; then
  default_dir=build-asan
  cxx=$(command -v clang++-14)
  # -O1 with line tables only: ASan's reports keep file and line, and the
  # build takes about half the time of -O2 -g on CI's 2 cores.
  extra=(-DWSTUNE_FUZZ=ON -DWSTUNE_BUILD_BENCH=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG")
fi
# ccache when installed (WSTUNE_CCACHE=0: without): paths under the clone
# are hashed relative to it (CCACHE_BASEDIR), so another clone of the same
# sources on this machine compiles from the cache (.ci/run from a fresh clone).
if [ "${WSTUNE_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  extra+=(-UCMAKE_CXX_COMPILER_LAUNCHER)
fi
BUILD_DIR=${WSTUNE_BUILD_DIR:-$default_dir}
JOBS=${WSTUNE_JOBS:-$(nproc)}
if [ -f "$BUILD_DIR/CMakeCache.txt" ] && ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$cxx" "$BUILD_DIR/CMakeCache.txt"; then
  rm -rf "$BUILD_DIR/CMakeCache.txt" "$BUILD_DIR/CMakeFiles"
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=${WSTUNE_BUILD_TYPE:-RelWithDebInfo} \
  -DWSTUNE_WERROR=${WSTUNE_WERROR:-OFF} -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "${extra[@]}" >/dev/null
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build "$BUILD_DIR" -j"$JOBS" --target "${targets[@]}"
else
  cmake --build "$BUILD_DIR" -j"$JOBS"
fi
