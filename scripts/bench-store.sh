#!/usr/bin/env bash
# Store benchmark: trial insert rate and look-up latency over 1,000,000 trials.
# Usage: scripts/bench-store.sh [TAG] [extra bench_store options]
# Writes docs/results/store_TAG.{csv,md} (default TAG: bench). Needs no
# OpenCL device: it measures SQLite and the look-up chain only, so it runs
# unchanged on the GPU machine. Set WSTUNE_BUILD_DIR to reuse a build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tag=${1:-bench}
shift $(( $# > 0 ? 1 : 0 )) || true
. "$here/scripts/bench-common.sh"
wstune_build_targets bench_store
mkdir -p "$here/docs/results"
"$build/bench/bench_store" --trials 1000000 --batch 1000 --lookups 20000 --tag "$tag" \
  --out-dir "$here/docs/results" "$@"
