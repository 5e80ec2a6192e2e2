#!/usr/bin/env bash
# The paper's §4 comparison (baseline, the paper's method, wstune) on two
# unlike devices at the paper's sizes and 4x/16x the work, then the HTML
# report drawn from the database the run fills.
# Usage: scripts/bench-paper.sh [DEVICE1,DEVICE2] [TAG] [extra bench_paper options]
#   DEVICE: P:D, cpu, gpu or a name substring (wstune devices lists them).
# Writes docs/results/paper_<TAG>.{csv,json,md}, the database
# docs/results/paper_<TAG>.db (WSTUNE_PAPER_DB overrides; it is not committed)
# and the report docs/results/paper_<TAG>_report/index.html (+ *.svg).
# Examples:
#   POCL_DEVICES="basic pthread" scripts/bench-paper.sh 0:0,0:1 pocl --quick --sweep 10
#   scripts/bench-paper.sh gpu,cpu h100-pocl          # on the GPU machine, paper sizes
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
devices=${1:-0:0,0:1}
tag=${2:-pocl}
shift $(( $# > 2 ? 2 : $# )) || true
. "$here/scripts/bench-common.sh"
wstune_build_targets bench_paper wstune_cli
out=$here/docs/results
mkdir -p "$out"
db=${WSTUNE_PAPER_DB:-$out/paper_$tag.db}
rm -f "$db" "$db-wal" "$db-shm"
"$build/bench/bench_paper" --devices "$devices" --tag "$tag" --out-dir "$out" --db "$db" "$@"
"$build/cli/wstune" report --db "$db" --out "$out/paper_${tag}_report"
echo "report: $out/paper_${tag}_report/index.html"
