#!/usr/bin/env bash
# Configurations evaluated per second by `wstune tune --strategy exhaustive`
# without and with the build pool (issue 37, "Builds ahead of the device";
# docs/results/build_pool.md), in one run:
#  1. side by side: the first EVALS configurations of the exhaustive order
#     with --build-jobs 0 and no program binary cache (today's behaviour), then
#     with --build-jobs JOBS and an empty cache; each with empty compiler
#     caches (PoCL's, NVIDIA's compute cache) and its own WSTUNE_BUILD_LOG, so
#     the table shows where a configuration's time goes: builds from source,
#     builds from a cached binary, the builders' warm builds, the timed runs
#     (and the wait for a builder);
#  2. with --full: the whole space with the pool, resumable: each call runs at
#     most BUDGET seconds (killed then, SIGKILL: the stored session resumes on
#     the next call with the same --state), and the call that finishes reports
#     the campaign's configurations per second over the calls' summed time;
#  3. a serial re-measurement (`wstune run`, --repeat 30) of the RECHECK
#     fastest configurations of the last pooled run, against the medians the
#     tune found (agreement within 3 % is the target).
#
# usage: scripts/bench-tune-pool.sh [--device D] [--build DIR] [--file F] [--size S] [--jobs N]
#          [--evals N] [--full] [--budget-s SEC] [--state DIR] [--resume FILE.tgz] [--recheck K]
#          [--tag TAG] [--out DIR]
# --evals 0 skips the side-by-side runs (a later call of the whole space).
# Defaults: --device gpu, --build build, --file share/examples/kernels/matmul_tiled.json,
# --size 1024x1024x1024, --jobs (cores - 1), --evals 300, --budget-s 420,
# --state build/pool-state, --recheck 5, --tag h100, --out docs/results.
# Writes OUT/build_pool_TAG.md (appended per call) and OUT/build_pool_TAG_raw/.
# With $OUT set (a device call), the state folder (database, summed times)
# is also packed to $OUT/pool-state.tgz: unpack it into the folder --state
# names before the next call, or pass it as --resume (unpacked where the state folder has no
# database yet, e.g. on a fresh machine). PoCL example (this repository's
# 2-core machine): --device cpu --size 64x64x64 --jobs 1 --evals 60 --tag pocl-2core.
set -euo pipefail
cd "$(dirname "$0")/.."
resume="" device=gpu build=build file=share/examples/kernels/matmul_tiled.json size=1024x1024x1024
jobs=$(( $(nproc) > 1 ? $(nproc) - 1 : 1 )) evals=300 full=0 budget=420 state="" recheck=5 tag=h100
out=docs/results
usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --file) file=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --evals) evals=$2; shift 2 ;;
    --full) full=1; shift ;;
    --budget-s) budget=$2; shift 2 ;;
    --state) state=$2; shift 2 ;;
    --resume) resume=$2; shift 2 ;;
    --recheck) recheck=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-tune-pool.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
wstune=$build/cli/wstune
[[ -x "$wstune" ]] || { echo "bench-tune-pool.sh: $wstune not found: build it first" >&2; exit 2; }
state=${state:-$build/pool-state}
raw=$out/build_pool_${tag}_raw
mkdir -p "$raw" "$state"
state=$(cd "$state" && pwd)
if [[ -n "$resume" && -f "$resume" && ! -f "$state/full.db" ]]; then tar xzf "$resume" -C "$state"; fi
md=$out/build_pool_$tag.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CUDA_CACHE_MAXSIZE=4294967296  # the driver's JIT cache holds the whole space's builds
common=(tune --kernel-file "$file" --size "$size" --device "$device" --strategy exhaustive --json)

# A run with fresh compiler caches under $work/NAME: RUN NAME ARGS...
run() {
  local name=$1; shift
  rm -rf "${work:?}/$name"; mkdir -p "$work/$name"
  echo "== $name: wstune ${common[*]} $*" >&2
  local t0; t0=$(date +%s%N)
  POCL_CACHE_DIR=$work/$name/pocl CUDA_CACHE_PATH=$work/$name/cuda WSTUNE_CACHE_DIR=$work/$name/programs \
    WSTUNE_BUILD_LOG=$raw/$name.builds.log "$wstune" "${common[@]}" "$@" >"$raw/$name.json" 2>"$raw/$name.err" || true
  echo "$name $(( ($(date +%s%N) - t0) / 1000000 ))" >>"$raw/process_walls.txt"  # ms
}

