#!/usr/bin/env bash
# Issue 15's showcase: the tiled matmul example (share/examples/kernels/
# matmul_tiled.json) tuned by wstune at each size within budgets of a
# fraction of its space, next to CLBlast's SGEMM measured in the same run
# (bench_clblast). Reports TFLOP/s (2·N³ / kernel time) and the ratio to
# CLBlast, and the tuning wall time of each budget.
# Usage: scripts/bench-showcase.sh DEVICE TAG [N:FRACTION[:SECONDS]...]
#   FRACTION of the space's configurations (1 = exhaustive); SECONDS bounds a
#   run (--time-limit; 0 = none). Default: 1024:0.01 1024:0.05 4096:0.01
#   EXHAUSTIVE_TABLE=NAME: a run with FRACTION 1 also exports its table to
#   bench/tables/NAME.json.gz (simulation mode's input).
#   SHOWCASE_REPORT_ONLY=1: only rewrite the report from the raw files.
#   SHOWCASE_APPEND=1: keep the earlier runs' raw files and add these runs to
#   the report (CLBlast is measured again for every size in it).
# Writes docs/results/showcase_TAG.{md,csv} and the raw JSON in
# docs/results/showcase_TAG_raw/ (commands.txt: the command of each run
# there); docs/results/showcase_TAG_notes.md, where present, is appended to
# the report.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
device=${1:?usage: $0 DEVICE TAG [N:FRACTION[:SECONDS]...]}
tag=${2:?usage: $0 DEVICE TAG [N:FRACTION[:SECONDS]...]}
shift 2
. "$here/scripts/bench-common.sh"
wstune_build_targets wstune_cli
W=$build/cli/wstune
file=$here/share/examples/kernels/matmul_tiled.json
raw=$here/docs/results/showcase_${tag}_raw
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(1024:0.01 1024:0.05 4096:0.01)
cmd="scripts/bench-showcase.sh $device $tag ${runs[*]}"
if [ "${SHOWCASE_REPORT_ONLY:-0}" != 1 ]; then
i=0
if [ "${SHOWCASE_APPEND:-0}" = 1 ] && [ -d "$raw" ]; then
  cmd="SHOWCASE_APPEND=1 $cmd"
  # after the runs there: numbered on, and their sizes measured with CLBlast again
  earlier=$(find "$raw" -name '*-*-*.json' -printf '%f\n')  # I-N-FRACTION.json
  i=$(cut -d- -f1 <<<"$earlier" | sort -n | tail -1)
  i=${i:-0}
  old_sizes=$(cut -d- -f2 <<<"$earlier")
else
  rm -rf "$raw" && mkdir -p "$raw"
  old_sizes=
fi
echo "$cmd" >>"$raw/commands.txt"
sizes=$( (printf '%s\n' "${runs[@]}" | cut -d: -f1; printf '%s\n' $old_sizes) | grep . | sort -un | paste -sd, -)
# CLBlast's SGEMM first (its own tuned database inside libclblast).
if cmake --build "$build" --target bench_clblast -j "$(nproc)" >/dev/null 2>&1; then
  "$build/bench/bench_clblast" --device "$device" --sizes "$sizes" --out "$raw" >"$raw/clblast.log" 2>&1 ||
    echo "bench_clblast failed: see $raw/clblast.log" >&2
else
  echo "bench_clblast not built (no libclblast-dev): no CLBlast column" >&2
fi
for r in "${runs[@]}"; do
  IFS=: read -r n frac secs <<<"$r"
  i=$((i + 1))
  size=${n}x${n}x${n}
  space=$("$W" tune --kernel-file "$file" --size "$size" --device "$device" --max-evals 1 --no-store --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["space_size"])')
  if [ "$frac" = 1 ]; then
    strategy=exhaustive evals=100000000
  else
    strategy=auto evals=$(python3 -c "import math,sys; print(max(1, math.ceil($space * $frac)))")
  fi
  db=$build/showcase-$tag-$i.db
  rm -f "$db" "$db-wal" "$db-shm"
  echo "== matmul_tiled $size: $strategy, $evals of $space configurations, limit ${secs:-0} s" >&2
  "$W" tune --kernel-file "$file" --size "$size" --device "$device" --strategy "$strategy" --max-evals "$evals" \
    --time-limit "${secs:-0}" --db "$db" --no-resume --json >"$raw/$i-$n-$frac.json" || true
  if [ "$frac" = 1 ] && [ -n "${EXHAUSTIVE_TABLE:-}" ]; then
    "$W" export --db "$db" "$build/table.json" && gzip -9 -c "$build/table.json" >"$here/bench/tables/$EXHAUSTIVE_TABLE.json.gz"
  fi
