#!/usr/bin/env bash
# The main job: installs what is missing, builds, lists the OpenCL devices,
# runs each kernel on the default device, then runs the wstuned MPI daemon
# (master + two unlike PoCL workers) over all four kernels into the default
# embedded SQLite database and shows what it stored. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
BUILD_DIR=${WSTUNE_BUILD_DIR:-build}
W="$BUILD_DIR/cli/wstune"
echo "== wstune devices"
"$W" devices
for k in matmul bilinear sort trapezoid; do
  echo "== wstune run --kernel $k (default device, the paper's size)"
  size=""
  [ "$k" = matmul ] && size="--size 512"
  "$W" run --kernel "$k" $size --repeat 3
done
if [ -x scripts/demo-daemon.sh ]; then
  echo "== wstuned: master + two unlike workers"
  WSTUNE_BUILD_DIR="$BUILD_DIR" scripts/demo-daemon.sh
fi
