#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/targets.cmake) with Debian's clang-14
# (-fsanitize=fuzzer,address,undefined) and runs each for a bounded time on a
# scratch copy of its seed corpus (fuzz/corpus/NAME; the committed corpus is
# never changed), with its dictionary (fuzz/dict). Prints one line per target
# with its executions, execution rate and crashes, and a Markdown table (for
# docs/results/fuzz.md). Crash inputs are copied to
# $BUILD/fuzz-findings/NAME/: after the fix, keep each as a regression test in
# fuzz/regressions/NAME/ (tests/test_fuzz_regressions.cpp runs them). Exit 1
# when a target crashed or did not run. Idempotent.
#   WSTUNE_FUZZ_SECONDS      seconds per target (default 60)
#   WSTUNE_FUZZ_BUILD_DIR    build directory (default build-asan: the same
#                            clang ASan + UBSan build scripts/test.sh tests in)
#   WSTUNE_FUZZ_ONLY         space-separated target names (default: all)
#   WSTUNE_JOBS              build parallelism (default: nproc)
#   WSTUNE_FUZZ_JOBS         targets run at once (default 1; scripts/test.sh
#                            runs one per core: each still runs SECS seconds)
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
SECS=${WSTUNE_FUZZ_SECONDS:-60}
BUILD=${WSTUNE_FUZZ_BUILD_DIR:-build-asan}
mapfile -t targets < <(sed -n '/^set(WSTUNE_FUZZ_TARGETS/,/^)/p' fuzz/targets.cmake | grep -o '^ *[a-z_0-9]*=' | tr -d ' =')
[ -n "${WSTUNE_FUZZ_ONLY:-}" ] && read -r -a targets <<<"$WSTUNE_FUZZ_ONLY"
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no targets in fuzz/targets.cmake" >&2; exit 1; }

WSTUNE_BUILD_DIR=$BUILD WSTUNE_FUZZ=1 scripts/build.sh --targets "${targets[@]/#/fuzz_}" || exit 1

# ASan/UBSan stop at the first error; leaks are reported per input.
export ASAN_OPTIONS=${WSTUNE_FUZZ_ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
findings=$BUILD/fuzz-findings
status=0
total_execs=0
rows=()
FUZZ_JOBS=${WSTUNE_FUZZ_JOBS:-1}
echo "fuzz: ${#targets[@]} target(s), ${SECS} s each, $(nproc) core(s), $FUZZ_JOBS at a time"
results=$(mktemp -d "${TMPDIR:-/tmp}/wstune-fuzz-results.XXXXXX")
# One target for SECS seconds on a scratch copy of its corpus; writes its
# report to $results/NAME.log, its table row to $results/NAME.row and its
# executions and status to $results/NAME.sum.
fuzz_one() {
  local t=$1 work seeds start rc took execs rate crashes corpus bad=0
  work=$(mktemp -d "${TMPDIR:-/tmp}/wstune-fuzz-$t.XXXXXX")
  cp -r "fuzz/corpus/$t" "$work/corpus"
  cat fuzz/dict/json.dict > "$work/dict"
  [ "$t" != expression ] || : >"$work/dict"  # Python, not JSON
  [ -f "fuzz/dict/$t.dict" ] && cat "fuzz/dict/$t.dict" >> "$work/dict"
  seeds=$(ls "$work/corpus" | wc -l)
  start=$SECONDS
  "$BUILD/fuzz/fuzz_$t" "$work/corpus" -max_total_time="$SECS" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/" -dict="$work/dict" >"$work/log" 2>&1
  rc=$?
  took=$((SECONDS - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
  shopt -s nullglob
  local artifacts=("$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$work"/slow-unit-*)
  shopt -u nullglob
  crashes=0
  for a in "${artifacts[@]}"; do [[ $(basename "$a") != slow-unit-* ]] && crashes=$((crashes + 1)); done
  if [ ${#artifacts[@]} -gt 0 ]; then
    mkdir -p "$findings/$t"
    cp "${artifacts[@]}" "$findings/$t/"
  fi
  corpus=$(ls "$work/corpus" | wc -l)
  {
    if [ -z "$execs" ] || { [ "$rc" != 0 ] && [ $crashes = 0 ]; }; then
      echo "fuzz $t: did not run to the end (exit $rc); last lines:"; tail -20 "$work/log"
      bad=1
      execs=${execs:-0}
    fi
    if [ $crashes -gt 0 ]; then
      echo "fuzz $t: $crashes crash input(s) in $findings/$t; the report:"
      grep -E "ERROR|SUMMARY|fuzz target|==[0-9]+==" "$work/log" | head -20
      bad=1
    fi
    echo "fuzz $t: $execs executions in ${took} s (${rate:-?}/s), $crashes crash(es), corpus $seeds -> $corpus inputs"
  } >"$results/$t.log"
  echo "| $t | $SECS | $execs | ${rate:-?} | $crashes | $seeds → $corpus |" >"$results/$t.row"
  echo "$execs $bad" >"$results/$t.sum"
  rm -rf "$work"
}
# Up to FUZZ_JOBS targets at once (scripts/test.sh: one per core).
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$FUZZ_JOBS" ]; then wait -n; running=$((running - 1)); fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
for t in "${targets[@]}"; do
  cat "$results/$t.log"
  rows+=("$(cat "$results/$t.row")")
  read -r execs bad <"$results/$t.sum"
  total_execs=$((total_execs + execs))
  [ "$bad" = 0 ] || status=1
done
rm -rf "$results"
echo
echo "| target | seconds | executions | per second | crashes | corpus (seeds → after) |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo "| all | $((SECS * ${#targets[@]})) | $total_execs | | | |"
exit $status
