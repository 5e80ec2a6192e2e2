#!/usr/bin/env bash
# Energy beside time on the GPU machine (issue 38): the tiled matmul and the
# 5-point stencil tuned with --objectives time,energy (NVML on the GPU: the
# fastest and the most energy-efficient configuration, their times and
# joules, the Pareto front, and the energy saved at equal time, i.e. within
# 5 % of the fastest time); an energy-aware measured split of the built-in
# matmul over GPU + CPU (and two GPUs + CPU with --gpus 1:0,1:1) by time,
# energy and edp, each run and its joules measured, beside the predicted
# joules of each device alone; wstuned's run mode over the GPU alone and
# over the devices of --gpus with the CPU (joules per job beside the
# makespan, per worker too, or why not measured) and wstuned's tune mode
# with the job objective energy,time on the GPU; the sensors' update period
# and the observer's overhead per trial (its counter reads, against the
# 1 ms bound, in a table of its own; the window of kernel runs it adds is
# reported beside it).
#
# usage: scripts/bench-energy-gpu.sh [--build DIR] [--out DIR] [--tag TAG] [--gpu P:D] [--cpu P:D]
#          [--gpus P:D,P:D] [--evals N] [--matmul SIZE] [--stencil SIZE] [--split-size N] [--daemon-size N]
#          [--parts tune,split,daemon]
# Defaults: --build build, --out docs/results, --tag h100, --gpu 1:0, --cpu 0:0, --evals 40,
# --matmul 1024x1024x1024, --stencil 4096x4096, --split-size 2048, --daemon-size 4096. Writes
# OUT/energy_TAG.md and OUT/energy_TAG_raw/ (every command's JSON and text).
# --parts runs some of the three (default all): a later call with other parts
# adds their raw output to the same OUT and writes the report over all of it
# (the database is cleared only by a call that runs tune).
# On the GPU machine (about 8 minutes on an H100 kind):
#   source .gpu/setup.sh && cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release && cmake --build build-gpu -j16 \
#     && scripts/bench-energy-gpu.sh --build build-gpu --out $OUT
# Nothing here changes clocks or power limits.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build out=docs/results tag=h100 gpu=1:0 cpu=0:0 gpus="" evals=40
mm=1024x1024x1024 st=4096x4096 split_size=2048 daemon_size=4096 parts=tune,split,daemon
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --gpu) gpu=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --gpus) gpus=$2; shift 2 ;;
    --evals) evals=$2; shift 2 ;;
    --matmul) mm=$2; shift 2 ;;
    --stencil) st=$2; shift 2 ;;
    --split-size) split_size=$2; shift 2 ;;
    --daemon-size) daemon_size=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    *) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
W=$build/cli/wstune
raw=$out/energy_${tag}_raw
mkdir -p "$raw"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
db=$raw/energy.db
has() { [[ ",$parts," == *",$1,"* ]]; }
has tune && rm -f "$db"
EX=share/examples/kernels
T=(--repeat 5 --min-time 2 --trial-timeout 60 --strategy random --max-evals "$evals" --db "$db" --no-resume)
run() {  # NAME COMMAND...: stdout into raw/NAME.{json|txt}, stderr into raw/NAME.err
  local name=$1; shift
  echo "[$(date +%T)] $name: $*"
  local t0=$SECONDS
  "$@" >"$raw/$name" 2>"$raw/$name.err"
  echo "  exit $?, $((SECONDS - t0)) s"
}
{
  echo "# sensors"; ls /sys/class/powercap 2>&1 | head; nvidia-smi --query-gpu=name,power.draw,power.limit,clocks.sm --format=csv 2>&1
} >"$raw/sensors.txt"
has tune && run tune-matmul.json "$W" tune --kernel-file $EX/matmul_tiled.json --size "$mm" --device "$gpu" "${T[@]}" \
  --objectives time,energy --json
has tune && run tune-stencil.json "$W" tune --kernel-file $EX/stencil5.json --size "$st" --device "$gpu" "${T[@]}" \
  --objectives time,energy --json
