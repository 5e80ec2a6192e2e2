#!/usr/bin/env bash
# Warm vs cold start of a search at sizes never tuned (issue 39), and the
# best-kernel example app's first vs second start (programs compiled, wall
# time), from stored bests and with online tuning (--tune-online).
# For each kernel (the tiled matmul and the 5-point stencil example tuning
# files): tunes the "train" sizes into one database; then at each "new" size
# runs a reference search (cold, in a database of its own) to learn that
# size's best, and the bounded strategy twice from copies of the train
# database: --cold, and warm (the default: stored bests of the train sizes
# seed the first proposals). Reports the evaluations and seconds (summed
# trial wall times, in measured order) until a configuration within 3 % of
# the size's best known median (the fastest of every run at that size).
# Usage: scripts/bench-warm-start.sh [DEVICE] [TAG]
#   DEVICE: P:D, cpu, gpu or a name substring (default: default). TAG names
#   the results: docs/results/warm_start_TAG.{md,csv}, raw JSON in
#   docs/results/warm_start_TAG_raw/.
# Environment (defaults fit about 6 minutes of an H100; SCALE=tiny: PoCL):
#   SCALE=h100|tiny   size sets (h100: matmul 1024^3/2048^3 -> 1536^3, 2048x2048x1024;
#                     stencil 1024^2/4096^2 -> 2048^2, 3000^2; tiny: 64..256)
#   STRATEGY=random   the bounded strategy compared warm vs cold (random, genetic, annealing, ...)
#   REF_EVALS=60      evaluations of each train and reference search (strategy REF_STRATEGY=random)
#   RUN_EVALS=25      evaluations of each warm and cold search
#   SEEDS="1"         search seeds of the warm and cold runs (one run pair per seed)
# Lead (H100, 16 cores, recipe /work/shared/gpu/README.md):
#   scripts/bench-warm-start.sh gpu h100
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
device=${1:-default}
tag=${2:-pocl}
scale=${SCALE:-h100}
strategy=${STRATEGY:-random}
ref_strategy=${REF_STRATEGY:-random}
ref_evals=${REF_EVALS:-60}
run_evals=${RUN_EVALS:-25}
seeds=${SEEDS:-1}
. "$here/scripts/bench-common.sh"
wstune_build_targets wstune_cli wstune wstune_static wstuned  # all that cmake --install installs
W=$build/cli/wstune
ex=$here/share/examples/kernels
out=$here/docs/results
raw=$out/warm_start_${tag}_raw
rm -rf "$raw"
mkdir -p "$raw"
work=$build/bench-warm-start
rm -rf "$work"
mkdir -p "$work"

if [ "$scale" = tiny ]; then
  matmul_train="64x64x64 256x256x256"; matmul_new="128x128x128 256x128x128"
  stencil_train="64x64 256x256"; stencil_new="128x128 200x200"
else
  matmul_train="1024x1024x1024 2048x2048x2048"; matmul_new="1536x1536x1536 2048x2048x1024"
  stencil_train="1024x1024 4096x4096"; stencil_new="2048x2048 3000x3000"
fi

tune() {  # FILE SIZE DB OUT [options...]
  local file=$1 size=$2 db=$3 json=$4
  shift 4
  "$W" tune --kernel-file "$file" --size "$size" --device "$device" --db "$db" --json "$@" >"$json" 2>"${json%.json}.err" ||
    echo "warning: tune $file $size $* exited $?" >&2
}

