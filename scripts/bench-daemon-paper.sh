#!/usr/bin/env bash
# The paper's comparison (baseline / the paper's method / wstune) through
# wstuned: a master and two unlike workers (MPI ranks), the four kernels.
#   baseline: PE-proportional split along y (2-D kernels), NULL local size (paper §4)
#   paper:    PE-ratio correction split along y (§3.1), §3.2.3 rule local sizes
#   wstune:   measured split (calibration stored first), direction from the
#             kernel's priority, local sizes from the store (each worker's
#             guided tune of the whole problem, run first; rule if none)
# Three daemon sessions into one scratch database: calibrate, tune, run. The
# run session takes, per case, a warm-up job of each method (three for
# wstune's measured split: the second teaches each worker's costs, the third
# runs the plan they give), then --rounds
# rounds of the three methods in an order rotated per round (--reps timed
# runs each); a method's time is the median over rounds of its makespan
# (master: first send to last result) ÷ runs.
# Usage: scripts/bench-daemon-paper.sh [--small] [--tag TAG] [--dev1 SEL] [--dev2 SEL]
#                                      [--reps N] [--rounds N] [--max-trials N]
#   --small  PoCL-sized cases (default: the paper's Table 3 sizes)
# Examples:
#   POCL_DEVICES="basic pthread" scripts/bench-daemon-paper.sh --small --tag pocl --dev1 basic --dev2 pthread
#   scripts/bench-daemon-paper.sh --tag h100-pocl --dev1 gpu --dev2 cpu     # the GPU machine
# Writes docs/results/daemon_paper_<TAG>.{csv,md} and daemon_paper_<TAG>_raw/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
small=0 tag=pocl dev1=gpu dev2=cpu reps=5 rounds=3 max_trials=12
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small=1 ;;
    --tag) tag=$2; shift ;;
    --dev1) dev1=$2; shift ;;
    --dev2) dev2=$2; shift ;;
    --reps) reps=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --max-trials) max_trials=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-daemon-paper.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for v in "$reps" "$rounds" "$max_trials"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "bench-daemon-paper.sh: --reps, --rounds and --max-trials take a positive integer, not '$v'" >&2; exit 2; }
done
. "$here/scripts/bench-common.sh"
wstuned_bench_setup "daemon_paper_${tag}"
if [ "$small" = 1 ]; then
  cases="matmul=128 bilinear=128x128:256x256 sort=16384 trapezoid=65536"
else
  cases="matmul=1024 bilinear=512x512:1024x1024 sort=262144 trapezoid=262144"
fi

python3 - "$raw" "$reps" "$rounds" "$max_trials" $cases <<'PY'
import json, os, sys
raw, reps, rounds, max_trials, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
methods = {
    "baseline": {"split": "proportional", "direction": "y", "local": "null"},
    "paper": {"split": "pe-ratio", "direction": "y", "local": "rule"},
    "wstune": {"split": "measured", "direction": "auto", "local": "stored"},
}
base = [{"kernel": c.split("=", 1)[0], "size": c.split("=", 1)[1]} for c in cases]
json.dump({"defaults": {"repetitions": 3, "local": "null"}, "jobs": base},
          open(os.path.join(raw, "jobs_calibrate.json"), "w"), indent=1)
json.dump({"defaults": {"repetitions": 3, "max_trials": max_trials}, "jobs": base},
          open(os.path.join(raw, "jobs_tune.json"), "w"), indent=1)
def job(b, m, repetitions):
    j = dict(b, **methods[m], repetitions=repetitions)
    if b["kernel"] in ("sort", "trapezoid"):  # 1-D NDRanges: the only direction is x
        j["direction"] = "auto"
    return j
jobs, plan = [], []
names = list(methods)
for b in base:
    for m in names:
        # the warm-up runs as many times as the reported jobs: the measured split plans for the
        # job's runs (wstuned), so it then runs the same blocks (PoCL compiles per block shape)
        # the measured split: WSTUNED_MEASURED_WARMUPS (bench-common.sh says why)
        for _ in range(int(os.environ["WSTUNED_MEASURED_WARMUPS"]) if methods[m].get("split") == "measured" else 1):
            jobs.append(job(b, m, reps)); plan.append({"method": m, "round": -1})
    for r in range(rounds):
        for i in range(len(names)):
            m = names[(i + r) % len(names)]
            jobs.append(job(b, m, reps)); plan.append({"method": m, "round": r})
json.dump({"jobs": jobs}, open(os.path.join(raw, "jobs_run.json"), "w"), indent=1)
json.dump(plan, open(os.path.join(raw, "plan.json"), "w"), indent=1)
PY

run_session() {  # NAME (also the wstuned mode) [wstuned options...]
  local name=$1; shift
  echo "== $name" >&2
  "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n 3 "$W" "$name" --job "$raw/jobs_$name.json" --db "$db" --json \
    --worker-device "1=$dev1" "2=$dev2" "$@" </dev/null >"$raw/$name.json" 2>"$raw/$name.err" || {
    echo "bench-daemon-paper.sh: the $name session exited with $? (see $raw/$name.err)" >&2; return 1; }
}
run_session calibrate
run_session tune
run_session run

python3 - "$raw" "$out" "$tag" "$reps" "$rounds" "$max_trials" "$MPI_FLAVOR" <<'PY'
import json, os, statistics, sys
raw, out, tag, reps, rounds, max_trials, flavor = sys.argv[1:8]
def load(name):
    text = open(os.path.join(raw, name + ".json")).read()
    return json.loads(text[text.index("{"):])
run = load("run")
plan = json.load(open(os.path.join(raw, "plan.json")))
jobs = run["jobs"]
if len(jobs) != len(plan):
    sys.exit(f"run.json has {len(jobs)} jobs, the plan {len(plan)}")
