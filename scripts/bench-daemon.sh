#!/usr/bin/env bash
# wstuned benchmark: two unlike workers under MPI, the four kernels, every
# split model against the best single worker, and the daemon's overhead
# (makespan − the slowest worker's kernel + transfer time: MPI in, upload,
# read-back, MPI out), within a time budget.
# Usage: scripts/bench-daemon.sh [--small] [--tag TAG] [--dev1 SEL] [--dev2 SEL] [--reps N]
#                                [--cell-s S] [--budget-s S] [--calibrate-budget-ms MS]
#   --small     PoCL-sized problems (default: the paper's Table 3 sizes, 4× their
#               work, and matmul 4096 for the overhead figure)
#   --dev1/--dev2  device selectors of the two workers (P:D, gpu, cpu or a name substring)
#   --reps N    timed runs of a reported job (10); long cells get fewer (below)
#   --cell-s S  what one cell (one split model, or one worker alone, on one case:
#               a warm-up run + the timed runs) may take, as predicted (20 s)
#   --budget-s S  the whole script, build check and calibration included (480 s)
#   --calibrate-budget-ms MS  wstuned's per-slice calibration cap (250 ms)
# Environment: WSTUNE_DAEMON_CASES ("kernel=size ...") and WSTUNE_DAEMON_MODELS
# ("even proportional pe-ratio measured") narrow the run.
# Examples:
#   POCL_DEVICES="basic pthread" scripts/bench-daemon.sh --small --tag pocl --dev1 basic --dev2 pthread
#   scripts/bench-daemon.sh --tag h100-pocl --dev1 gpu --dev2 cpu        # the GPU machine
# How it stays in the budget:
#   1. calibrate every case on both workers (capped by --calibrate-budget-ms:
#      seconds per case even for a CPU that needs 20 s for one matmul 4096);
#   2. predict every cell from the calibrations (each worker's whole-problem
#      time × its share under the model) and plan: a cell whose warm-up + one
#      run is predicted over --cell-s is left out (the even model on the
#      largest matmul; a worker alone when the other is faster), the others
#      get min(--reps, what fits in --cell-s) runs; --cell-s is halved until
#      the plan fits the budget. The plan and its estimate are printed;
#   3. run three daemon sessions (split models; worker 1 alone; worker 2
#      alone), each with a watchdog: past its share of the budget it sends
#      SIGINT to the master (--pid-file), which reports and keeps what finished.
# Writes docs/results/daemon_<TAG>.csv, daemon_<TAG>.md and daemon_<TAG>_raw/
# (plan, job files, JSON reports, stderr logs).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
small=0; tag=pocl; dev1=gpu; dev2=cpu; reps=10; cell_s=20; budget_s=480; cal_ms=250
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small=1 ;;
    --tag) tag=$2; shift ;;
    --dev1) dev1=$2; shift ;;
    --dev2) dev2=$2; shift ;;
    --reps) reps=$2; shift ;;
    --cell-s) cell_s=$2; shift ;;
    --budget-s) budget_s=$2; shift ;;
    --calibrate-budget-ms) cal_ms=$2; shift ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
start=$SECONDS
. "$here/scripts/bench-common.sh"
wstuned_bench_setup "daemon_${tag}"

if [ "$small" = 1 ]; then
  cases="matmul=128 matmul=256 bilinear=128x128:256x256 bilinear=256x256:512x512 sort=16384 sort=65536 trapezoid=65536 trapezoid=262144"
else
  # Table 3 sizes, 4× their work (matmul M and N doubled, as bench-paper.sh),
  # and matmul 4096 for the overhead figure.
  cases="matmul=1024 matmul=2048x2048x1024 matmul=4096 bilinear=512x512:1024x1024 bilinear=1024x1024:2048x2048 sort=262144 sort=1048576 trapezoid=262144 trapezoid=1048576"
fi
[ -n "${WSTUNE_DAEMON_CASES:-}" ] && cases=$WSTUNE_DAEMON_CASES
models=${WSTUNE_DAEMON_MODELS:-}
[ -n "$models" ] || models="even proportional pe-ratio measured"