started=$(date +%s)
for kernel in matmul_tiled stencil5; do
  file=$ex/$kernel.json
  if [ $kernel = matmul_tiled ]; then train=$matmul_train; new=$matmul_new; else train=$stencil_train; new=$stencil_new; fi
  train_db=$work/${kernel}_train.db
  for size in $train; do
    echo "== $kernel train $size" >&2
    tune "$file" "$size" "$train_db" "$raw/${kernel}_train_${size}.json" --cold --strategy "$ref_strategy" \
      --max-evals "$ref_evals"
  done
  for size in $new; do
    echo "== $kernel reference $size" >&2
    tune "$file" "$size" "$work/${kernel}_ref_${size}.db" "$raw/${kernel}_ref_${size}.json" --cold \
      --strategy "$ref_strategy" --max-evals "$ref_evals"
    for seed in $seeds; do
      for mode in cold warm; do
        echo "== $kernel $mode $size seed $seed" >&2
        db=$work/${kernel}_${mode}_${size}_${seed}.db
        cp "$train_db" "$db"
        flag=()
        [ $mode = cold ] && flag=(--cold)
        tune "$file" "$size" "$db" "$raw/${kernel}_${mode}_${size}_${seed}.json" "${flag[@]}" --strategy "$strategy" \
          --seed "$seed" --max-evals "$run_evals"
      done
    done
  done
done

# The example app: builds the best stencil kernel for the new and train
# sizes from the stencil's warm database, twice (two processes, first and
# second start, a fresh program binary cache folder for the app): the level,
# whether each program was compiled, the process's programs compiled from
# source and loaded from the cache, and each start's wall time. Then, from
# another copy of the train database, --tune-online at a size nobody tuned:
# the first start tunes it (level online, at most 8 configurations and 5 s)
# and the second answers exact without compiling.
echo "== example app" >&2
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$here/examples/best_kernel" -B "$work/app" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/app" -j "$(nproc)" >/dev/null
if [ "$scale" = tiny ]; then online_size=96x160; else online_size=2500x1500; fi
app_start() {  # NAME DB [app arguments...]: one start, its output and wall time in $raw/app_NAME.txt
  local name=$1 db=$2 t0 t1
  shift 2
  t0=$(date +%s.%N)
  WSTUNE_DB=$db WSTUNE_CACHE_DIR=$work/app-programs LD_LIBRARY_PATH=$(echo "$prefix"/lib*)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$work/app/best_kernel" "$@" \
    >"$raw/app_${name}.txt" 2>&1 || echo "warning: app $name start failed" >&2
  t1=$(date +%s.%N)
  echo "wall: $(python3 -c "print(f'{$t1 - $t0:.3f}')") s" >>"$raw/app_${name}.txt"
}
rm -rf "$work/app-programs"
cp "$work/stencil5_train.db" "$work/app.db"
cp "$work/stencil5_train.db" "$work/app_online.db"
# shellcheck disable=SC2086
for start in first second; do
  app_start "$start" "$work/app.db" "$ex/stencil5.json" $stencil_new $stencil_train
done
for start in first second; do
  app_start "online_$start" "$work/app_online.db" --tune-online "$ex/stencil5.json" "$online_size"
done
elapsed=$(($(date +%s) - started))

python3 - "$raw" "$out/warm_start_${tag}" "$strategy" "$run_evals" "$ref_evals" "$elapsed" "$device" <<'PY'
import json, glob, os, re, sys
raw, stem, strategy, run_evals, ref_evals, elapsed, device = sys.argv[1:]
runs = {}
for path in sorted(glob.glob(os.path.join(raw, "*.json"))):
    name = os.path.basename(path)[:-5]
    try:
        runs[name] = json.load(open(path))
    except Exception:
        pass
def medians(r):
    return [t["median_ms"] for t in r.get("trials", []) if t.get("median_ms")]
rows = []
for name, r in sorted(runs.items()):
    m = re.match(r"(matmul_tiled|stencil5)_(cold|warm)_(.+)_(\d+)$", name)
    if not m:
        continue
    kernel, mode, size, seed = m.groups()
    same = [v for k, v in runs.items() if k.startswith(f"{kernel}_") and (k.endswith(f"_{size}") or f"_{size}_" in k)]
    best = min(x for v in same for x in medians(v))
    evals, secs, reached = 0, 0.0, None
    for t in r.get("trials", []):
        evals += 1
        secs += (t.get("wall_ms") or 0) / 1000
        if t.get("median_ms") and t["median_ms"] <= 1.03 * best:
            reached = (evals, secs)
            break
    seeds = r.get("warm_start", [])
    rows.append(dict(kernel=kernel, size=size, seed=seed, mode=mode, best_ms=best,
                     run_best_ms=min(medians(r)) if medians(r) else None,
                     evals_to_3pct=reached[0] if reached else None,
                     seconds_to_3pct=round(reached[1], 3) if reached else None,
                     evaluations=r.get("evaluations"), wall_s=round(r.get("wall_ms", 0) / 1000, 2),
                     seeds=len(seeds), seed_sources=" ".join(f"{s['from']}:{s['size']}" for s in seeds)))