S=(--kernel matmul --size "$split_size" --model measured --local null --run --repeat 5 --json --db "$db")
has split && for devs in "$gpu,$cpu" ${gpus:+"$gpus,$cpu"}; do
  tagd=${devs//[:,]/_}
  for obj in time energy edp; do
    run "split-$tagd-$obj.json" "$W" split --devices "$devs" --objective "$obj" "${S[@]}"
  done
done
# wstuned (issue 38): run mode over the GPU alone (even: the whole job) and
# over --gpus with the CPU (pe-ratio, and measured after a calibration),
# DAEMON_COPIES identical jobs each (the first DAEMON_WARM are warm-ups of
# the measured model and not reported); tune mode with the job objective
# energy,time on the GPU.
. daemon/mpi-launch.sh
if ! has daemon; then
  :
elif wstuned_launcher; then
  copies=${DAEMON_COPIES:-5} warm=${DAEMON_WARM:-2}
  daemon_jobs() {  # MODEL -> a job file: matmul DAEMON_SIZE, COPIES copies, 5 timed runs after one warm-up
    python3 -c 'import json, sys; print(json.dumps({"defaults": {"repetitions": 5, "warmup": 1, "split": sys.argv[1],
      "local": "rule"}, "jobs": [{"kernel": "matmul", "size": sys.argv[2]}] * int(sys.argv[3])}))' "$1" "$daemon_size" "$copies"
  }
  for devs in "$gpu" ${gpus:+"$gpus,$cpu"}; do
    IFS=',' read -ra dl <<<"$devs"
    flags=()
    for i in "${!dl[@]}"; do flags+=(--worker-device "$((i + 1))=${dl[$i]}"); done
    n=$(( ${#dl[@]} + 1 )) tagd=${devs//[:,]/_}
    models="pe-ratio measured"
    [ ${#dl[@]} = 1 ] && models=even
    for m in $models; do
      daemon_jobs "$m" >"$raw/daemon-jobs-$m.json"
      if [ "$m" = measured ]; then
        run "daemon-$tagd-calibrate.json" "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n "$n" "$build/daemon/wstuned" calibrate \
          --job "$raw/daemon-jobs-$m.json" --db "$db" --json "${flags[@]}"
      fi
      run "daemon-$tagd-$m.json" "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n "$n" "$build/daemon/wstuned" run \
        --job "$raw/daemon-jobs-$m.json" --db "$db" --json "${flags[@]}"
    done
  done
  python3 -c 'import json, sys; print(json.dumps({"jobs": [{"kernel_file": sys.argv[1], "size": sys.argv[2],
    "objectives": "energy,time", "max_trials": int(sys.argv[3]), "strategy": "random", "repetitions": 5,
    "retune": True}]}))' "$PWD/$EX/matmul_tiled.json" "$mm" "$evals" >"$raw/daemon-jobs-tune.json"
  run daemon-tune.json "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n 2 "$build/daemon/wstuned" tune \
    --job "$raw/daemon-jobs-tune.json" --db "$db" --json --worker-device "1=$gpu"
else
  echo "no MPI launcher: wstuned not run" >"$raw/daemon-skipped.txt"
fi
python3 - "$raw" "$out/energy_${tag}.md" "$tag" "$mm" "$st" "$split_size" "$*" <<'PY'
import glob, json, os, statistics, sys
raw, md, tag, mm, st, split_size = sys.argv[1:7]
warm = int(os.environ.get("DAEMON_WARM", "2"))
def load(name):
    try:
        return json.load(open(os.path.join(raw, name)))
    except Exception as e:
        return {"error": f"{name}: {e}"}
out = [f"# Energy beside time ({tag})", "",
       "Measured by `scripts/bench-energy-gpu.sh` (raw output in `energy_" + tag + "_raw/`). Energy per kernel run = "
       "the sensor's average power over a window of back-to-back runs x the median kernel time; the window covers "
       "at least 10 of the sensor's update periods (docs/energy.md).", ""]