# session NAME LIMIT_S NP JOBS TIMEOUT_S [wstuned options...]: one daemon
# session (wstuned calibrate for NAME calibrate, else wstuned run) into $raw/NAME.json (stderr: NAME.err) under a watchdog that stops
# the master with SIGINT after LIMIT_S seconds (it then shuts the workers
# down within 10 s, reports what finished and exits 130); the launcher is
# killed if it is still there 20 s later. Appends "NAME limit wall status" to sessions.txt.
session() {
  local name=$1 limit=$2 np=$3 jobs=$4 timeout=$5; shift 5
  local pidf=$raw/$name.pid t0=$SECONDS stopped=0 killed=0 rc=0 mode=run
  if [ "$name" = calibrate ]; then mode=calibrate; fi
  "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n "$np" "$W" "$mode" --job "$jobs" --db "$db" --json \
    --timeout "$timeout" --pid-file "$pidf" "$@" </dev/null >"$raw/$name.json" 2>"$raw/$name.err" &
  local launcher=$!
  while kill -0 "$launcher" 2>/dev/null; do
    if [ "$stopped" = 0 ] && [ $((SECONDS - t0)) -ge "$limit" ] && [ -s "$pidf" ]; then
      echo "   $name: past its ${limit} s: SIGINT to the master (what finished is kept)"
      kill -INT "$(cat "$pidf")" 2>/dev/null || true
      stopped=$SECONDS
    fi
    if [ "$stopped" != 0 ] && [ "$killed" = 0 ] && [ $((SECONDS - stopped)) -ge 20 ]; then
      echo "   $name: still running 20 s after SIGINT: killing the launcher"
      kill -TERM "$launcher" 2>/dev/null || true
      killed=1
    fi
    sleep 1
  done
  wait "$launcher" || rc=$?
  echo "$name $limit $((SECONDS - t0)) $rc" >>"$raw/sessions.txt"
  echo "   $name: $((SECONDS - t0)) s, exit status $rc"
}

echo "== calibrate: every case on both workers (cap ${cal_ms} ms per slice)"
python3 - "$raw/jobs_cal.json" $cases <<'PY'
import json, sys
jobs = [{"kernel": c.split("=", 1)[0], "size": c.split("=", 1)[1]} for c in sys.argv[2:]]
json.dump({"defaults": {"repetitions": 3, "local": "null"}, "jobs": jobs}, open(sys.argv[1], "w"), indent=1)
PY
session calibrate 150 3 "$raw/jobs_cal.json" 300 --calibrate-budget-ms "$cal_ms" \
  --worker-device "1=$dev1" "2=$dev2"

echo "== plan"
left=$((budget_s - (SECONDS - start)))
python3 - "$raw" "$reps" "$cell_s" "$left" "$models" $cases <<'PY'
import json, math, os, sys
raw, reps, cell_s, left, models, cases = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5].split(), sys.argv[6:]
text = open(os.path.join(raw, "calibrate.json")).read()
cal = json.loads(text[text.index("{"):]) if "{" in text else {"jobs": [], "workers": []}
pe = {w["rank"]: (w["device"] or {}).get("total_pe", 1) for w in cal.get("workers", [])}
names = {w["rank"]: (w["device"] or {}).get("name", "?") for w in cal.get("workers", [])}
full = {}   # (kernel, size) -> {rank: predicted ms of the whole problem alone}
for j in cal.get("jobs", []):
    for w in j.get("workers", []):
        full.setdefault((j["job"]["kernel"], j["job"]["size"]), {})[w["rank"]] = w["result"].get("full_ms")

def dims(kernel, size):
    return [int(x) for x in size.replace(":", "x").split("x")]

def job_overhead_s(kernel, size):
    """Inputs generated by the master, sent, the output returned (≈ 1e8 floats/s for each)."""
    d = dims(kernel, size)
    if kernel == "matmul":
        m, n, k = (d * 3)[:3] if len(d) == 1 else d
        floats = m * k + k * n + m * n
    elif kernel == "bilinear":
        floats = d[0] * d[1] + (d[2] * d[3] if len(d) == 4 else 4 * d[0] * d[1])
    else:
        floats = 2 * d[0]
    return 0.05 + 2 * floats / 1e8

def reference_s(kernel, size):
    """The master's CPU reference, once per case and session (threads over the host's cores)."""
    if kernel != "matmul":
        return 0.05
    d = dims(kernel, size)
    m, n, k = (d * 3)[:3] if len(d) == 1 else d
    return m * n * k / (2e9 * max(1, os.cpu_count() or 1))

