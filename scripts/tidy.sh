#!/usr/bin/env bash
# Runs clang-tidy-14 with the checks that matter here (below: bugs a
# compiler does not flag, such as use after move, dangling views, ignored
# results, copies in loops; not bugprone-sizeof-expression, which takes
# OpenCL's opaque handles, e.g. sizeof(cl_context), for mistakes) over the library's, the CLI's and the daemon's
# sources, with the flags of BUILD/compile_commands.json (the plain GCC
# build: scripts/build.sh writes it). Any finding fails (exit 1); fix it, or
# silence one line with `// NOLINT(check-name): the reason`.
# Each source's result is kept in $WSTUNE_TIDY_CACHE (default
# ~/.cache/wstune-tidy), keyed by the checks, clang-tidy's version and the
# contents of the source and of every header it includes (the build's
# dependency file): an unchanged file is not analysed again, in any clone.
#   scripts/tidy.sh [BUILD]      (default build; WSTUNE_JOBS: parallelism)
set -euo pipefail
cd "$(dirname "$0")/.."
TIDY=${CLANG_TIDY:-clang-tidy-14}
CHECKS='-*,bugprone-use-after-move,bugprone-dangling-handle,bugprone-unused-raii,bugprone-unused-return-value,'\
'bugprone-undelegated-constructor,bugprone-move-forwarding-reference,bugprone-forwarding-reference-overload,'\
'bugprone-copy-constructor-init,bugprone-integer-division,bugprone-misplaced-widening-cast,bugprone-fold-init-type,'\
'bugprone-string-constructor,bugprone-string-integer-assignment,bugprone-suspicious-string-compare,'\
'bugprone-infinite-loop,bugprone-throw-keyword-missing,bugprone-unhandled-self-assignment,'\
'bugprone-virtual-near-miss,bugprone-parent-virtual-call,bugprone-redundant-branch-condition,'\
'bugprone-terminating-continue,bugprone-incorrect-roundings,performance-for-range-copy,'\
'performance-unnecessary-copy-initialization,performance-move-const-arg,performance-noexcept-move-constructor,'\
'performance-implicit-conversion-in-loop,modernize-use-override,modernize-use-nullptr,misc-unused-using-decls,'\
'misc-unused-alias-decls'

if [ "${1:-}" = --one ]; then  # worker: --one DIRECTORY SOURCE OBJECT
  dir=$2 src=$3 obj=$4
  key=$({ echo "$CHECKS"; "$TIDY" --version; cat "$src"
          if [ -f "$dir/$obj.d" ]; then
            (cd "$dir" && sed -e '1d' -e 's/\\$//' "$obj.d" | tr ' ' '\n' | grep . | xargs cat)
          else echo "no dependency file: $RANDOM$RANDOM"; fi; } | sha256sum | cut -c1-40)
  cached=$CACHE/$key
  if [ ! -f "$cached" ]; then
    out=$("$TIDY" -p "$BUILD" --quiet --checks="$CHECKS" --warnings-as-errors='*' \
          --header-filter="^$PWD/(lib|cli|daemon)/" "$src" 2>/dev/null | grep -v "^[0-9]* warnings\? generated" || true)
    mkdir -p "$CACHE"
    if [ -n "$out" ]; then printf "%s\n" "$out"; fi >"$cached.$$" && mv "$cached.$$" "$cached"
  fi
  if [ -s "$cached" ]; then cat "$cached"; exit 1; fi
  exit 0
fi

BUILD=$(realpath "${1:-${WSTUNE_BUILD_DIR:-build}}")
export BUILD CACHE=${WSTUNE_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wstune-tidy}
[ -f "$BUILD/compile_commands.json" ] || { echo "tidy: no $BUILD/compile_commands.json (run scripts/build.sh first)" >&2; exit 1; }
command -v "$TIDY" >/dev/null || { echo "tidy: $TIDY not found (scripts/deps.sh installs it)" >&2; exit 1; }
# compile_commands.json as CMake writes it: "directory", "command", "file"
# on lines of their own. One line per source: DIRECTORY SOURCE OBJECT.
entries=$(sed -n 's/^ *"\(directory\|command\|file\)": "\(.*\)",\?$/\1 \2/p' "$BUILD/compile_commands.json" |
  awk -v root="$PWD/" '$1 == "directory" { d = $2 } $1 == "command" { o = ""; for (i = 2; i < NF; ++i) if ($i == "-o") o = $(i + 1) }
       $1 == "file" && index($2, root) == 1 { rel = substr($2, length(root) + 1)
         if (rel ~ /^(lib|cli|daemon)\// && rel !~ /\/tests\//) print d, $2, o }')
count=$(grep -c . <<<"$entries")
t0=$SECONDS
if xargs -P "${WSTUNE_JOBS:-$(nproc)}" -L 1 "$0" --one <<<"$entries"; then
  echo "tidy: $count sources clean ($((SECONDS - t0)) s)"
else
  echo "tidy: findings above; fix them or add // NOLINT(check): reason" >&2
  exit 1
fi
