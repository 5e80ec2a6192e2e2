#!/usr/bin/env bash
# wstuned over worker sets of one machine (issue 18's table): per set of
# devices and split model, each case as the measured model's warm-up jobs
# (WSTUNED_MEASURED_WARMUPS, three; bench-common.sh says why) and REPORTED
# jobs after them in one wstuned launch, REPS timed runs after a warm-up run
# each. Each cell is the median of the reported jobs (issue 18's five
# repetitions), with their range. The makespan and the daemon's overhead
# (makespan less the slowest worker's kernel and transfer time, wstuned's
# overhead_ms) come from the JSON reports.
# Usage: scripts/bench-daemon-gpus.sh OUTDIR [SETS [CASES [REPS]]]
#   SETS   NAME=SEL,SEL,...;... (default "gpu=1:0;2gpu=1:0,1:1;2gpu+cpu=1:0,1:1,0:0")
#   CASES  KERNEL SIZE;... (default issue 18's four: "matmul 4096;bilinear
#          2048x2048:4096x4096;sort 4194304;trapezoid 16777216")
#   REPS   timed runs per job (5)
# Environment:
#   LOCAL     the job key `local` (default "rule", the paper's §3.2.3 rule;
#             "null" leaves it to the driver)
#   REPORTED  the jobs per case after the warm-ups, reported as their median
#             (default 5)
#   RESULTS   the job key `results` to run each model with (default "auto";
#             "auto message" runs both, side by side in one launch each, the
#             message ones reported as MODEL-message)
# Writes OUTDIR/daemon_gpus.csv, OUTDIR/daemon_gpus.md, the reports
# OUTDIR/raw/SET_MODEL.json and the command in OUTDIR/daemon_gpus.md.
# Models: one device runs "even" (the whole job), more run pe-ratio and
# measured (calibrated first, wstuned calibrate, into the set's database).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=$1
sets=${2:-"gpu=1:0;2gpu=1:0,1:1;2gpu+cpu=1:0,1:1,0:0"}
cases=${3:-"matmul 4096;bilinear 2048x2048:4096x4096;sort 4194304;trapezoid 16777216"}
reps=${4:-5}
reported=${REPORTED:-5}
cmdline="scripts/bench-daemon-gpus.sh $*"
. "$here/scripts/bench-common.sh"
wstune_build_targets wstuned
. "$here/daemon/mpi-launch.sh"
wstuned_launcher
mkdir -p "$out/raw"
results_modes=${RESULTS:-auto}
jobs_file() {  # MODEL [COPIES [RESULTS]] -> a job file with every case COPIES (the warm-ups + REPORTED) times
  python3 - "$1" "$cases" "$reps" "${2:-$((WSTUNED_MEASURED_WARMUPS + reported))}" "${3:-auto}" <<'PY'
import json, os, sys
model, cases, reps, copies, results = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
jobs = []
for c in cases.split(";"):
    kernel, size = c.split()
    jobs += [{"kernel": kernel, "size": size}] * copies
defaults = {"repetitions": reps, "warmup": 1, "split": model, "local": os.environ.get("LOCAL", "rule")}
if results != "auto":
    defaults["results"] = results
print(json.dumps({"defaults": defaults, "jobs": jobs}))
PY
}
IFS=';' read -ra set_list <<<"$sets"
for s in "${set_list[@]}"; do
  name=${s%%=*} devs=${s#*=}
  IFS=',' read -ra dl <<<"$devs"
  flags=()
  for i in "${!dl[@]}"; do flags+=(--worker-device "$((i + 1))=${dl[$i]}"); done
  n=$(( ${#dl[@]} + 1 ))
  db=$out/raw/$name.db
  rm -f "$db"
  models="pe-ratio measured"
  [ ${#dl[@]} = 1 ] && models=even
  for m in $models; do
    if [ "$m" = measured ]; then  # each case calibrated once
      jobs_file "$m" 1 >"$out/raw/jobs-calibrate.json"
      "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n "$n" "$build/daemon/wstuned" calibrate --job "$out/raw/jobs-calibrate.json" \
        --db "$db" --json "${flags[@]}" >"$out/raw/${name}_calibrate.json" 2>"$out/raw/${name}_calibrate.err"
    fi
    for r in $results_modes; do
      tag=$m
      [ "$r" = auto ] || tag=$m-$r
      jobs_file "$m" "" "$r" >"$out/raw/jobs-$tag.json"
      t0=$SECONDS
      "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n "$n" "$build/daemon/wstuned" run --job "$out/raw/jobs-$tag.json" \
        --db "$db" --json "${flags[@]}" >"$out/raw/${name}_$tag.json" 2>"$out/raw/${name}_$tag.err" ||
        echo "$name $tag: wstuned exit $? (see $out/raw/${name}_$tag.err)" >&2
      echo "$name ($devs) $tag: $((SECONDS - t0)) s" >&2
    done
  done
done
REPORTED=$reported LOCAL=${LOCAL:-rule} python3 - "$out" "$sets" "$cmdline" <<'PY'
import csv, glob, json, os, statistics, sys
warm = int(os.environ["WSTUNED_MEASURED_WARMUPS"])  # every model gets the measured model's warm-ups
reported = int(os.environ["REPORTED"])
out, sets, cmdline = sys.argv[1], sys.argv[2], sys.argv[3]


def cell(name, devs, model, runs):
    """One row: the median job of a case's reported runs, with their range."""
    ok = [j for j in runs if j["status"] == "ok" and j.get("makespan_ms")]
    pick = sorted(ok, key=lambda j: j["makespan_ms"])[(len(ok) - 1) // 2] if ok else runs[-1]  # median_low's job
    spans = [j["makespan_ms"] for j in ok]
    over = [100 * j.get("overhead_ms", 0) / j["makespan_ms"] for j in ok]
    parts = runs[-1].get("parts", [])
    return {"set": name, "devices": devs, "model": model, "kernel": pick["job"]["kernel"], "size": pick["size"],
            "status": ("ok" if len(ok) == len(runs) else f"{len(runs) - len(ok)} of {len(runs)} failed")
                      + ("" if len(runs) == reported else f" ({len(runs)} of {reported} jobs reported)"),
            "verified": all(j.get("verified") for j in runs), "jobs": len(ok),
            "makespan_ms": round(pick["makespan_ms"], 3) if ok else 0,
            "makespan_min_ms": round(min(spans), 3) if spans else 0, "makespan_max_ms": round(max(spans), 3) if spans else 0,
            "overhead_ms": round(pick.get("overhead_ms", 0), 3),
            "overhead_pct": round(statistics.median_low(over), 1) if over else "",
            "shares": "/".join(f'{100 * p.get("share", 0):.1f}' for p in parts),
            "chunks": "/".join(str(p.get("chunks", 1)) for p in parts),
            "results": "/".join(p.get("result_path", "message") for p in parts),
            "return_ms": "/".join(f'{p.get("return_ms", 0):.2f}' for p in parts)}


rows = []
for s in sets.split(";"):
    name, devs = s.split("=", 1)
    for path in sorted(glob.glob(f"{out}/raw/{name}_*.json")):
        model = os.path.basename(path)[len(name) + 1:-5]
        if model == "calibrate":
            continue
        try:
            jobs = json.load(open(path))["jobs"]
        except (ValueError, KeyError):
            continue
        per_case = warm + reported
        for c in range(0, len(jobs), per_case):  # each case's copies are consecutive
            runs = jobs[c + warm:c + per_case]
            if runs:
                rows.append(cell(name, devs, model, runs))
with open(f"{out}/daemon_gpus.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["set"])
    w.writeheader()
    w.writerows(rows)
one = {(r["kernel"], r["size"]): r["makespan_ms"] for r in rows if r["set"] == sets.split(";")[0].split("=")[0]}
with open(f"{out}/daemon_gpus.md", "w") as f:
    f.write(f"# wstuned over worker sets\n\nCommand: `{cmdline}`\n\n")
    f.write(f"Local sizes: `{os.environ.get('LOCAL', 'rule')}`. Per case {warm + reported} identical jobs in one wstuned launch: {warm} warm-ups, then {reported} reported. "
            "Makespan: the master's first send to last result of a job (its timed runs after one warm-up run), the "
            "median of the reported jobs [their range]; overhead: makespan less the slowest worker's kernel and transfer "
            "time (wstuned's overhead_ms), of the median job, and its share of the makespan, the median over the "
            "reported jobs (medians of an even count: the lower middle). Speed-up: the first set's median against this one's. Shares, chunks and result paths: "
            "the last job.\n\n")
    f.write("| set | devices | model | kernel | size | status | makespan ms [range] | overhead ms | overhead % | speed-up | shares % | chunks | results | return ms |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        base = one.get((r["kernel"], r["size"]))
        sp = f'{base / r["makespan_ms"]:.2f}x' if base and r["makespan_ms"] else ""
        ok = r["status"] + ("" if r["verified"] else " (not verified)")
        f.write(f'| {r["set"]} | {r["devices"]} | {r["model"]} | {r["kernel"]} | {r["size"]} | {ok} | '
                f'{r["makespan_ms"]} [{r["makespan_min_ms"]}–{r["makespan_max_ms"]}] | {r["overhead_ms"]} | '
                f'{r["overhead_pct"]} | {sp} | {r["shares"]} | {r["chunks"]} | {r["results"]} | {r["return_ms"]} |\n')
print(open(f"{out}/daemon_gpus.md").read())
PY