def shares(model, t):
    if model == "even":
        return {1: 0.5, 2: 0.5}
    if model in ("proportional", "pe-ratio"):  # pe-ratio ≈ proportional, for an estimate
        s = pe.get(1, 1) + pe.get(2, 1)
        return {1: pe.get(1, 1) / s, 2: pe.get(2, 1) / s}
    inv = {r: 1 / max(t[r], 1e-6) for r in (1, 2)}  # measured: both finish together
    return {r: inv[r] / sum(inv.values()) for r in (1, 2)}

def warm_reps(model, reps):
    # The measured model plans for the job's runs (wstuned's for_kernel_runs): its warm-up
    # job runs as many, so it runs the reported job's blocks (PoCL compiles per block shape).
    return reps if model == "measured" else 1

def plan(cell_s):
    cells = []
    for c in cases:
        k, s = c.split("=", 1)
        t = {r: (full.get((k, s), {}).get(r) or 0) / 1000 for r in (1, 2)}
        known = all(t[r] > 0 for r in (1, 2))
        entries = [("run", m, None) for m in models] + [(f"single_{r}", "even", r) for r in (1, 2)]
        for sess, model, alone in entries:
            cell = {"session": sess, "kernel": k, "size": s, "model": model, "worker": alone}
            if not known:
                cell.update(per_run_s=None, reps=reps, skip=None)
            else:
                per = t[alone] if alone else max(shares(model, t)[r] * t[r] for r in (1, 2))
                fits = math.floor(cell_s / per) - 1 if per > 0 else reps
                skip = None
                if fits < 1:
                    if alone is None:
                        skip = f"predicted {per:.1f} s per run: a warm-up and one run exceed --cell-s {cell_s:g}"
                    elif t[alone] > t[3 - alone]:
                        skip = (f"predicted {per:.1f} s alone, worker {3 - alone} {t[3 - alone]:.2f} s: "
                                f"the best single worker is the other")
                cell.update(per_run_s=per, reps=max(1, min(reps, fits)), skip=skip)
            oh = job_overhead_s(k, s)
            cell["warm_reps"] = warm_reps(model, cell["reps"])
            cell["est_s"] = 0 if cell["skip"] else ((cell["per_run_s"] or 0) * (cell["warm_reps"] + cell["reps"]) + 2 * oh)
            cells.append(cell)
    est = {}
    for sess in ["run", "single_1", "single_2"]:
        mine = [c for c in cells if c["session"] == sess and not c["skip"]]
        refs = sum(reference_s(k, s) for k, s in {(c["kernel"], c["size"]) for c in mine})
        est[sess] = (5 + sum(c["est_s"] for c in mine) + refs) if mine else 0
    return cells, est

cells, est = plan(cell_s)
while sum(est.values()) > left - 20 and cell_s > 0.5:
    cell_s /= 2
    cells, est = plan(cell_s)

sessions = {}
for sess in est:
    warm, timed = [], []
    for c in cells:
        if c["session"] != sess or c["skip"]:
            continue
        job = {"kernel": c["kernel"], "size": c["size"], "split": c["model"]}
        # measured: WSTUNED_MEASURED_WARMUPS (bench-common.sh says why)
        for _ in range(int(os.environ["WSTUNED_MEASURED_WARMUPS"]) if c["model"] == "measured" else 1):
            warm.append(dict(job, repetitions=c["warm_reps"]))
        timed.append(dict(job, repetitions=c["reps"]))
    # per case: the warm-up pass over its cells (programs built, PoCL's
    # compile per block shape done), then the reported jobs
    jobs, plan_jobs = [], []
    for c in cases:
        k, s = c.split("=", 1)
        w = [j for j in warm if (j["kernel"], j["size"]) == (k, s)]
        r = [j for j in timed if (j["kernel"], j["size"]) == (k, s)]
        jobs += w + r
        plan_jobs += [dict(j, warmup=True) for j in w] + [dict(j, warmup=False) for j in r]
    longest = max([c["per_run_s"] * (c["warm_reps"] + c["reps"]) for c in cells
                   if c["session"] == sess and not c["skip"] and c["per_run_s"]] or [0])
    sessions[sess] = {"est_s": est[sess], "jobs": plan_jobs, "timeout_s": int(max(120, 5 * longest + 60))}
    json.dump({"defaults": {"local": "null"}, "jobs": jobs}, open(os.path.join(raw, f"jobs_{sess}.json"), "w"), indent=1)
# Session limits: twice the estimate + 30 s, within what is left after the
# later sessions' estimates.
remaining = left - 10
order = ["run", "single_1", "single_2"]
for i, sess in enumerate(order):
    later = sum(sessions[o]["est_s"] for o in order[i + 1:])
    sessions[sess]["limit_s"] = int(max(30, min(2 * sessions[sess]["est_s"] + 30, remaining - later)))
    remaining -= sessions[sess]["est_s"]