overhead = []  # (what, sensor, read_ms per observed trial, median window ms)
for name, title, size in (("tune-matmul.json", "tiled matmul", mm), ("tune-stencil.json", "5-point stencil", st)):
    j = load(name)
    out += [f"## {title} {size}", ""]
    if "trials" not in j:
        out += [f"not run: {j.get('error')}", ""]; continue
    ok = [t for t in j["trials"] if t.get("status") == "correct" and "energy" in t.get("metrics", {})]
    out.append(f"sensor: {j.get('energy_sensor') or 'none'} {j.get('energy_note', '')}; {len(j['trials'])} trials, "
               f"{len(ok)} with energy; device {j['device']['name']}")
    if not ok:
        out.append(""); continue
    e0 = ok[0]["energy"]
    out.append(f"resolution {e0['resolution_j']} J, update period {e0['update_period_ms']:.2f} ms, window "
               f"{statistics.median(t['energy']['window_ms'] for t in ok):.1f} ms (median)")
    fast = min(ok, key=lambda t: t["metrics"]["time"])
    eff = min(ok, key=lambda t: t["metrics"]["energy"])
    cfg = lambda t: ",".join(f"{k}={v}" for k, v in t["params"].items()) + f";{t['local']}"
    out += ["", "| | configuration | ms | J per run | W |", "|---|---|---|---|---|"]
    for label, t in (("fastest", fast), ("most efficient", eff)):
        m = t["metrics"]
        out.append(f"| {label} | {cfg(t)} | {m['time']:.4f} | {m['energy']:.5f} | {m['power']:.1f} |")
    front = j.get("front", [])
    out += ["", f"Pareto front (time, energy), {len(front)} configurations:", "", "| configuration | ms | J | W |",
            "|---|---|---|---|"]
    for t in front:
        m = t["metrics"]
        out.append(f"| {cfg(t)} | {m['time']:.4f} | {m['energy']:.5f} | {m.get('power', 0):.1f} |")
    near = [t for t in ok if t["metrics"]["time"] <= 1.05 * fast["metrics"]["time"]]
    best_near = min(near, key=lambda t: t["metrics"]["energy"])
    saving = 1 - best_near["metrics"]["energy"] / fast["metrics"]["energy"]
    out += ["", f"energy saving at equal time (within 5 % of the fastest): {100 * saving:.1f} % "
                f"({cfg(best_near)}: {best_near['metrics']['time']:.4f} ms, {best_near['metrics']['energy']:.5f} J)",
            f"most efficient vs fastest: {100 * (1 - eff['metrics']['energy'] / fast['metrics']['energy']):.1f} % "
            f"fewer joules at {eff['metrics']['time'] / fast['metrics']['time']:.2f}x the time"]
    reads = [t["energy"]["read_ms"] for t in ok]
    overhead.append((f"wstune tune, {title} {size}", j.get("energy_sensor") or "none", reads,
                     statistics.median(t["energy"]["window_ms"] for t in ok)))
    out += [f"observer overhead per trial: see the table 'Observer overhead per trial' below", ""]
out += [f"## energy-aware split: matmul {split_size}", "",
        "| devices | objective | shares % | predicted ms | predicted J | measured makespan ms | measured J per job |",
        "|---|---|---|---|---|---|---|"]
alone_rows = []
for f in sorted(glob.glob(os.path.join(raw, "split-*.json"))):
    name = os.path.basename(f)[6:-5]
    devs, obj = name.rsplit("-", 1)
    j = load(os.path.basename(f))
    if "shares" not in j:
        err = open(f + ".err").read().strip().splitlines()[-1:] if os.path.exists(f + ".err") else []
        out.append(f"| {devs} | {obj} | failed: {' '.join(err)} | | | | |"); continue
    ep = j.get("energy_plan", {})
    ch = ep.get("chosen", {})
    run = j.get("run", {})
    pct = "/".join(f"{s['percent']:.1f}" for s in j["shares"])
    jl = lambda v: f"{v:.3f}" if isinstance(v, (int, float)) else "-"
    out.append(f"| {devs} | {obj} | {pct} | {ch.get('makespan_ms', 0):.3f} | {jl(ch.get('joules'))} | "
               f"{jl(run.get('makespan', {}).get('median_ms'))} | "
               f"{jl(run.get('joules_per_job'))} |")
    if obj == "time":
        for i, a in enumerate(ep.get("alone", [])):
            alone_rows.append(f"| {devs} | device {i} alone | {a['makespan_ms']:.3f} | {jl(a.get('joules'))} |")
        alone_rows.append(f"| {devs} | power (active/idle W) | " + "; ".join(
            f"{p['device_id']} {jl(p.get('active_w'))}/{jl(p.get('idle_w'))}" for p in ep.get("power", [])) + " | |")
out += ["", "Predicted for each device alone (calibration):", "", "| devices | | ms | J |", "|---|---|---|---|"] + alone_rows

