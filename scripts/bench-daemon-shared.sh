#!/usr/bin/env bash
# One search over several devices (issues 14 and 41): wstuned tunes the tiled
# matmul example (share/examples/kernels/matmul_tiled.json) (i) with one GPU
# worker and (ii) with one GPU worker per selector of --gpus (two, four...),
# of one fingerprint, dividing one search (the master hands each
# configuration to one idle worker). Prints both wall times, their ratio
# (ii)/(i) and both bests (ms, and how far apart); with one selector only
# (i) runs. Writes
# writes OUTDIR/daemon_shared.md, OUTDIR/daemon_shared.csv and OUTDIR/raw/
# (job file, JSON reports, stderr, databases).
# Usage: scripts/bench-daemon-shared.sh OUTDIR [--gpus SEL1,SEL2] [--size S] [--strategy S]
#                                       [--max-trials N] [--reps N]
#   --gpus       device selectors of the workers of (ii) (default 1:0,1:1: the two
#                H200s of nvidia-h200-x2; 0:0 is the PoCL CPU there; 1:0,1:1,1:2,1:3
#                on a four-GPU kind); (i) runs on the first
#   --size       matmul_tiled size MxNxK (default 2064x2064x1024: 1,248
#                configurations with the baseline, every one measured)
#   --strategy   search strategy (default exhaustive)
#   --max-trials budget of measured configurations (default 0: the whole space)
#   --reps       timed runs per trial (default 3)
# Both runs measure the same configurations (exhaustive, or a seeded order
# under a budget), each with a fresh database; program caches are off
# (CUDA_CACHE_DISABLE=1, a fresh POCL_CACHE_DIR per run) so the second run
# builds as much as the first. The wall time is the launcher's, registration
# and shutdown included; the report's search wall time is printed beside it.
# GPU machine (Open MPI as root):
#   source .gpu/setup.sh && GPU_SRC=. bash scripts/gpu-all.sh build daemon-shared
# PoCL smoke test (two pthread devices of one fingerprint):
#   POCL_DEVICES="pthread pthread" scripts/bench-daemon-shared.sh /tmp/shared --gpus 0:0,0:1 \
#     --size 16x16x16 --strategy random --max-trials 40
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || { echo "usage: $0 OUTDIR [options] (see the header of $0)" >&2; exit 2; }
outdir=$1; shift
gpus=1:0,1:1; size=2064x2064x1024; strategy=exhaustive; max_trials=0; reps=3
while [ $# -gt 0 ]; do
  case "$1" in
    --gpus) gpus=$2; shift ;;
    --size) size=$2; shift ;;
    --strategy) strategy=$2; shift ;;
    --max-trials) max_trials=$2; shift ;;
    --reps) reps=$2; shift ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