doc = {"cell_s": cell_s, "reps": reps, "budget_left_s": left, "workers": names, "cells": cells, "sessions": sessions,
       "estimate_s": sum(est.values())}
json.dump(doc, open(os.path.join(raw, "plan.json"), "w"), indent=1)
with open(os.path.join(raw, "limits.txt"), "w") as f:
    for sess in order:
        f.write(f"{sess} {sessions[sess]['limit_s']} {sessions[sess]['timeout_s']} {len(sessions[sess]['jobs'])}\n")
print(f"   workers: 1 = {names.get(1, '?')}, 2 = {names.get(2, '?')}; --cell-s {cell_s:g}")
for c in cells:
    who = f"worker {c['worker']} alone" if c["worker"] else c["model"]
    per = "?" if c["per_run_s"] is None else f"{c['per_run_s'] * 1000:.1f} ms/run"
    what = f"skipped: {c['skip']}" if c["skip"] else f"{c['reps']} runs + warm-up, ≈ {c['est_s']:.1f} s"
    print(f"   {c['kernel']} {c['size']} {who}: {per}, {what}")
print(f"   estimate: {sum(est.values()):.0f} s more (" + ", ".join(f"{s} {est[s]:.0f} s" for s in order)
      + f"), {left:.0f} s of the budget left")
PY

while read -r name limit timeout njobs; do
  if [ "$njobs" = 0 ]; then echo "== $name: nothing planned"; continue; fi
  case "$name" in
    run) echo "== run: split models $models ($njobs jobs)"; np=3; devs=("1=$dev1" "2=$dev2") ;;
    single_1) echo "== worker 1 alone ($dev1, $njobs jobs)"; np=2; devs=("1=$dev1") ;;
    single_2) echo "== worker 2 alone ($dev2, $njobs jobs)"; np=2; devs=("1=$dev2") ;;
  esac
  session "$name" "$limit" "$np" "$raw/jobs_$name.json" "$timeout" --worker-device "${devs[@]}"