def jcell(v):
    return f"{v:.3f}" if isinstance(v, (int, float)) else "not measured"

out += ["", f"## wstuned run mode: matmul (joules per job beside the makespan)", "",
        "Each worker reads its device's sensor from the block's receipt to its reply (input generation, upload, "
        "1 warm-up + 5 timed runs, read-back); the job's joules are the sum over its workers, or not measured "
        "when a worker's device has no readable sensor (the reason is given). Median over the reported jobs "
        f"(the first {warm} of each launch are warm-ups).", "",
        "| devices | model | jobs | makespan ms (median) | J per job (median) | per worker J (last job) | not measured |",
        "|---|---|---|---|---|---|---|"]
for f in sorted(glob.glob(os.path.join(raw, "daemon-*.json"))):
    name = os.path.basename(f)[7:-5]
    if name in ("tune",) or name.endswith("-calibrate") or name.startswith("jobs"):
        continue
    devs, model = name.rsplit("-", 1) if not name.endswith("pe-ratio") else (name[:-len("-pe-ratio")], "pe-ratio")
    j = load(os.path.basename(f))
    if "jobs" not in j:
        err = open(f + ".err").read().strip().splitlines()[-1:] if os.path.exists(f + ".err") else []
        out.append(f"| {devs} | {model} | failed: {j.get('error')} {' '.join(err)} | | | | |"); continue
    jobs = [r for r in j["jobs"][warm:] if r.get("status") == "ok"] or [r for r in j["jobs"] if r.get("status") == "ok"]
    if not jobs:
        out.append(f"| {devs} | {model} | 0 ok | | | | |"); continue
    spans = [r["makespan_ms"] for r in jobs]
    joules = [r["joules"] for r in jobs if isinstance(r.get("joules"), (int, float))]
    last = jobs[-1]
    per = "; ".join(f"r{p['rank']} {p['device'][:24]} {jcell(p.get('joules'))}" for p in last.get("parts", []))
    out.append(f"| {devs} | {model} | {len(jobs)} | {statistics.median(spans):.2f} | "
               f"{statistics.median(joules):.3f} |" if joules else
               f"| {devs} | {model} | {len(jobs)} | {statistics.median(spans):.2f} | not measured |")
    out[-1] += f" {per} | {last.get('joules_note') or '-'} |"
t = load("daemon-tune.json")
out += ["", f"## wstuned tune mode: tiled matmul {mm}, job objectives energy,time", ""]
for w in t.get("jobs", [{}])[0].get("workers", []) if "jobs" in t else []:
    r = w.get("result", {})
    b = r.get("best", {})
    e = b.get("energy") or {}
    out.append(f"rank {w.get('rank')} {w.get('device')}: sensor {r.get('energy_sensor') or 'none'} "
               f"{r.get('energy_note', '')}; {len(r.get('trials', []))} trials; best {b.get('params')} {b.get('local')} "
               f"{b.get('median_ms', 0):.4f} ms, {jcell(e.get('energy_j'))} J per run at {jcell(e.get('power_w'))} W; "
               f"front {len(r.get('front', []))}; objective note: {r.get('objective_note') or '-'}")
    obs = [x["energy"] for x in r.get("trials", []) if x.get("energy")]
    if obs:
        overhead.append((f"wstuned tune, tiled matmul {mm}", r.get("energy_sensor"), [o["read_ms"] for o in obs],
                         statistics.median(o["window_ms"] for o in obs)))
if "jobs" not in t:
    out.append(f"not run: {t.get('error')}")
out += ["", "## Observer overhead per trial", "",
        "The observer's own cost per observed trial: its two counter reads around the observation window "
        "(EnergyMeasurement.read_ms). Bound: under 1 ms. The window's back-to-back kernel runs are measurement, "
        "not overhead, and are shown beside it.", "",
        "| where | sensor | observed trials | read ms median | read ms max | under 1 ms | window ms median |",
        "|---|---|---|---|---|---|---|"]
for what, sensor, reads, window in overhead:
    ok = max(reads) < 1.0
    out.append(f"| {what} | {sensor} | {len(reads)} | {statistics.median(reads):.4f} | {max(reads):.4f} | "
               f"{'yes' if ok else 'NO'} | {window:.0f} |")
if not overhead:
    out.append("| (no trial observed) | | | | | | |")
open(md, "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