cols = ["kernel", "size", "seed", "mode", "best_ms", "run_best_ms", "evals_to_3pct", "seconds_to_3pct",
        "evaluations", "wall_s", "seeds", "seed_sources"]
with open(stem + ".csv", "w") as f:
    f.write(",".join(cols) + "\n")
    for r in rows:
        f.write(",".join("" if r[c] is None else str(r[c]) for c in cols) + "\n")
def app(start):
    p = os.path.join(raw, f"app_{start}.txt")
    return open(p).read().strip() if os.path.exists(p) else "(missing)"
def compile_total(text):
    return sum(float(x) for x in re.findall(r"(?<!not )compiled \(([0-9.]+) ms\)", text))
def load_total(text):
    return sum(float(x) for x in re.findall(r"not compiled \(([0-9.]+) ms\)", text))
def counts(text):
    m = re.search(r"programs compiled from source: (\d+), loaded from the binary cache: (\d+)", text)
    return m.groups() if m else ("?", "?")
def wall(text):
    m = re.search(r"wall: ([0-9.]+) s", text)
    return m.group(1) if m else "?"
with open(stem + ".md", "w") as f:
    f.write(f"# Warm vs cold start ({os.path.basename(stem)})\n\n")
    f.write(f"Device selector `{device}`; strategy `{strategy}`, {run_evals} evaluations per warm/cold run; "
            f"reference and train searches `random`, {ref_evals} evaluations; whole script {elapsed} s.\n")
    f.write("Best known = the fastest median of every run at that size. \"evals\" and \"s\" = evaluations "
            "and summed trial wall seconds (measured order, the baseline first) until a configuration within "
            "3 % of it; \"-\" = not reached within the budget.\n\n")
    f.write("| kernel | size | seed | mode | best known ms | run best ms | evals to 3 % | s to 3 % | seeds (from) |\n")
    f.write("|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        fmt = lambda v, p=4: "-" if v is None else (f"{v:.{p}f}" if isinstance(v, float) else str(v))
        f.write(f"| {r['kernel']} | {r['size']} | {r['seed']} | {r['mode']} | {fmt(r['best_ms'])} | "
                f"{fmt(r['run_best_ms'])} | {fmt(r['evals_to_3pct'])} | {fmt(r['seconds_to_3pct'], 2)} | "
                f"{r['seeds']} ({r['seed_sources'] or '-'}) |\n")
    f.write("\n## Example app (examples/best_kernel): first and second start\n\n")
    f.write("A fresh program binary cache folder (WSTUNE_CACHE_DIR) for the app. \"chain\": the stencil's "
            "warm database, new and train sizes; \"online\": `--tune-online` at a size nobody tuned "
            "(the first start tunes it; its compiled programs are the tuning's trials). ms = the app's own builds (build_best's clBuildProgram). Wall = the whole process, OpenCL set-up included.\n\n")
    f.write("| run | start | compiled from source | loaded from the cache | ms compiling | ms loading binaries | wall s |\n")
    f.write("|---|---|---|---|---|---|---|\n")
    for run, prefix in (("chain", ""), ("online", "online_")):
        for start in ("first", "second"):
            text = app(prefix + start)
            c, b = counts(text)
            f.write(f"| {run} | {start} | {c} | {b} | {compile_total(text):.1f} | {load_total(text):.1f} | {wall(text)} |\n")
    f.write("\n")
    for run, prefix in (("chain", ""), ("online", "online_")):
        for start in ("first", "second"):
            f.write(f"{run}, {start} start:\n\n```\n{app(prefix + start)}\n```\n\n")
print(open(stem + ".md").read())
PY