done <"$raw/limits.txt"
rm -f "$raw"/*.pid

python3 - "$raw" "$out/daemon_$tag" "$tag" "$MPI_FLAVOR" "$((SECONDS - start))" "$budget_s" <<'PY'
import json, os, sys
raw, stem, tag, flavor, took, budget = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
plan = json.load(open(os.path.join(raw, "plan.json")))
sess_info = {}
for line in open(os.path.join(raw, "sessions.txt")):
    name, limit, wall, rc = line.split()
    sess_info[name] = {"limit": int(limit), "wall": int(wall), "rc": int(rc)}

def report(name):
    """Reported (not warm-up) jobs of a session keyed by (kernel, size, model), via the plan's job list."""
    path = os.path.join(raw, f"{name}.json")
    if not os.path.exists(path):
        return {}
    text = open(path).read()
    if "{" not in text:
        return {}
    doc = json.loads(text[text.index("{"):])
    planned = plan["sessions"][name]["jobs"]
    got = {}
    for j in doc["jobs"]:
        p = planned[j["id"] - 1]
        if not p["warmup"]:
            got[(p["kernel"], p["size"], p["split"])] = j
    return got

run = report("run")
single = {}
for w in (1, 2):
    got = report(f"single_{w}")
    for (k, s, _), j in got.items():
        if j["status"] == "ok":
            single.setdefault((k, s), {})[w] = j["makespan_ms"]
rows = []
for c in plan["cells"]:
    if c["session"] != "run":
        continue
    k, s, model = c["kernel"], c["size"], c["model"]
    j = run.get((k, s, model))
    alone = single.get((k, s), {})
    best = min(alone.values(), default=None)
    note = ""
    skipped_alone = [x for x in plan["cells"] if x["session"].startswith("single") and x["kernel"] == k
                     and x["size"] == s and x["skip"]]
    if skipped_alone:
        note = "; ".join(f"worker {x['worker']} alone not run ({x['per_run_s']:.1f} s/run predicted)" for x in skipped_alone)
    ok = j is not None and j["status"] == "ok"
    parts = j.get("parts", []) if j else []
    slowest = max((p["kernel_ms"] + p["transfer_ms"] for p in parts), default=0)
    status = j["status"] if j else ("skipped" if c["skip"] else "not run (session stopped)")
    if c["skip"]:
        note = (c["skip"] + ("; " + note if note else ""))
    rows.append({
        "kernel": k, "size": s, "model": model, "status": status, "reps": c["reps"] if not c["skip"] else "",
        "makespan_ms": j["makespan_ms"] if ok else None,
        "slowest_worker_ms": slowest if ok else None,
        "overhead_ms": j["overhead_ms"] if ok else None,
        "overhead_pct": 100 * j["overhead_ms"] / j["makespan_ms"] if ok and j["makespan_ms"] > 0 else None,
        "shares_pct": "/".join(f"{100*p['share']:.1f}" for p in parts),
        "worker1_alone_ms": alone.get(1), "worker2_alone_ms": alone.get(2),
        "best_single_ms": best,
        "speedup_vs_best_single": best / j["makespan_ms"] if ok and best else None,
        "verified": j.get("verified", False) if j else False,
        "note": note,
    })
cols = list(rows[0].keys()) if rows else []
fmt = lambda v: "" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
with open(stem + ".csv", "w") as f:
    f.write(",".join(cols) + "\n")
    for r in rows:
        f.write(",".join(fmt(r[c]).replace(",", ";") for c in cols) + "\n")
names = plan["workers"]
with open(stem + ".md", "w") as f:
    f.write(f"# wstuned: split models vs the best single worker ({tag})\n\n")
    f.write(f"Workers: rank 1 = {names.get('1', '?')}, rank 2 = {names.get('2', '?')}; launcher: {flavor}. "
            "Makespan: master's wall clock from the first send to the last result (MPI transfer of the "
            "slices, upload, kernel repetitions, read-back, MPI return). Overhead = makespan − the slowest "
            "worker's (Σ kernel + MPI receive of its slice + upload + read-back + MPI return of its result; "
            "upload and read-back as wall clock, host staging of pageable memory included, never less than "
            "their profiling events; the return as the master's receive time). Each cell: a warm-up job (1 run; as many runs as the "
            "reported job for the measured model, which plans for the job's runs, so that the warm-up runs the same blocks: "
            "programs built, PoCL's compile per block shape done; three for the measured model: the second teaches each "
            "worker's costs, the third runs the plan they give) before the reported job of `reps` timed runs, local size "
            "NULL, one sample per cell. Cells and run counts come from the plan below "
            "(calibration-predicted times; see docs/daemon.md, Benchmark).\n\n")
    f.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
    for r in rows:
        f.write("| " + " | ".join(fmt(r[c]) for c in cols) + " |\n")
    mm = [r for r in rows if r["kernel"] == "matmul" and r["overhead_pct"] is not None]
    if mm:
        def work(size):  # M·N·K of a matmul size ("N" or "MxNxK")
            d = [int(x) for x in size.split("x")]
            return d[0] ** 3 if len(d) == 1 else d[0] * d[1] * d[2]
        big = max(mm, key=lambda r: work(r["size"]))["size"]
        f.write(f"\n## Daemon overhead at the largest matmul ({big})\n\n")
        for r in (r for r in mm if r["size"] == big):
            f.write(f"- {r['model']}: {r['overhead_ms']:.1f} ms of {r['makespan_ms']:.1f} ms = "
                    f"**{r['overhead_pct']:.1f} %** (target ≤ 5 % at matmul 4096)\n")
    f.write(f"\n## Plan and sessions\n\nBudget {budget} s, used {took} s (build check, calibration, plan, "
            f"sessions). Plan: --cell-s {plan['cell_s']:g}, --reps {plan['reps']}, estimate "
            f"{plan['estimate_s']:.0f} s after calibrating.\n\n| session | estimate s | limit s | wall s | exit |\n|---|---|---|---|---|\n")
    for name, info in sess_info.items():
        e = plan["sessions"].get(name, {}).get("est_s")
        f.write(f"| {name} | {'' if e is None else f'{e:.0f}'} | {info['limit']} | {info['wall']} | "
                f"{info['rc']}{' (stopped by the watchdog)' if info['rc'] == 130 else ''} |\n")
    skipped = [c for c in plan["cells"] if c["skip"]]
    if skipped:
        f.write("\nCells left out by the plan:\n\n")
        for c in skipped:
            who = f"worker {c['worker']} alone" if c["worker"] else c["model"]
            f.write(f"- {c['kernel']} {c['size']} {who}: {c['skip']}\n")
print(f"wrote {stem}.csv and {stem}.md ({took} s)")
PY
