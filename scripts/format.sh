#!/usr/bin/env bash
# Formats every tracked C and C++ file (*.c, *.h, *.cpp, *.hpp) with
# clang-format-14 and the repository's .clang-format, in place.
#   scripts/format.sh           # format the tree
#   scripts/format.sh --check   # change nothing: list the files that would
#                               # change and exit 1 (scripts/test.sh runs this)
# OpenCL C kernels (kernels/*.cl) are left as written.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-14}
command -v "$CLANG_FORMAT" >/dev/null || { echo "format: $CLANG_FORMAT not found (scripts/deps.sh installs it)" >&2; exit 1; }
mapfile -d '' files < <(git ls-files -z -- '*.c' '*.h' '*.cpp' '*.hpp')
if [ "${1:-}" != --check ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 32 -P "$(nproc)" "$CLANG_FORMAT" -i
  exit 0
fi
# One clang-format per batch of files; each unformatted file is named in its
# "file:line:col: error: code should be clang-formatted" lines.
mapfile -t bad < <(printf '%s\0' "${files[@]}" | xargs -0 -n 64 "$CLANG_FORMAT" --dry-run --Werror 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  echo "format: ${#bad[@]} file(s) not formatted with $CLANG_FORMAT (.clang-format):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "format: fix with scripts/format.sh (then review and commit the change)" >&2
  exit 1
fi
echo "format: ${#files[@]} C/C++ files formatted"