done
fi
python3 - "$raw" "$here/docs/results/showcase_$tag" "$device" "$cmd" <<'PY'
import csv, glob, json, os, re, sys
raw, stem, device, cmd = sys.argv[1:5]
if os.path.exists(os.path.join(raw, "commands.txt")):
    cmd = "`, then `".join(l.strip() for l in open(os.path.join(raw, "commands.txt")) if l.strip())
# CLBlast's GEMM time: its last kernel's profiling event (as wstune times its
# own kernels) where that kernel is the GEMM, else the wall time of Gemm +
# clFinish (at some sizes CLBlast's last kernel is a small copy kernel).
wall, event = {}, {}
for f in glob.glob(os.path.join(raw, "peers_clblast*.csv")):
    for row in csv.DictReader(open(f)):
        if row["tool"] == "clblast" and row["status"] == "ok":
            (event if "profiling" in row["variant"] else wall)[int(row["n"])] = float(row["median_ms"])
clblast = {n: event[n] if event.get(n, 0) >= 0.5 * w else w for n, w in wall.items()}
clblast_how = {n: "kernel event" if event.get(n, 0) >= 0.5 * w else "wall" for n, w in wall.items()}
rows = []
for f in sorted(glob.glob(os.path.join(raw, "*-*-*.json")), key=lambda p: int(os.path.basename(p).split("-")[0])):
    try:
        d = json.load(open(f))
    except ValueError:
        continue
    n = int(d["size"].split("x")[0])
    frac = os.path.basename(f)[:-5].split("-", 2)[2]
    best = d["best"]
    ms = best["median_ms"] if best.get("status") == "correct" else None
    tflops = 2 * n**3 / (ms * 1e-3) / 1e12 if ms else None
    cb = clblast.get(n)
    rows.append(dict(n=n, fraction=frac, strategy=d["strategy"], space=d["space_size"], evaluations=d["evaluations"],
                     stop=d["stop_reason"], clblast_timing=clblast_how.get(n, "-"), best=" ".join(f"{k}={v}" for k, v in best["params"].items()), best_ms=ms,
                     tflops=tflops, clblast_ms=cb, clblast_tflops=2 * n**3 / (cb * 1e-3) / 1e12 if cb else None,
                     wall_s=d["wall_ms"] / 1000, baseline_ms=d["baseline"]["median_ms"]
                     if d["baseline"].get("status") == "correct" else None))
f4 = lambda v, s="{:.4f}": "-" if v is None else s.format(v)
with open(stem + ".csv", "w") as c:
    w = csv.DictWriter(c, fieldnames=list(rows[0].keys()) if rows else ["n"])
    w.writeheader()
    w.writerows(rows)
with open(stem + ".md", "w") as m:
    m.write(f"# Tiled matmul tuned by wstune against CLBlast SGEMM ({device})\n\nCommand: `{cmd}`\n\n")
    m.write("TFLOP/s = 2·N³ / kernel median (profiling events). CLBlast: SGEMM through libclblast (its shipped "
            "tuned database), its GEMM kernel's profiling-event time, same device, same run (bench_clblast). Budget = fraction of the space's configurations "
            "(1 = exhaustive); tuning wall time includes program builds and verification. CLBlast timing 'wall' "
            "(Gemm + clFinish) is used where CLBlast's last kernel event is not its GEMM (under half the wall time): "
            "it favours wstune slightly (launch overhead).\n\n")
    m.write("| N | budget | strategy | evaluations / space | stop | best configuration | best ms | TFLOP/s | CLBlast ms (timing) | CLBlast TFLOP/s | CLBlast / wstune time | tuning wall s |\n")
    m.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        ratio = "-" if not (r["best_ms"] and r["clblast_ms"]) else f"{r['clblast_ms'] / r['best_ms']:.2f}x"
        m.write(f"| {r['n']} | {r['fraction']} | {r['strategy']} | {r['evaluations']} / {r['space']} | {r['stop']} | "
                f"{r['best']} | {f4(r['best_ms'])} | {f4(r['tflops'], '{:.1f}')} | {f4(r['clblast_ms'])} ({r['clblast_timing']}) | "
                f"{f4(r['clblast_tflops'], '{:.1f}')} | {ratio} | {r['wall_s']:.1f} |\n")
    if os.path.exists(stem + "_notes.md"):
        m.write("\n" + open(stem + "_notes.md").read())
print(open(stem + ".md").read())
PY
