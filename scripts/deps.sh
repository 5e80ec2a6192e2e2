#!/usr/bin/env bash
# Installs the Debian packages wstune needs, only those that are missing.
# Idempotent; sourced or run by scripts/demo.sh and scripts/test.sh.
set -euo pipefail
WSTUNE_DEBS=(g++ cmake make pkg-config libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev
  ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo libclblast-dev
  mpich libmpich-dev libboost-program-options-dev libsqlitecpp-dev nlohmann-json3-dev libfmt-dev
  librapidcheck-dev
  clang-14 libclang-rt-14-dev  # the ASan + UBSan suite and the libFuzzer targets (scripts/fuzz.sh)
  clang-format-14 clang-tidy-14  # scripts/format.sh --check and scripts/tidy.sh (scripts/test.sh)
  ccache)  # scripts/build.sh compiles through it: a clone on a machine that keeps ~/.ccache builds from it
missing=()
for p in "${WSTUNE_DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "wstune: installing missing Debian packages: ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "wstune: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
