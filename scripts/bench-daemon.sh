#!/usr/bin/env bash
# wstuned benchmark: two unlike workers under MPI, the four kernels, every
# split model against the best single worker, and the daemon's overhead
# (makespan − the slowest worker's kernel + transfer time).
# Usage: scripts/bench-daemon.sh [--small] [--tag TAG] [--dev1 SEL] [--dev2 SEL] [--reps N]
#   --small   PoCL-sized problems (default: the paper's Table 3 sizes, 4× larger, and matmul 4096)
#   --dev1/--dev2  device selectors of the two workers (P:D, gpu, cpu or a name substring)
# Examples:
#   POCL_DEVICES="basic pthread" scripts/bench-daemon.sh --small --tag pocl --dev1 basic --dev2 pthread
#   scripts/bench-daemon.sh --tag h100-pocl --dev1 gpu --dev2 cpu        # the GPU machine
# Writes docs/results/daemon_<TAG>.csv, daemon_<TAG>.md and daemon_<TAG>_raw/*.json.
# All split models run in one daemon session after an unreported warm-up pass
# per case (programs built, PoCL's compile per block shape done).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
small=0; tag=pocl; dev1=gpu; dev2=cpu; reps=10
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small=1 ;;
    --tag) tag=$2; shift ;;
    --dev1) dev1=$2; shift ;;
    --dev2) dev2=$2; shift ;;
    --reps) reps=$2; shift ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
. "$here/scripts/bench-common.sh"
wstune_build_targets wstuned
. "$here/daemon/mpi-launch.sh"
wstuned_launcher
W=$build/daemon/wstuned
out=$here/docs/results
raw=$out/daemon_${tag}_raw
mkdir -p "$raw"
db=$build/bench-daemon-$tag.db   # scratch database, not a result
rm -f "$db" "$db-wal" "$db-shm"

if [ "$small" = 1 ]; then
  cases="matmul=128 matmul=256 bilinear=128x128:256x256 bilinear=256x256:512x512 sort=16384 sort=65536 trapezoid=65536 trapezoid=262144"
else
  cases="matmul=1024 matmul=2048 matmul=4096 bilinear=512x512:1024x1024 bilinear=1024x1024:2048x2048 sort=262144 sort=1048576 trapezoid=262144 trapezoid=1048576"
fi

# jobs_file FILE MODEL...: per case a warm-up pass over the models (not
# reported: programs built, PoCL's compile per block shape done), then one
# job per model.
jobs_file() {
  local file=$1; shift
  python3 - "$reps" "$*" $cases > "$file" <<'PY'
import json, sys
reps, models, cases = int(sys.argv[1]), sys.argv[2].split(), sys.argv[3:]
jobs = []
for c in cases:
    k, s = c.split("=", 1)
    jobs += [{"kernel": k, "size": s, "split": m, "seed": 1} for m in models]  # warm-up pass
    jobs += [{"kernel": k, "size": s, "split": m} for m in models]
print(json.dumps({"defaults": {"repetitions": reps, "local": "null"}, "jobs": jobs}))
PY
}

# WSTUNE_DAEMON_CASES / WSTUNE_DAEMON_MODELS narrow the run (e.g. leave out
# the measured model, whose calibration of a CPU worker at matmul 4096 takes
# minutes).
[ -n "${WSTUNE_DAEMON_CASES:-}" ] && cases=$WSTUNE_DAEMON_CASES
models=${WSTUNE_DAEMON_MODELS:-}
[ -n "$models" ] || models="even proportional pe-ratio measured"
common=(--db "$db" --json --quiet --timeout 3600)
if [[ " $models " == *" measured "* ]]; then
  echo "== calibrate (for the measured model)"
  jobs_file "$raw/jobs_cal.json" even
  "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n 3 "$W" calibrate --job "$raw/jobs_cal.json" "${common[@]}" -r 3 \
    --worker-device "1=$dev1" "2=$dev2" > "$raw/calibrate.json"
