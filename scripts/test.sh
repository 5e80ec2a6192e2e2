#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with ctest
# on real OpenCL (PoCL on the CPU) and real MPI ranks (MPICH). Idempotent.
#   WSTUNE_SANITIZE=1 scripts/test.sh   # the same under ASan + UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
WSTUNE_WERROR=${WSTUNE_WERROR:-ON} scripts/build.sh
BUILD_DIR=${WSTUNE_BUILD_DIR:-build}
[ "${WSTUNE_SANITIZE:-0}" = 1 ] && BUILD_DIR=${WSTUNE_BUILD_DIR:-build-asan}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
cd "$BUILD_DIR"
ctest --output-on-failure -j"${WSTUNE_TEST_JOBS:-2}" --timeout 900