IFS=, read -ra gpu_list <<<"$gpus"
gpu1=${gpu_list[0]:-}
[ -n "$gpu1" ] || { echo "--gpus: give one or more selectors, e.g. 1:0,1:1" >&2; exit 2; }
many=${#gpu_list[@]}
. "$here/scripts/bench-common.sh"
wstune_build_targets wstuned
. "$here/daemon/mpi-launch.sh"
wstuned_launcher
W=$build/daemon/wstuned
mkdir -p "$outdir/raw"
outdir=$(cd "$outdir" && pwd)
raw=$outdir/raw
export CUDA_CACHE_DISABLE=1
# max_trials 0 here means every configuration: the job gets a budget above
# any space (a job's 0 would take the file's own Budget, 5 % of the space).
job_trials=$max_trials
[ "$job_trials" = 0 ] && job_trials=4000000000
cat >"$raw/jobs.json" <<JSON
{"jobs": [{"kernel_file": "$here/share/examples/kernels/matmul_tiled.json", "size": "$size",
           "strategy": "$strategy", "max_trials": $job_trials, "repetitions": $reps, "retune": true}]}
JSON

# run NAME NP WORKER-DEVICE...: one tune session into $raw/NAME.{json,err,db}; sets wall_s.
run() {
  local name=$1 np=$2; shift 2
  rm -f "$raw/$name.db"*
  local cache=$raw/pocl-cache-$name t0 t1
  rm -rf "$cache"
  t0=$(date +%s.%N)
  POCL_CACHE_DIR=$cache "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n "$np" "$W" tune --job "$raw/jobs.json" \
    --db "$raw/$name.db" --json --timeout 3600 "$@" >"$raw/$name.json" 2>"$raw/$name.err" ||
    { echo "$name: wstuned failed (status $?); see $raw/$name.err" >&2; tail -5 "$raw/$name.err" >&2; exit 1; }
  t1=$(date +%s.%N)
  rm -rf "$cache"
  wall_s=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
}
echo "tuning matmul_tiled $size ($strategy, max_trials $max_trials, $reps reps) with $MPI_FLAVOR $MPI_LAUNCHER"
run one 2 --worker-device "1=$gpu1"
wall_one=$wall_s
echo "(i) one worker ($gpu1): ${wall_one} s"
wall_two=0
if [ "$many" -ge 2 ]; then
  flags=()
  for i in "${!gpu_list[@]}"; do flags+=("$((i + 1))=${gpu_list[$i]}"); done
  run two $((many + 1)) --worker-device "${flags[@]}"
  wall_two=$wall_s
  echo "(ii) $many workers ($gpus), one search: ${wall_two} s"
fi

python3 - "$raw" "$outdir" "$wall_one" "$wall_two" "$size" "$strategy" "$max_trials" "$reps" "$gpus" \
  "$MPI_FLAVOR" <<'PY'
import json, sqlite3, sys
raw, outdir, wall_one, wall_two, size, strategy, max_trials, reps, gpus, flavor = sys.argv[1:]
wall = {"one": float(wall_one), "two": float(wall_two)}
names = ("one", "two") if float(wall_two) > 0 else ("one",)
# A local size as the reports' trials write it ({"x":..,"dims":..} or null) in words: "16x8", "null".
local_text = lambda l: "null" if l is None else "x".join(str(l[k]) for k in "xyz"[: l["dims"]])
rows = {}
for name in names:
    text = open(f"{raw}/{name}.json").read()
    doc = json.loads(text[text.index("{"):])
    job = doc["jobs"][0]
    assert job["status"] == "ok", f"{name}: job {job['status']}: {job.get('error')}"
    fps = {w["fingerprint"] for w in job["workers"]}
    assert len(fps) == 1, f"{name}: the workers do not share a fingerprint: {fps}"
    res = job["workers"][0]["result"]
    db = sqlite3.connect(f"{raw}/{name}.db")
    trials, distinct = db.execute("SELECT count(*), count(DISTINCT config) FROM trials").fetchone()
    assert trials == distinct
    measured = sum(res["measured_by_rank"].values())
    best = res["best"]
    rows[name] = dict(workers=len(job["workers"]), devices=", ".join(sorted({w["device"] for w in job["workers"]})),
                      wall_s=wall[name], search_s=res["wall_ms"] / 1000, space=res["space_size"] + 1,
                      measured=measured, stored=trials, by_rank=res["measured_by_rank"],
                      best_ms=best["median_ms"], best=json.dumps(best["params"], sort_keys=True) + " " + local_text(best["local"]))
one = rows["one"]
two = rows.get("two", one)  # one selector: (i) alone, its ratio 1
ratio = two["wall_s"] / one["wall_s"]
search_ratio = two["search_s"] / one["search_s"]
best_diff = abs(two["best_ms"] - one["best_ms"]) / one["best_ms"]
with open(f"{outdir}/daemon_shared.csv", "w") as f:
    f.write("run,workers,wall_s,search_s,configurations,measured,stored_trials,best_ms,best\n")
    for name, r in rows.items():
        f.write(f"{name},{r['workers']},{r['wall_s']:.2f},{r['search_s']:.2f},{r['space']},{r['measured']},"
                f"{r['stored']},{r['best_ms']:.6f},\"{r['best'].replace(chr(34), chr(39))}\"\n")
lines = [
    f"# wstuned: one search over {len(gpus.split(','))} device(s) (matmul_tiled {size})", "",
    f"Strategy {strategy}, max_trials {max_trials} (0: every configuration), {reps} timed runs per trial, "
    f"devices {gpus}, {flavor} launcher; fresh databases, program caches off.", "",
    "| run | workers | wall s | search s | configurations | measured (by rank) | trials stored | best ms | best configuration |",
    "|---|---|---|---|---|---|---|---|---|"]
for name, r in rows.items():
    lines.append(f"| {name} | {r['workers']} ({r['devices']}) | {r['wall_s']:.2f} | {r['search_s']:.2f} | {r['space']} | "
                 f"{r['measured']} {r['by_rank']} | {r['stored']} | {r['best_ms']:.4f} | `{r['best']}` |")
lines += ["", (f"Wall time ratio (ii)/(i): **{ratio:.3f}** (search only: {search_ratio:.3f}); "
               f"bests differ by {100 * best_diff:.2f} %." if "two" in rows else
               "One selector: only (i) ran, no ratio."), ""]
open(f"{outdir}/daemon_shared.md", "w").write("\n".join(lines))
print("\n".join(lines))
PY