# ---- 1. side by side -------------------------------------------------------------------------
last=""
touch "$raw/process_walls.txt"
if [[ $evals != 0 ]]; then
  rm -f "$raw"/sbs-*.builds.log "$raw"/sbs-*.json; : >"$raw/process_walls.txt"
  run sbs-jobs0 --max-evals "$evals" --build-jobs 0 --no-binary-cache --no-store
  run "sbs-jobs$jobs" --max-evals "$evals" --build-jobs "$jobs" --no-store
  last=$raw/sbs-jobs$jobs.json
fi

# ---- 2. the whole space, resumable -------------------------------------------------------------
finished=1
if [[ $full = 1 ]]; then
  echo "== full: at most $budget s in this call (state $state)" >&2
  t0=$(date +%s%N)
  rc=0
  # The binary cache and the driver's JIT cache stay in the state folder between the calls of one machine.
  POCL_CACHE_DIR=$state/pocl CUDA_CACHE_PATH=$state/cuda WSTUNE_CACHE_DIR=$state/programs \
    WSTUNE_BUILD_LOG=$state/builds.log timeout -s KILL "$budget" "$wstune" "${common[@]}" --build-jobs "$jobs" \
    --db "$state/full.db" >"$state/full.json" 2>"$state/full.err" || rc=$?
  echo "$(( ($(date +%s%N) - t0) / 1000000 ))" >>"$state/walls.txt"  # ms
  if [[ $rc = 137 || $rc = 124 ]]; then
    finished=0
    echo "full: not finished in $budget s; run the same command again (same --state) to resume" >&2
  else
    cp "$state/full.json" "$raw/full.json"; cp "$state/walls.txt" "$raw/full.walls.txt"
    [[ -f "$state/builds.log" ]] && cp "$state/builds.log" "$raw/full.builds.log"
    last=$raw/full.json
  fi
  [[ -n "${OUT:-}" ]] && tar czf "$OUT/pool-state.tgz" -C "$state" full.db walls.txt 2>/dev/null || true
fi

# ---- 3. serial re-measurement of the fastest --------------------------------------------------
: >"$raw/recheck.txt"
if [[ $finished = 1 && -n "$last" && -s "$last" ]]; then
  python3 - "$last" "$recheck" >"$work/top.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = sorted((t for t in d["trials"] if t["status"] == "correct" and t.get("median_ms")), key=lambda t: t["median_ms"])
for t in ok[: int(sys.argv[2])]:
    print(",".join(f"{k}={v}" for k, v in sorted(t["params"].items())), t["median_ms"])
PY
  while read -r config tuned; do
    measured=$(POCL_CACHE_DIR=$work/recheck-pocl "$wstune" run --kernel-file "$file" --size "$size" --device "$device" \
      --config "$config" --repeat 30 --json 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['kernel']['median_ms'])")
    echo "$config $tuned $measured" >>"$raw/recheck.txt"
  done <"$work/top.txt"
fi

# ---- the table ---------------------------------------------------------------------------------
python3 - "$raw" "$jobs" "$evals" "$file" "$size" "$device" "$budget" "$finished" "$full" >>"$md" <<'PY'
import json, os, sys, collections
raw, jobs, evals, file, size, device, budget, finished, full = sys.argv[1:]
def load(name):
    p = os.path.join(raw, name + ".json")
    try:
        return json.load(open(p))
    except Exception:
        return None
def builds(name):
    c = collections.defaultdict(lambda: [0, 0.0])
    p = os.path.join(raw, name + ".builds.log")
    if os.path.exists(p):
        for line in open(p):
            f = line.split()
            if len(f) >= 3:
                c[f[0]][0] += 1
                c[f[0]][1] += float(f[2])
    return c
def params(t):
    return " ".join(f"{k}={v}" for k, v in sorted(t["params"].items()))
print(f"\n## {size} on `{device}`: {file}\n")
print(f"Command: `scripts/bench-tune-pool.sh --device {device} --size {size} --jobs {jobs} --evals {evals}"
      + (f" --full --budget-s {budget}" if full == "1" else "") + "`\n")
print("Wall: the `wstune tune` process's, start-up (device, reference) and tie-break trials included; for the "
      "whole space the sum over its calls. Configurations/s: evaluations (the whole space's configurations) / wall. "
      "Builds: every process's (WSTUNE_BUILD_LOG); timed runs: a trial's warm-up, samples and read-back.\n")
