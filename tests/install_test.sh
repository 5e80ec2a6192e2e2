#!/usr/bin/env bash
# Installs the build tree into a temporary prefix and builds apps against it:
# tests/consumer (C++) and examples/c_app (C) with find_package(wstune), and
# examples/app (C++) and examples/c_app (C) with pkg-config alone (no CMake),
# shared and static; runs them and checks the installed files.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR   (CXX and CC: the compilers, for
# an instrumented build; CMake reads them too)
set -euo pipefail
BUILD=$1; SRC=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstune-install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
P="$TMP/prefix"
cmake --install "$BUILD" --prefix "$P" >/dev/null
for f in bin/wstune bin/wstuned include/wstune/device.hpp include/wstune/tuner.hpp include/wstune/wstune.h include/wstune/export.h \
         share/wstune/kernels/matmul.cl lib/pkgconfig/wstune.pc lib/pkgconfig/wstune-c.pc; do
  [ -e "$P/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
# Only the app-facing headers are installed: none of lib/src's internal ones.
for f in kernel.hpp runner.hpp trial.hpp search.hpp split.hpp; do
  [ ! -e "$P/include/wstune/$f" ] || { echo "FAIL: the internal header $f is installed"; exit 1; }
done
[ ! -e "$P/share/wstune/kernels/hang.cl" ] || { echo "FAIL: the test kernel hang.cl is installed"; exit 1; }
ls "$P"/lib*/cmake/wstune/wstuneConfigVersion.cmake >/dev/null
ls "$P"/lib*/libwstune.so* "$P"/lib*/libwstune.a >/dev/null
"$P/bin/wstune" --version | grep -q "^wstune "
LIBDIR=$(echo "$P"/lib*)
export LD_LIBRARY_PATH="$LIBDIR" WSTUNE_DB="$TMP/apps.db"

# find_package
cmake -S "$SRC/tests/consumer" -B "$TMP/consumer" -DCMAKE_PREFIX_PATH="$P" >/dev/null
cmake --build "$TMP/consumer" -j2 >/dev/null
"$TMP/consumer/consumer"
"$TMP/consumer/consumer_static"
cmake -S "$SRC/examples/c_app" -B "$TMP/c_app" -DCMAKE_PREFIX_PATH="$P" >/dev/null  # a C-only project
cmake --build "$TMP/c_app" -j2 >/dev/null
"$TMP/c_app/wstune_c_app" 30000 | grep "result verified"

# pkg-config alone
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
pc() { pkg-config "$@"; }
[ "$(pc --variable=prefix wstune)" = "$P" ] || { echo "FAIL: wstune.pc prefix $(pc --variable=prefix wstune) != $P"; exit 1; }
[ "$(pc --modversion wstune-c)" = "$(pc --modversion wstune)" ]
pc --cflags wstune | grep -q -- "-std=c++20" || { echo "FAIL: wstune.pc lacks -std=c++20"; exit 1; }
if pc --cflags wstune-c | grep -q -- "-std="; then echo "FAIL: wstune-c.pc has a language flag"; exit 1; fi
for lib in -lwstune -lOpenCL; do pc --libs wstune | grep -q -- "$lib" || { echo "FAIL: --libs lacks $lib"; exit 1; }; done
for lib in -lfmt -lSQLiteCpp -lsqlite3 -lboost_program_options -pthread -lOpenCL; do
  pc --static --libs wstune | grep -q -- "$lib" || { echo "FAIL: --static --libs lacks $lib"; exit 1; }
done
mkdir -p "$TMP/static"; cp "$LIBDIR/libwstune.a" "$TMP/static/"  # only the archive: -lwstune links it
"${CXX:-c++}" "$SRC/examples/app/main.cpp" $(pc --cflags --libs wstune) -o "$TMP/app_shared"
"${CXX:-c++}" "$SRC/examples/app/main.cpp" -L"$TMP/static" $(pc --cflags --static --libs wstune) -o "$TMP/app_static"
"${CC:-cc}" -std=c99 -Wall -Wextra -Werror -pedantic "$SRC/examples/c_app/main.c" $(pc --cflags --libs wstune-c) -o "$TMP/c_shared"
"${CC:-cc}" -std=c99 "$SRC/examples/c_app/main.c" -L"$TMP/static" $(pc --cflags --static --libs wstune-c) -o "$TMP/c_static"
if ldd "$TMP/app_static" "$TMP/c_static" | grep -q libwstune; then echo "FAIL: static apps load libwstune.so"; exit 1; fi
"$TMP/app_shared" 64 32 | grep "result verified"
"$TMP/app_static" 64 32 | grep -E "\((exact|nearest)\), result verified"
"$TMP/c_shared" 40000 | grep "result verified"
"$TMP/c_static" 40000 | grep -E "\((exact|nearest)\), result verified"
echo "install + find_package + pkg-config apps (C and C++, shared and static) passed"