workers = {w["rank"]: (w.get("device") or {}).get("name", "?") for w in run.get("workers", [])}
cases, per = [], {}
for j, p in zip(jobs, plan):
    key = (j["job"]["kernel"], j["size"])
    if key not in cases:
        cases.append(key)
    if p["round"] < 0:
        continue
    cell = per.setdefault(key, {}).setdefault(p["method"], {"ms": [], "status": [], "shares": "", "locals": ""})
    cell["status"].append(j["status"])
    if j["status"] == "ok" and j.get("verified", False):
        cell["ms"].append(j["makespan_ms"] / max(1, j["job"]["repetitions"]))
        cell["shares"] = "/".join(f"{100 * p_['share']:.1f}" for p_ in j["parts"])
        cell["locals"] = ", ".join(f"{p_['local']} ({p_['local_source']})" for p_ in j["parts"])
rows = []
for key in cases:
    row = {"kernel": key[0], "size": key[1]}
    for m in ("baseline", "paper", "wstune"):
        c = per.get(key, {}).get(m, {"ms": [], "status": ["missing"], "shares": "", "locals": ""})
        row[m] = statistics.median(c["ms"]) if c["ms"] else None
        row[m + "_ok"] = f"{len(c['ms'])}/{len(c['status'])}"
        row[m + "_shares"], row[m + "_locals"] = c["shares"], c["locals"]
    red = lambda m: 100 * (row["baseline"] - row[m]) / row["baseline"] if row["baseline"] and row[m] else None
    row["paper_red"], row["wstune_red"] = red("paper"), red("wstune")
    row["wstune_over_paper"] = row["wstune"] / row["paper"] if row["wstune"] and row["paper"] else None
    rows.append(row)
cols = ["kernel", "size", "baseline", "paper", "wstune", "paper_red", "wstune_red", "wstune_over_paper",
        "baseline_ok", "paper_ok", "wstune_ok", "baseline_shares", "paper_shares", "wstune_shares",
        "paper_locals", "wstune_locals"]
fmt = lambda v: "" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
stem = os.path.join(out, f"daemon_paper_{tag}")
with open(stem + ".csv", "w") as f:
    f.write(",".join(cols) + "\n")
    for r in rows:
        f.write(",".join(fmt(r[c]).replace(",", ";") for c in cols) + "\n")
def mean(ms, key):
    v = [r[key] for r in rows if r["kernel"] in ms and r[key] is not None]
    return sum(v) / len(v) if v else None
with open(stem + ".md", "w") as f:
    f.write(f"# The paper's comparison through wstuned ({tag})\n\n")
    f.write(f"Workers: rank 1 = {workers.get(1, '?')}, rank 2 = {workers.get(2, '?')}; launcher: {flavor}. "
            "Methods: **baseline** = PE-proportional split along y + NULL local size; **paper** = PE-ratio "
            "correction split along y + §3.2.3 rule local sizes; **wstune** = measured split (calibrated first) "
            f"with the direction from the kernel's priority + local sizes from the store (each worker's guided "
            f"tune of the whole problem, {max_trials} trials, run first; the rule where nothing is stored). "
            f"Time per run: the master's makespan (first send to last result: MPI transfers, upload, {reps} "
            f"kernel runs, read-back) ÷ {reps}, median over {rounds} rounds with the three methods rotated; each "
            "method had an unreported warm-up job first (wstune three: the second teaches each worker's "
            "costs, the third runs the plan they give). Reduction = (baseline − method) ÷ baseline. Every "
            "result verified by the master against its CPU reference (`ok` = verified rounds / rounds).\n\n")
    f.write("| kernel | size | baseline ms | paper ms | wstune ms | paper reduction % | wstune reduction % | "
            "wstune ÷ paper | ok b/p/w | shares % b / p / w | local sizes paper | local sizes wstune |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    pct = lambda v: "–" if v is None else f"{v:+.1f}"
    for r in rows:
        f.write(f"| {r['kernel']} | {r['size']} | {fmt(r['baseline'])} | {fmt(r['paper'])} | {fmt(r['wstune'])} | "
                f"{pct(r['paper_red'])} | {pct(r['wstune_red'])} | {fmt(r['wstune_over_paper'])} | "
                f"{r['baseline_ok']} / {r['paper_ok']} / {r['wstune_ok']} | {r['baseline_shares']} / "
                f"{r['paper_shares']} / {r['wstune_shares']} | {r['paper_locals']} | {r['wstune_locals']} |\n")
    three = ("matmul", "sort", "trapezoid")
    f.write("\n| cases | paper % | wstune % | the paper reports |\n|---|---|---|---|\n")
    f.write(f"| matmul, sort, trapezoid | {pct(mean(three, 'paper_red'))} | {pct(mean(three, 'wstune_red'))} | 47 |\n")
    allk = ("matmul", "bilinear", "sort", "trapezoid")
    f.write(f"| all four | {pct(mean(allk, 'paper_red'))} | {pct(mean(allk, 'wstune_red'))} | 11 |\n")
    f.write(f"| bilinear | {pct(mean(('bilinear',), 'paper_red'))} | {pct(mean(('bilinear',), 'wstune_red'))} | "
            "−85 (time +85 %) |\n")
    n_ok = sum(1 for r in rows if r["wstune_over_paper"] is not None and r["wstune_over_paper"] <= 1.0)
    f.write(f"\nwstune at least as fast as the paper's method: {n_ok} of {len(rows)} cases. Raw reports: "
            f"daemon_paper_{tag}_raw/ (calibrate, tune, run JSON; the plan of the run session).\n")
print(open(stem + ".md").read())
PY
echo "wrote docs/results/daemon_paper_${tag}.csv and .md" >&2
