#!/usr/bin/env bash
# Kernel Tuner's five OpenCL examples, tuned by wstune and by Kernel Tuner on
# one GPU (issue 36): tests/conformance/kernel_tuner/{vector_add, reduction,
# stencil, matmul, convolution}.json at the examples' own sizes, wstune's
# `tune --kernel-file` (exhaustive) against Kernel Tuner's own T1 reader
# (tune_kernel_T1, brute_force), each with empty compiler caches (wstune's
# program binary cache too: WSTUNE_CACHE_DIR is a fresh folder). Both bests
# are then re-timed with `wstune run` (one yardstick, which also verifies
# Kernel Tuner's answer against the reference configuration), and one table
# gives the space sizes, both bests, their own and re-timed milliseconds and
# the tuning wall times. A diagnostic also records what bounds a local size
# on the device (CL_KERNEL_WORK_GROUP_SIZE of vector_add built each tool's
# way, and whether 320 work-items launch: issue 36's item 7).
#
# usage: scripts/bench-conformance-gpu.sh [--device P:D] [--build DIR] [--out DIR] [--tag TAG]
#          [--rounds N] [--kernels vector_add,reduction,stencil,matmul,convolution] [--dry-run]
#          [--tools wstune,kernel_tuner] [--no-yardstick] [--yardstick-only]
# Defaults: the first GPU of `wstune devices`, --build build, --out docs/results, --tag h100,
# --rounds 3. Writes OUT/conformance_gpu_TAG.{md,csv} and OUT/conformance_gpu_TAG_raw/.
# Over several device calls (each at most 10 minutes): --tools tunes with one tool only,
# --no-yardstick stops after the tunes, and --yardstick-only re-times and reports from the raw
# files earlier calls left in OUT/conformance_gpu_TAG_raw/ (carry them back to the machine).
# On the GPU machine: source .gpu/setup.sh, build, and carry .gpu (with the wheels of
# scripts/peers-wheels.sh; pyopencl and kernel_tuner are installed from them as
# scripts/bench-peers.sh does). pyopencl lists PoCL's CPU first there: the script
# finds the GPU's pyopencl platform and device by name, never by index.
# Dry run (--dry-run, or WSTUNE_PLATFORM=pocl): the PoCL CPU, small budgets (3
# configurations a tool), the reduction with N = 8,000,000 (a copy of the file with that
# Size for Kernel Tuner) and without matmul (4096³ takes minutes a run on a CPU) unless
# --kernels names it: the pipeline end to end in a few minutes, no GPU needed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
device="" build=build out=docs/results tag="" rounds=3 kernels="" dry=0 tools=wstune,kernel_tuner yard=1 tune=1
[[ "${WSTUNE_PLATFORM:-}" = pocl ]] && dry=1
usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --tools) tools=$2; shift 2 ;;
    --no-yardstick) yard=0; shift ;;
    --yardstick-only) tune=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-conformance-gpu.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
wstune=$build/cli/wstune
[[ -x "$wstune" ]] || { echo "bench-conformance-gpu.sh: $wstune not found: build it first" >&2; exit 2; }
py=${PYTHON:-python3}
C=tests/conformance/kernel_tuner
if [[ $dry = 1 ]]; then
  want=cpu; tag=${tag:-pocl-dry}; kernels=${kernels:-vector_add,reduction,stencil,convolution}
  wtune=(--strategy random --max-evals 3 --time-limit 120 --repeat 3 --min-time 0 --median-error 0)
  ktopt=(--strategy random_sample --max-fevals 3)
  rsize=(--size N=8000000); ktred=(--reduction-n 8000000)
else
  want=gpu; tag=${tag:-h100}; kernels=${kernels:-vector_add,reduction,stencil,matmul,convolution}
  wtune=(--strategy exhaustive)
  ktopt=(--strategy brute_force)
  rsize=(); ktred=()
