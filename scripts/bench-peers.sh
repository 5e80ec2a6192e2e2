#!/usr/bin/env bash
# Peer comparison (issue 7): Kernel Tuner and wstune tune the local work size
# of the same four kernels, sizes and device over the same search space; both
# answers are then re-timed with `wstune run` (one yardstick). Writes
# docs/results/peers_kernel_tuner[_TAG].{csv,md} (raw outputs under
# docs/results/peers_raw[_TAG]/). Optionally runs bench_clblast too.
#
# usage: scripts/bench-peers.sh [--device P:D] [--preset pocl|gpu]
#          [--size KERNEL=SIZE ...] [--kernels k1,k2] [--build DIR] [--tag TAG]
#          [--out DIR] [--rounds N] [--clblast SIZES] [--clblast-local X,Y|N=X,Y|tuned]
#          [--only-clblast]
# Defaults: --device 0:0 --preset pocl --build build --out docs/results.
# Python: kernel_tuner + pyopencl are used when importable; otherwise they are
# installed with pip --target into BUILD/peers-pylib, from .gpu/wheels when that
# folder exists (scripts/peers-wheels.sh fills it; no network needed), else
# from PyPI. See docs/peers.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

device=0:0 preset=pocl build=build tag="" out=docs/results rounds=3 kernels=matmul,bilinear,sort,trapezoid
clblast_sizes="" clblast_local="" only_clblast=0
declare -A size def
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --preset) preset=$2; shift 2 ;;
    --size) size[${2%%=*}]=${2#*=}; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --clblast) clblast_sizes=$2; shift 2 ;;
    --clblast-local) clblast_local=$2; shift 2 ;;
    --only-clblast) only_clblast=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-peers.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case "$preset" in
  pocl) def=([matmul]=128 [bilinear]=128 [sort]=4096 [trapezoid]=4096) ;;
  gpu) def=([matmul]=1024 [bilinear]=1024 [sort]=262144 [trapezoid]=262144) ;;  # paper Table 3 sizes
  *) echo "bench-peers.sh: --preset '$preset': use pocl or gpu" >&2; exit 2 ;;
esac
for k in matmul bilinear sort trapezoid; do [[ -n "${size[$k]:-}" ]] || size[$k]=${def[$k]}; done
if [[ ! "$device" =~ ^[0-9]+:[0-9]+$ ]]; then
  echo "bench-peers.sh: --device '$device': give platform:device indices, e.g. 0:0 (see 'wstune devices')" >&2
  exit 2
