#!/usr/bin/env bash
# The strategies in simulation mode against Kernel Tuner's, on recorded
# exhaustive tables (bench/tables/*.json.gz) and synthetic landscapes.
#
#   scripts/bench-strategies.sh TAG [--seeds N] [--budget F] [--tables 'GLOB'] [--synthetic 'a b']
#                                    [--kt-strategies a,b] [--no-kt] [--kt-csv FILE] [--strategies a,b]
#     writes docs/results/strategies_TAG.{csv,md} and strategies_TAG_TABLE.svg: per table and
#     strategy, optimum / best found against evaluations (median, quartiles, min, max over seeds),
#     wstune's strategies (bench_strategies) and Kernel Tuner's (bench/strategies_kernel_tuner.py,
#     Kernel Tuner from PyPI in .venv, created if missing) at the same budgets. --kt-csv reuses Kernel
#     Tuner's curves of an earlier run (its kt.csv, same tables, budget and seeds) instead of running it.
#     --tables takes one or more globs (space-separated); --strategies limits wstune's (default: all
#     of bench_strategies' list; bayes takes hours on a table of tens of thousands of configurations).
#   scripts/bench-strategies.sh record NAME WSTUNE_TUNE_ARGS...
#     records an exhaustive table: wstune tune ARGS --strategy exhaustive into a scratch database,
#     wstune export, gzip -9 into bench/tables/NAME.json.gz; e.g.
#     scripts/bench-strategies.sh record matmul-256-pocl --kernel matmul --size 256
#
# Example tables (the kernel-file examples, once on main) take one line each:
#   scripts/bench-strategies.sh record gemm-pocl --kernel-file share/examples/kernels/gemm.json --size 128
# Environment: WSTUNE_BUILD_DIR (default build), POCL_* as for any run.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/scripts/bench-common.sh"

record() {
  local name=$1
  shift
  wstune_build_targets wstune_cli
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  local t0=$SECONDS
  # --max-evals: a tuning file's Budget must not cut the exhaustive run short.
  "$build/cli/wstune" tune "$@" --strategy exhaustive --max-evals 100000000 --db "$tmp/t.db" --no-resume >"$tmp/tune.log"
  "$build/cli/wstune" export --db "$tmp/t.db" "$tmp/t.json"
  mkdir -p "$here/bench/tables"
  gzip -9 -c "$tmp/t.json" >"$here/bench/tables/$name.json.gz"
  echo "recorded bench/tables/$name.json.gz in $((SECONDS - t0)) s: wstune tune $* --strategy exhaustive" >&2
  tail -3 "$tmp/tune.log" >&2
}

if [ "${1:-}" = record ]; then
  shift
  [ $# -ge 2 ] || { echo "usage: $0 record NAME WSTUNE_TUNE_ARGS..." >&2; exit 2; }
  record "$@"
  exit 0
fi

[ $# -ge 1 ] || { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
tag=$1
shift
seeds=25 budget=0.1 tables_glob="$here/bench/tables/*.json.gz" synthetic="synthetic-2k synthetic-10k synthetic-10k-rugged"
kt_strategies="" kt=1 kt_csv="" strategies=""
cmdline="scripts/bench-strategies.sh $tag $*"
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --tables) tables_glob=$2; shift 2 ;;
    --synthetic) synthetic=$2; shift 2 ;;
    --kt-strategies) kt_strategies=$2; shift 2 ;;
    --no-kt) kt=0; shift ;;
    --kt-csv) kt_csv=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --strategies) strategies=$2; shift 2 ;;
    *) echo "bench-strategies.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

wstune_build_targets bench_strategies
work=$build/bench-strategies-$tag
if [ -n "$kt_csv" ]; then cp "$kt_csv" "$build/kt-reuse-$tag.csv"; kt_csv=$build/kt-reuse-$tag.csv; fi
rm -rf "$work"
mkdir -p "$work"
args=(--seeds "$seeds" --budget "$budget")
[ -n "$strategies" ] && args+=(--strategies "$strategies")
for s in $synthetic; do args+=(--synthetic "$s"); done
for gz in $tables_glob; do
  [ -f "$gz" ] || continue
  name=$(basename "$gz" .json.gz)
  gunzip -c "$gz" >"$work/$name.json"
  args+=(--table "$work/$name.json")
done

out=$here/docs/results/strategies_$tag
"$build/bench/bench_strategies" "${args[@]}" --export-kt "$work/kt" --export-only
if [ -n "$kt_csv" ]; then
  cp "$kt_csv" "$work/kt.csv"
  ktv=$("$here/.venv/bin/python" -c "import importlib.metadata as m; print(m.version('kernel_tuner'))" 2>/dev/null || echo "?")
  args+=(--kt-results "$work/kt.csv")
elif [ "$kt" = 1 ]; then
  py=$here/.venv/bin/python
  if ! "$py" -c "import kernel_tuner, sklearn" 2>/dev/null; then
    python3 -m venv "$here/.venv"
    "$py" -m pip install -q kernel_tuner scikit-learn
  fi
  ktv=$("$py" -c "import importlib.metadata as m; print(m.version('kernel_tuner'))")
  "$py" "$here/bench/strategies_kernel_tuner.py" "$work/kt" "$work/kt.csv" ${kt_strategies:+--strategies "$kt_strategies"}
  args+=(--kt-results "$work/kt.csv")
fi
"$build/bench/bench_strategies" "${args[@]}" --out "$out"
{
  echo "# Strategies in simulation mode ($tag)"
  echo
  echo "Command: \`$cmdline\` (wstune $(git -C "$here" rev-parse --short HEAD)$( [ "$kt" = 1 ] && echo ", Kernel Tuner $ktv"))."
  echo "Each cell: optimum / best found after that many evaluations (1 = the optimum), median [quartiles] over"
  echo "$seeds seeds; the baseline counts as an evaluation. \"within 5 %\": the median best is at most"
  echo "1.05 × the optimum (optimum / best ≥ 0.952). kt:NAME rows are Kernel Tuner's strategies on the same table"
  echo "(its cache file, simulation_mode=True, max_fevals = the largest budget). Plots: strategies_${tag}_TABLE.svg."
  echo
  cat "$out.md"
} >"$out.md.tmp"
mv "$out.md.tmp" "$out.md"
echo "wrote $out.md" >&2
