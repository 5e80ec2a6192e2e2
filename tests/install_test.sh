#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, builds tests/consumer with
# find_package(wstune) against it, runs it, and checks the installed files.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$1; SRC=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstune-install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
for f in bin/wstune bin/wstuned include/wstune/device.hpp include/wstune/kernel.hpp \
         share/wstune/kernels/matmul.cl lib/pkgconfig/wstune.pc; do
  [ -e "$TMP/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
ls "$TMP"/prefix/lib*/cmake/wstune/wstuneConfigVersion.cmake >/dev/null
ls "$TMP"/prefix/lib*/libwstune.so* "$TMP"/prefix/lib*/libwstune.a >/dev/null
"$TMP/prefix/bin/wstune" --version | grep -q "^wstune "
cmake -S "$SRC/tests/consumer" -B "$TMP/consumer" -DCMAKE_PREFIX_PATH="$TMP/prefix" >/dev/null
cmake --build "$TMP/consumer" -j2 >/dev/null
LD_LIBRARY_PATH="$(echo "$TMP"/prefix/lib*)" "$TMP/consumer/consumer"
"$TMP/consumer/consumer_static"
PKG_CONFIG_PATH="$(echo "$TMP"/prefix/lib*/pkgconfig)" pkg-config --modversion wstune
echo "install + consumer test passed"