fi
platform=${device%%:*} devidx=${device##*:}
wstune=$build/cli/wstune
if [[ ! -x "$wstune" ]]; then
  echo "bench-peers.sh: $wstune not found: build it first (cmake --build $build --target wstune_cli)" >&2
  exit 2
fi
suffix=${tag:+_$tag}
raw=$out/peers_raw$suffix
mkdir -p "$raw"

# ---- CLBlast (optional) ------------------------------------------------------
# --clblast-local tuned: wstune's guided search (24 evaluations) picks the
# matmul local size per N first, so CLBlast meets our tuned matmul.
run_clblast() {
  [[ -n "$clblast_sizes" ]] || return 0
  if [[ ! -x "$build/bench/bench_clblast" ]]; then
    echo "bench-peers.sh: $build/bench/bench_clblast not built (cmake --build $build --target bench_clblast)" >&2
    return 0
  fi
  local cb=(--device "$device" --sizes "$clblast_sizes" --out "$raw/clblast")
  if [[ "$clblast_local" = tuned ]]; then
    local n best ns
    IFS=, read -r -a ns <<<"$clblast_sizes"
    mkdir -p "$raw/clblast"
    : >"$raw/clblast/tuned.txt"
    for n in "${ns[@]}"; do
      best=$("$wstune" tune --kernel matmul --size "$n" --device "$device" --strategy guided --max-evals 24 --json \
               --no-resume --db "$raw/clblast/tune.db" | python3 -c '
import json, sys
b = json.load(sys.stdin)["best"]
l = b.get("local")  # {x, y, dims} or null (NULL)
if l: l = "%d,%d" % (l["x"], l["y"]) if l.get("dims", 1) == 2 else str(l["x"])
print(l or "", b["median_ms"])')
      echo "matmul $n tuned: local ${best% *} (${best#* } ms; empty = NULL)" | tee -a "$raw/clblast/tuned.txt" >&2
      [[ -n "${best% *}" ]] && cb+=(--local "$n=${best% *}")
    done
    rm -f "$raw/clblast/tune.db"*
  elif [[ -n "$clblast_local" ]]; then
    cb+=(--local "$clblast_local")
  fi
  "$build/bench/bench_clblast" "${cb[@]}"
  cp "$raw/clblast/peers_clblast.csv" "$out/peers_clblast$suffix.csv"
  cp "$raw/clblast/peers_clblast.md" "$out/peers_clblast$suffix.md"
}
if [[ "$only_clblast" = 1 ]]; then
  if [[ -z "$clblast_sizes" ]]; then
    echo "bench-peers.sh: --only-clblast needs --clblast SIZES, e.g. --clblast 1024,4096" >&2
    exit 2
  fi
  run_clblast
  exit 0
fi


# ---- Python side: kernel_tuner + pyopencl ----------------------------------
py=${PYTHON:-python3}
pylib=$root/$build/peers-pylib
[[ "$build" = /* ]] && pylib=$build/peers-pylib
export PYTHONPATH=$pylib${PYTHONPATH:+:$PYTHONPATH}
# The minimal set kernel_tuner needs for brute_force and greedy_ils (its other
# dependencies — scipy, pandas, scikit-learn, pymoo — serve other strategies).
pkgs=(kernel_tuner pyopencl numpy pytools siphash24 python-constraint2 packaging platformdirs typing_extensions
      jsonschema jsonschema-specifications referencing rpds-py attrs xmltodict)
if ! "$py" -c "import kernel_tuner, pyopencl" 2>/dev/null; then
  wheels=${WSTUNE_PEERS_WHEELS:-}
  for w in "$root/.gpu/wheels" "$root/../wheels"; do
    [[ -z "$wheels" && -d "$w" ]] && wheels=$w
  done
  if [[ -n "$wheels" ]]; then
    echo "bench-peers.sh: installing ${pkgs[*]} from $wheels into $pylib" >&2
    if "$py" -m pip --version >/dev/null 2>&1; then pip=("$py" -m pip)
    else pipwhl=$(ls "$wheels"/pip-*.whl | head -1); pip=("$py" "$pipwhl/pip"); fi
    "${pip[@]}" install -q --no-index --no-deps --find-links "$wheels" --target "$pylib" "${pkgs[@]}"
  else
    echo "bench-peers.sh: installing kernel_tuner pyopencl from PyPI into $pylib" >&2
    "$py" -m pip install -q --no-deps --target "$pylib" "${pkgs[@]}"
  fi
  "$py" -c "import kernel_tuner, pyopencl" || { echo "bench-peers.sh: kernel_tuner/pyopencl still not importable" >&2; exit 1; }
fi

# ---- Kernel Tuner ------------------------------------------------------------
# pyopencl's wheel brings its own ICD loader, whose platform order can differ
# from the system loader's (on the GPU machine it lists NVIDIA and PoCL the
# other way round): map wstune's P:D to pyopencl's indices by device name.
devname=$("$wstune" devices --json | "$py" -c "import json,sys; d=[x for x in json.load(sys.stdin) if x['id']==sys.argv[1]]; print(d[0]['name'] if d else '')" "$device")
if [[ -n "$devname" ]]; then
  read -r kp kd < <("$py" - "$devname" "$platform" "$devidx" <<'PY'
import sys, pyopencl as cl
name, p0, d0 = sys.argv[1], sys.argv[2], sys.argv[3]
for pi, p in enumerate(cl.get_platforms()):
    for di, d in enumerate(p.get_devices()):
        if d.name.strip() == name.strip():
            print(pi, di); sys.exit(0)
print(p0, d0)
PY
)
  if [[ -n "${kp:-}" && -n "${kd:-}" ]]; then platform=$kp devidx=$kd; fi
  echo "bench-peers.sh: '$devname' is pyopencl platform $platform device $devidx" >&2
fi
ktargs=(--platform "$platform" --device "$devidx" --kernels "$kernels" --out "$raw")
for k in matmul bilinear sort trapezoid; do ktargs+=(--size "$k=${size[$k]}"); done
echo "== Kernel Tuner ($device) ==" >&2
"$py" bench/peers/kernel_tuner_compare.py "${ktargs[@]}" || echo "bench-peers.sh: some Kernel Tuner runs failed (recorded)" >&2

# ---- wstune tune: fresh compiler caches per tune, like Kernel Tuner's ------------
echo "== wstune tune ($device) ==" >&2
IFS=, read -r -a klist <<<"$kernels"
for k in "${klist[@]}"; do
  for s in exhaustive guided; do
    tmp=$(mktemp -d)
    t0=$EPOCHREALTIME
    if POCL_CACHE_DIR=$tmp CUDA_CACHE_DISABLE=1 "$wstune" tune --kernel "$k" --size "${size[$k]}" --device "$device" \
         --strategy "$s" --seed 42 --db "$tmp/wstune.db" --no-resume --json >"$raw/wstune_${k}_$s.json" 2>"$raw/wstune_${k}_$s.log"; then :; else
      echo "bench-peers.sh: wstune tune $k $s failed (see $raw/wstune_${k}_$s.log)" >&2
    fi
    t1=$EPOCHREALTIME
    echo "{\"process_wall_s\": $("$py" -c "print(round($t1 - $t0, 3))")}" >"$raw/wstune_${k}_$s.wall.json"
    rm -rf "$tmp"
    echo "  $k ${size[$k]} $s done" >&2
  done
done

# ---- one yardstick: re-time every answer with wstune run, interleaved rounds ------
echo "== re-timing the answers with wstune run ($rounds rounds) ==" >&2
"$py" bench/peers/merge_peers.py locals --raw "$raw" --kernels "$kernels" >"$raw/locals.txt"
: >"$raw/yardstick.jsonl"
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$(mktemp -d)}
for ((r = 1; r <= rounds; ++r)); do
  while read -r k local; do
    [[ -n "$k" ]] || continue
    if j=$("$wstune" run --kernel "$k" --size "${size[$k]}" --device "$device" --local "$local" \
             --repeat 5 --warmup 1 --json 2>/dev/null); then
      printf '%s\n' "$j" | "$py" -c "import json,sys; j=json.load(sys.stdin); print(json.dumps({'kernel':'$k','local':'$local','round':$r,'median_ms':j['kernel']['median_ms'],'status':j.get('status')}))" >>"$raw/yardstick.jsonl"
    else
      echo "{\"kernel\":\"$k\",\"local\":\"$local\",\"round\":$r,\"median_ms\":null,\"status\":\"failed\"}" >>"$raw/yardstick.jsonl"
    fi
  done <"$raw/locals.txt"
done

"$py" bench/peers/merge_peers.py report --raw "$raw" --kernels "$kernels" \
  --csv "$out/peers_kernel_tuner$suffix.csv" --md "$out/peers_kernel_tuner$suffix.md" --device "$device" \
  --sizes "$(for k in "${klist[@]}"; do printf '%s=%s ' "$k" "${size[$k]}"; done)"

run_clblast
echo "wrote $out/peers_kernel_tuner$suffix.csv and .md" >&2