fi
if [[ -z "$device" ]]; then
  device=$("$wstune" devices --json | "$py" -c "
import json, sys
ds = [d for d in json.load(sys.stdin) if d['type'] == sys.argv[1]]
print(ds[0]['id'] if ds else '')" "$want")
  [[ -n "$device" ]] || { echo "bench-conformance-gpu.sh: no $want device in 'wstune devices'" >&2; exit 1; }
fi
raw=$out/conformance_gpu_${tag}_raw
mkdir -p "$raw"
exec > >(tee -a "$raw/log.txt") 2>&1

# ---- Python: kernel_tuner + pyopencl, from .gpu/wheels where there is no network -------
pylib=$root/$build/peers-pylib
export PYTHONPATH=$pylib${PYTHONPATH:+:$PYTHONPATH}
pkgs=(kernel_tuner pyopencl pytools siphash24 python-constraint2 packaging platformdirs typing_extensions
      jsonschema jsonschema-specifications referencing rpds-py attrs xmltodict)
"$py" -c "import numpy" 2>/dev/null || pkgs+=(numpy)  # the GPU machine's python3 has numpy
if ! "$py" -c "import kernel_tuner, pyopencl" 2>/dev/null; then
  wheels=${WSTUNE_PEERS_WHEELS:-}
  for w in "$root/.gpu/wheels" "$root/../wheels"; do [[ -z "$wheels" && -d "$w" ]] && wheels=$w; done
  if [[ -n "$wheels" ]]; then
    if "$py" -m pip --version >/dev/null 2>&1; then pip=("$py" -m pip)
    else pipwhl=$(ls "$wheels"/pip-*.whl | head -1); pip=("$py" "$pipwhl/pip"); fi
    "${pip[@]}" install -q --no-index --no-deps --find-links "$wheels" --target "$pylib" "${pkgs[@]}"
  else
    "$py" -m pip install -q --no-deps --target "$pylib" "${pkgs[@]}"
  fi
fi
"$py" -c "import kernel_tuner, pyopencl" || { echo "bench-conformance-gpu.sh: kernel_tuner/pyopencl not importable" >&2; exit 1; }

# The device in pyopencl's numbering, by name (its platform order is not the system loader's).
devname=$("$wstune" devices --json | "$py" -c "
import json, sys
d = [x for x in json.load(sys.stdin) if x['id'] == sys.argv[1]]
print(d[0]['name'] if d else '')" "$device")
read -r kp kd < <("$py" - "$devname" <<'PY'
import sys, pyopencl as cl
for pi, p in enumerate(cl.get_platforms()):
    for di, d in enumerate(p.get_devices()):
        if d.name.strip() == sys.argv[1].strip():
            print(pi, di); sys.exit(0)
print("", "")
PY
)
[[ -n "$kp" ]] || { echo "bench-conformance-gpu.sh: pyopencl has no device named '$devname'" >&2; exit 1; }
echo "== $devname: wstune $device, pyopencl platform $kp device $kd; kernels $kernels; dry run $dry =="

# ---- what bounds a local size here (issue 36, item 7) -------------------------------
"$py" bench/peers/conformance_gpu.py diag --kernel $C/vector_add.cl --platform "$kp" --device "$kd" \
  | tee "$raw/work_group_size.json" || echo "diag failed (recorded)"

IFS=, read -r -a klist <<<"$kernels"
uses() { [[ ",$tools," = *",$1,"* ]]; }
for k in "${klist[@]}"; do
  [[ $tune = 1 ]] || break
  f=$C/$k.json
  extra=(); ktx=()
  [[ $k = reduction ]] && extra=("${rsize[@]}") && ktx=("${ktred[@]}")
  # ---- wstune, empty compiler caches ----
  if uses wstune; then
  tmp=$(mktemp -d)
  t0=$EPOCHREALTIME
  POCL_CACHE_DIR=$tmp CUDA_CACHE_DISABLE=1 WSTUNE_CACHE_DIR=$tmp/binaries "$wstune" tune --kernel-file "$f" --device "$device" "${wtune[@]}" \
    "${extra[@]}" --no-store --json >"$raw/wstune_$k.json" 2>"$raw/wstune_$k.log" || echo "wstune tune $k failed"
  t1=$EPOCHREALTIME
  echo "{\"process_wall_s\": $("$py" -c "print(round($t1 - $t0, 3))")}" >"$raw/wstune_$k.wall.json"
  rm -rf "$tmp"
  fi
  # ---- Kernel Tuner's T1 reader, empty compiler caches ----
  if uses kernel_tuner; then
  tmp=$(mktemp -d)
  POCL_CACHE_DIR=$tmp CUDA_CACHE_DISABLE=1 PYOPENCL_NO_CACHE=1 "$py" bench/peers/conformance_gpu.py kt "$f" \
    --platform "$kp" --device "$kd" "${ktopt[@]}" "${ktx[@]}" --out "$raw/kt_$k.json" >"$raw/kt_$k.log" 2>&1 \
    || { echo "Kernel Tuner $k failed:"; tail -3 "$raw/kt_$k.log"; }
  rm -rf "$tmp"
  fi
  echo "  $k tuned by $tools"
done
[[ $yard = 1 ]] || { echo "tunes done (--no-yardstick): raw files in $raw"; exit 0; }

# ---- one yardstick: both bests re-timed with wstune run, rounds interleaved ----------
: >"$raw/yardstick.jsonl"
for ((r = 1; r <= rounds; ++r)); do
  for k in "${klist[@]}"; do
    extra=()
    [[ $k = reduction ]] && extra=("${rsize[@]}")
    for tool in wstune kernel_tuner; do
      src=$raw/wstune_$k.json
      [[ $tool = kernel_tuner ]] && src=$raw/kt_$k.json
      cfg=$("$py" -c "
import json, sys
d = json.load(open(sys.argv[1]))
b = d.get('best') or {}
b = b.get('params', b) if 'params' in b else b
print(','.join(f'{k}={v}' for k, v in b.items()))" "$src" 2>/dev/null || true)
      [[ -n "$cfg" ]] || continue
      if j=$("$wstune" run --kernel-file "$C/$k.json" --device "$device" --config "$cfg" "${extra[@]}" \
               --repeat 5 --warmup 1 --json 2>/dev/null); then
        printf '%s\n' "$j" | "$py" -c "
import json, sys
j = json.load(sys.stdin)
print(json.dumps({'kernel': sys.argv[1], 'tool': sys.argv[2], 'config': sys.argv[3], 'round': int(sys.argv[4]),
                  'median_ms': j['kernel']['median_ms'], 'status': j.get('status')}))" "$k" "$tool" "$cfg" "$r" \
          >>"$raw/yardstick.jsonl"
      else
        echo "{\"kernel\":\"$k\",\"tool\":\"$tool\",\"config\":\"$cfg\",\"round\":$r,\"median_ms\":null,\"status\":\"failed\"}" \
          >>"$raw/yardstick.jsonl"
      fi
    done
  done
done

note="wstune ${wtune[*]}; Kernel Tuner tune_kernel_T1 ${ktopt[*]}; yardstick: wstune run, median of $rounds rounds of 5-run medians"
[[ $dry = 1 ]] && note="DRY RUN on PoCL (small budgets, reduction N=8000000): not a GPU result. $note"
"$py" bench/peers/conformance_gpu.py report --raw "$raw" --kernels "$kernels" --device "$devname ($device)" \
  --note "$note" --md "$out/conformance_gpu_$tag.md" --csv "$out/conformance_gpu_$tag.csv"
echo "wrote $out/conformance_gpu_$tag.md and .csv (raw: $raw)"
