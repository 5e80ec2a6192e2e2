#!/usr/bin/env bash
# Search-space construction, wstune against Kernel Tuner, side by side in one run.
#
#   scripts/bench-space.sh [--spaces 'a b ...'] [--repeat N] [--kt-timeout S] [--kt-memory-gib G]
#
# For each space of bench/spaces/spaces.json (all by default, in file order)
# runs bench_space (wstune: compile the conditions, solve, hold a
# SearchSpace; the best of N builds) and then bench/space_kernel_tuner.py
# (Kernel Tuner's Searchspace from PyPI, in .venv, created if missing; the
# best of N, fewer when one build takes over 10 s), one right after the
# other, so both see the same machine load. Kernel Tuner gets at most
# --kt-timeout seconds (default 900) and --kt-memory-gib GiB of address space
# (default 12) per space; a space it cannot build in those is reported as
# such. Writes docs/results/space_construction.csv and .jsonl (every
# program's JSON line) and replaces the table between the markers in
# docs/results/space_construction.md. Environment: WSTUNE_BUILD_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/bench-common.sh"
spaces="" repeat=5 kt_timeout=900 kt_gib=12
while [ $# -gt 0 ]; do
  case $1 in
    --spaces) spaces=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --kt-timeout) kt_timeout=$2; shift 2 ;;
    --kt-memory-gib) kt_gib=$2; shift 2 ;;
    *) echo "bench-space.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
wstune_build_targets bench_space
file=$here/bench/spaces/spaces.json
[ -n "$spaces" ] || spaces=$(python3 -c "import json,sys; print(' '.join(s['name'] for s in json.load(open(sys.argv[1]))['spaces']))" "$file")
py=$here/.venv/bin/python
if ! "$py" -c "import kernel_tuner" 2>/dev/null; then
  python3 -m venv "$here/.venv"
  "$py" -m pip install -q kernel_tuner
fi
out=$here/docs/results
jsonl=$out/space_construction.jsonl
: >"$jsonl"
for s in $spaces; do
  echo "== $s" >&2
  "$build/bench/bench_space" "$file" "$s" --repeat "$repeat" | tee -a "$jsonl" >&2
  rc=0
  (ulimit -v $((kt_gib * 1024 * 1024)); exec timeout "$kt_timeout" "$py" "$here/bench/space_kernel_tuner.py" "$file" "$s" \
    --repeat "$repeat" --max-seconds 10) >"$out/.kt_line" 2>"$out/.kt_err" || rc=$?
  if [ "$rc" != 0 ]; then
    if [ "$rc" = 124 ]; then
      why="not built in $kt_timeout s (killed)"
    elif grep -q MemoryError "$out/.kt_err"; then
      why="out of memory at $kt_gib GiB of address space"
    else
      why="failed (exit $rc): $(tail -1 "$out/.kt_err" | cut -c1-160)"
    fi
    python3 -c "import json,sys; print(json.dumps({'tool':'kernel_tuner','space':sys.argv[1],'error':sys.argv[2]}))" \
      "$s" "$why" >"$out/.kt_line"
  fi
  tee -a "$jsonl" <"$out/.kt_line" >&2
done
rm -f "$out/.kt_line" "$out/.kt_err"
python3 "$here/bench/space_table.py" "$jsonl" "$out/space_construction.csv" "$out/space_construction.md"
