#!/usr/bin/env bash
# Configures and builds wstune into ${WSTUNE_BUILD_DIR:-build}.
# WSTUNE_SANITIZE=1 builds with ASan + UBSan (into build-asan by default).
set -euo pipefail
cd "$(dirname "$0")/.."
san=OFF
default_dir=build
if [ "${WSTUNE_SANITIZE:-0}" = 1 ]; then san=ON; default_dir=build-asan; fi
BUILD_DIR=${WSTUNE_BUILD_DIR:-$default_dir}
JOBS=${WSTUNE_JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${WSTUNE_BUILD_TYPE:-RelWithDebInfo} -DWSTUNE_SANITIZE=$san \
  -DWSTUNE_WERROR=${WSTUNE_WERROR:-OFF} >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS"