print("| run | evaluations (+tie-break) | wall s | configurations/s | speed-up | builds from source (n, ms each) | "
      "binary loads (n, ms each) | warm builds (n) | timed runs ms/config | best | best ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
process = {}  # the side-by-side runs' process wall times (s): start-up and tie-breaks included
for line in open(os.path.join(raw, "process_walls.txt")):
    f = line.split()
    process[f[0]] = float(f[1]) / 1000
rate0 = None
names = ["sbs-jobs0", f"sbs-jobs{jobs}"] if evals != "0" else []
for name in names + (["full"] if finished == "1" and full == "1" else []):
    d = load(name)
    if not d:
        print(f"| {name} | (no result: see {name}.err) |||||||||")
        continue
    wall = process.get(name, d["wall_ms"] / 1000)
    if name == "full":
        walls = [float(x) / 1000 for x in open(os.path.join(raw, "full.walls.txt")) if x.strip()]
        wall = sum(walls)  # every call's process time, start-up included
        n = d["configurations"]
    else:
        n = d["evaluations"]
    rate = n / wall if wall else 0
    if rate0 is None:
        rate0 = rate  # the first row's: --build-jobs 0 (or the whole space alone)
    b = builds(name)
    each = lambda k: f"{b[k][0]}, {b[k][1] / b[k][0]:.1f}" if b[k][0] else "0"
    measured = [t for t in d["trials"] if not t.get("from_store")]
    runs = sum(t.get("run_ms", 0) for t in measured) / max(1, len(measured))
    best = d["best"]
    print(f"| {name} | {d['evaluations']} (+{d['tiebreak_trials']}) | {wall:.1f} | {rate:.2f} | "
          f"{rate / rate0:.2f}x | {each('source')} | {each('binary')} | {b['warm'][0]} | {runs:.2f} | "
          f"{params(best)} | {best.get('median_ms', 0):.4f} |")
print("\nThe tune loop (JSON `wall_ms`: the trials, with their builds and waits, and the tie-break rounds; "
      "not the start-up): ms per trial, and where a trial's time went (`overhead_breakdown_ms_per_trial`; "
      "`other` includes the wait for builders), and the trials' wait for builders (`build_pool.waited_ms`).\n")
print("| run | loop wall s | trials | loop ms/trial | timed runs | build | verification | run beyond kernels | other "
      "| waited for builders ms/trial | builders (started) | built ahead | lost |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in names + (["full"] if finished == "1" and full == "1" else []):
    d = load(name)
    if not d:
        continue
    measured = [t for t in d["trials"] if not t.get("from_store")]
    n = max(1, d["evaluations"] + d["tiebreak_trials"])
    o = d.get("overhead_breakdown_ms_per_trial", {})
    runs = sum(t.get("run_ms", 0) for t in measured) / max(1, len(measured))
    pool = d.get("build_pool")
    waited = f"{pool['waited_ms'] / n:.2f}" if pool else "-"
    counts = f"{pool['jobs']} ({pool['started']}) | {pool['built']} | {pool['lost']}" if pool else "- | - | -"
    print(f"| {name} | {d['wall_ms'] / 1000:.1f} | {n} | {d['wall_ms'] / n:.1f} | {runs:.2f} | "
          f"{o.get('build', 0):.2f} | {o.get('verification', 0):.2f} | {o.get('run_beyond_kernels', 0):.2f} | "
          f"{o.get('other', 0):.2f} | {waited} | {counts} |")
rows = [l.split() for l in open(os.path.join(raw, "recheck.txt")) if len(l.split()) == 3]
if rows:
    print("\nSerial re-measurement (`wstune run --repeat 30`) of the fastest configurations of the last pooled run:\n")
    print("| configuration | tune median ms | re-measured ms | difference |\n|---|---|---|---|")
    worst = 0
    for config, tuned, measured in rows:
        diff = float(measured) / float(tuned) - 1
        worst = max(worst, abs(diff))
        print(f"| {config} | {float(tuned):.4f} | {float(measured):.4f} | {diff * 100:+.1f} % |")
    print(f"\nLargest difference: {worst * 100:.1f} % ({'within' if worst <= 0.03 else 'beyond'} 3 %).")
if finished != "1":
    print(f"\nThe whole space did not finish within this call's {budget} s: run the same command again to resume.")
PY
tail -25 "$md"
