#!/usr/bin/env bash
# The API boundary of libwstune.so (issue 35): the library is compiled with
# -fvisibility=hidden and exports only what lib/include/wstune/ declares.
# Asserts, over `nm -D --defined-only` of the shared library:
#  1. every exported C symbol is a function of the C API (declared in
#     wstune/wstune.h), and every function wstune.h declares is exported;
#  2. every exported C++ symbol demangles into the wstune namespace (a
#     function, a member, or a class's vtable/typeinfo) whose first name
#     after wstune:: is declared in an app-facing header: no internal
#     concept (kernel, runner, search, ...) and no instantiation of a
#     library's template (std::, nlohmann::, fmt::, SQLite::) leaks;
#  3. fewer than MAX (default 250) symbols are exported (1,783 before the
#     boundary; 158 with it).
# Sanitizer and coverage instrumentation symbols (__asan_*, __odr_asan*,
# __sancov_*, __start_/__stop_ sections) are set aside.
# Usage: exports_test.sh LIBWSTUNE_SO INCLUDE_DIR [MAX]
set -euo pipefail
SO=$1; INC=$2; MAX=${3:-250}
syms=$(nm -D --defined-only "$SO" | awk '{print $3}' | grep -Ev '^(_init|_fini|_edata|_end|__bss_start|__asan_.*|__odr_asan.*|___asan.*|__sancov.*|__start_.*|__stop_.*)$' || true)
count=$(printf '%s\n' "$syms" | grep -c . || true)
fail=0
# 1. The C API.
c_declared=$(grep -oE '\bwstune_[a-z_]+\(' "$INC/wstune/wstune.h" | tr -d '(' | sort -u)
c_exported=$(printf '%s\n' "$syms" | grep -v '^_Z' | sort -u || true)
for s in $c_exported; do
  grep -qx "$s" <<<"$c_declared" || { echo "FAIL: exported C symbol $s is not declared in wstune.h"; fail=1; }
done
for s in $c_declared; do
  grep -qx "$s" <<<"$c_exported" || { echo "FAIL: the C API function $s is not exported"; fail=1; }
done
# 2. The C++ API: the first name after wstune:: must be declared in a public header.
public=$(cat "$INC"/wstune/*.hpp)
while IFS= read -r d; do
  [ -n "$d" ] || continue
  rest=${d#guard variable for }; rest=${rest#typeinfo name for }; rest=${rest#typeinfo for }; rest=${rest#vtable for }; rest=${rest#VTT for }
  # Return types come first for templates and conversion results: take the
  # first wstune:: name.
  name=$(grep -oE 'wstune::[A-Za-z_][A-Za-z_0-9]*' <<<"$rest" | head -1 | sed 's/^wstune:://' || true)
  case "$rest" in
    wstune::*) ;;
    *) echo "FAIL: exported C++ symbol outside the wstune API: $d"; fail=1; continue ;;
  esac
  if [ -z "$name" ] || ! grep -qE "(class|struct|enum class)[[:space:]]+(WSTUNE_EXPORT[[:space:]]+)?$name\b|\b$name\(" <<<"$public"; then
    echo "FAIL: exported C++ symbol not declared in lib/include/wstune/: $d"; fail=1
  fi
done < <(printf '%s\n' "$syms" | grep '^_Z' | c++filt)
# 3. The count.
if [ "$count" -ge "$MAX" ]; then echo "FAIL: $count symbols exported (at most $MAX expected; 1,783 before issue 35)"; fail=1; fi
[ $fail = 0 ] || exit 1
echo "libwstune.so exports $count symbols, all of the app-facing API ($(wc -w <<<"$c_declared") C functions)"