fi
echo "== run: split models $models, one daemon session"
jobs_file "$raw/jobs_run.json" $models
"$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n 3 "$W" run --job "$raw/jobs_run.json" "${common[@]}" \
  --worker-device "1=$dev1" "2=$dev2" > "$raw/run.json"
for w in 1 2; do
  sel=$dev1; [ "$w" = 2 ] && sel=$dev2
  echo "== single worker $sel"
  jobs_file "$raw/jobs_single.json" even
  "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n 2 "$W" run --job "$raw/jobs_single.json" "${common[@]}" \
    --worker-device "1=$sel" > "$raw/single_$w.json"
done

python3 - "$raw" "$out/daemon_$tag" "$tag" "$MPI_FLAVOR" <<'PY'
import json, sys, os
raw, stem, tag, flavor = sys.argv[1:]
def reported(path):
    """Jobs of a report keyed by (kernel, size, model), warm-ups (seed 1) left out."""
    doc = json.load(open(path))
    return doc, {(j["job"]["kernel"], j["size"], j["job"]["split"]): j
                 for j in doc["jobs"] if j["job"]["seed"] != 1}
single = {}
names = {}
for w in (1, 2):
    doc, got = reported(os.path.join(raw, f"single_{w}.json"))
    names[w] = doc["workers"][0]["device"]["name"] if doc["workers"][0]["device"] else "?"
    for (k, s, _), j in got.items():
        if j["status"] == "ok":
            single.setdefault((k, s), {})[w] = j["makespan_ms"]
rows = []
doc, got = reported(os.path.join(raw, "run.json"))
for (k, s, model), j in got.items():
    best = min(single.get((k, s), {}).values(), default=None)
    ok = j["status"] == "ok"
    shares = "/".join(f"{100*p['share']:.1f}" for p in j.get("parts", []))
    slowest = max((p["kernel_ms"] + p["transfer_ms"] for p in j.get("parts", [])), default=0)
    rows.append({
        "kernel": k, "size": s, "model": model, "status": j["status"],
        "makespan_ms": j["makespan_ms"] if ok else None,
        "slowest_worker_ms": slowest if ok else None,
        "overhead_ms": j["overhead_ms"] if ok else None,
        "overhead_pct": 100 * j["overhead_ms"] / j["makespan_ms"] if ok and j["makespan_ms"] > 0 else None,
        "shares_pct": shares,
        "best_single_ms": best,
        "speedup_vs_best_single": best / j["makespan_ms"] if ok and best else None,
        "verified": j.get("verified", False),
    })
order = {"matmul": 0, "bilinear": 1, "sort": 2, "trapezoid": 3}
models = {"even": 0, "proportional": 1, "pe-ratio": 2, "measured": 3}  # order of the table
rows.sort(key=lambda r: (order[r["kernel"]], len(r["size"]), r["size"], models[r["model"]]))
cols = list(rows[0].keys())
fmt = lambda v: "" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
with open(stem + ".csv", "w") as f:
    f.write(",".join(cols) + "\n")
    for r in rows:
        f.write(",".join(fmt(r[c]) for c in cols) + "\n")
with open(stem + ".md", "w") as f:
    f.write(f"# wstuned: split models vs the best single worker ({tag})\n\n")
    f.write(f"Workers: rank 1 = {names[1]}, rank 2 = {names[2]}; launcher: {flavor}. "
            "Makespan: master's wall clock from the first send to the last result (MPI transfer of the "
            "slices, upload, kernel repetitions, read-back, MPI return). Overhead = makespan − the slowest "
            "worker's (Σ kernel + MPI receive + h2d + d2h). Warm runs (after an unreported warm-up pass over the models), "
            "local size NULL. "
            "One run per cell, single sample: PoCL noise is 2–3×.\n\n")
    f.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
    for r in rows:
        f.write("| " + " | ".join(fmt(r[c]) for c in cols) + " |\n")
print(f"wrote {stem}.csv and {stem}.md")
PY
