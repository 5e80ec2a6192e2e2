#!/usr/bin/env bash
# Downloads the Python wheels scripts/bench-peers.sh needs (Kernel Tuner,
# PyOpenCL and the minimal dependencies for its brute_force and greedy_ils
# strategies, plus pip itself) into .gpu/wheels, for a machine without
# network access: Ubuntu 24.04, CPython 3.12, x86_64 (the GPU machine).
# .gpu/ is git-ignored: never commit the wheels. About 22 MB.
# usage: scripts/peers-wheels.sh [--python-version 3.12] [--dest .gpu/wheels]
set -euo pipefail
cd "$(dirname "$0")/.."
pyver=3.12 dest=.gpu/wheels
while [[ $# -gt 0 ]]; do
  case "$1" in
    --python-version) pyver=$2; shift 2 ;;
    --dest) dest=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "peers-wheels.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$dest"
# Keep in sync with pkgs=(...) in scripts/bench-peers.sh. --no-deps: the full
# dependency closure of kernel_tuner (scipy, pandas, scikit-learn, pymoo,
# matplotlib) is over 100 MB and unused by the strategies we run.
pkgs=(kernel_tuner pyopencl numpy pytools siphash24 python-constraint2 packaging platformdirs typing_extensions
      jsonschema jsonschema-specifications referencing rpds-py attrs xmltodict pip)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_39_x86_64 --platform any \
  -d "$dest" "${pkgs[@]}"
ls -1 "$dest"
du -sh "$dest"
