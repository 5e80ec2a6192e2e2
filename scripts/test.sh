#!/usr/bin/env bash
# Installs what is missing, checks the formatting (scripts/format.sh
# --check), builds, runs clang-tidy's checks that matter here over the
# library, CLI and daemon (scripts/tidy.sh), and runs the whole test suite
# with ctest on real OpenCL (PoCL on the CPU) and real MPI ranks (MPICH),
# then the same suite under ASan + UBSan (clang-14, build-asan), then every
# fuzz target for a bounded time (scripts/fuzz.sh, one target per core).
# Idempotent. This is what CI runs (.ci/run).
#   WSTUNE_SANITIZE=1 scripts/test.sh   # only the ASan + UBSan suite and the fuzzers
#   WSTUNE_FUZZ_SECONDS=N               # seconds per fuzz target (default 45)
#   WSTUNE_TEST_JOBS=N                  # ctest parallelism (default 2)
# Builds go through ccache when it is installed (scripts/build.sh): on a
# machine that keeps ~/.ccache, a fresh clone compiles from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
export WSTUNE_WERROR=${WSTUNE_WERROR:-ON}
jobs=${WSTUNE_TEST_JOBS:-2}
t0=$SECONDS
scripts/format.sh --check
echo "wstune: formatting checked at $((SECONDS - t0)) s"
if [ "${WSTUNE_SANITIZE:-0}" != 1 ]; then
  WSTUNE_SANITIZE=0 WSTUNE_FUZZ=0 scripts/build.sh
  echo "wstune: plain build done at $((SECONDS - t0)) s"
  scripts/tidy.sh "${WSTUNE_BUILD_DIR:-build}"
  echo "wstune: clang-tidy done at $((SECONDS - t0)) s"
  (cd "${WSTUNE_BUILD_DIR:-build}" && ctest --output-on-failure -j"$jobs" --timeout 900)
  echo "wstune: plain suite done at $((SECONDS - t0)) s"
fi
# ASan + UBSan: the first error ends the test (UBSan too), leaks are not
# reported (the OpenCL runtime keeps its allocations to exit), except in the
# example apps' test (example.best_kernel), which turns LeakSanitizer on with
# one narrow suppression of PoCL's kernel compiler (tests/support/lsan-pocl.supp).
ASAN_DIR=${WSTUNE_ASAN_BUILD_DIR:-build-asan}
WSTUNE_BUILD_DIR=$ASAN_DIR WSTUNE_SANITIZE=1 scripts/build.sh
echo "wstune: ASan + UBSan build done at $((SECONDS - t0)) s"
(
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
  cd "$ASAN_DIR" && ctest --output-on-failure -j"$jobs" --timeout 900
)
echo "wstune: ASan + UBSan suite done at $((SECONDS - t0)) s"
WSTUNE_FUZZ_BUILD_DIR=$ASAN_DIR WSTUNE_FUZZ_SECONDS=${WSTUNE_FUZZ_SECONDS:-45} \
  WSTUNE_FUZZ_JOBS=${WSTUNE_FUZZ_JOBS:-$jobs} scripts/fuzz.sh
echo "wstune: all done in $((SECONDS - t0)) s"
