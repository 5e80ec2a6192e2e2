#!/usr/bin/env bash
# The example kernels described by T1 tuning files (share/examples/kernels,
# kernels/*.json) tuned on one device: each example's tuned time against its
# reference configuration (the search's baseline) and against NULL with the
# best parameters, and the tuning wall time per evaluation with the builds.
# Usage: scripts/bench-examples.sh DEVICE TAG [CASE...]
#   CASE: FILE@SIZE@EVALS (paths relative to the project root); default: the
#   PoCL set below. Writes docs/results/examples_TAG.{md,csv} and keeps each
#   run's JSON in docs/results/examples_TAG_raw/.
# Examples:
#   scripts/bench-examples.sh cpu pocl
#   scripts/bench-examples.sh gpu h100 share/examples/kernels/matmul_tiled.json@1024x1024x1024@900 ...
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
device=${1:-default}
tag=${2:-pocl}
shift $(( $# > 2 ? 2 : $# )) || true
. "$here/scripts/bench-common.sh"
wstune_build_targets wstune_cli
W=$build/cli/wstune
out=$here/docs/results
raw=$out/examples_${tag}_raw
rm -rf "$raw" && mkdir -p "$raw"
db=$build/bench-examples-$tag.db
rm -f "$db" "$db-wal" "$db-shm"
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  EX=share/examples/kernels
  cases=("$EX/matmul_tiled.json@256x256x256@200" "$EX/stencil5.json@1024x1024@120" "$EX/reduction.json@4194304@120"
         "$EX/stencil7_3d.json@128x128x128@120" "kernels/matmul.json@512x512x512@60"
         "kernels/bilinear.json@IW=1024,IH=1024,OW=2048,OH=2048@60")
fi
i=0
for c in "${cases[@]}"; do
  IFS=@ read -r file size evals <<<"$c"
  name=$(basename "$file" .json)
  i=$((i + 1))
  echo "== $name $size ($evals evaluations) on $device" >&2
  "$W" tune --kernel-file "$here/$file" --size "$size" --device "$device" --db "$db" --max-evals "$evals" \
    --json >"$raw/$i-$name.json" || echo "wstune tune exited $? (no correct configuration?): see $raw/$i-$name.json" >&2
  # NULL with the best parameters (kernels whose local size is searched).
  cfg=$(python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['best']['params']; print(','.join(f'{k}={str(v).lower() if isinstance(v,bool) else v}' for k,v in p.items()))" "$raw/$i-$name.json")
  if grep -q '"LocalSize": "search"' "$here/$file"; then
    "$W" run --kernel-file "$here/$file" --size "$size" --device "$device" ${cfg:+--config "$cfg"} --local null \
      --repeat 30 --json >"$raw/$i-$name-null.json" 2>/dev/null || echo '{}' >"$raw/$i-$name-null.json"
  else
    echo '{}' >"$raw/$i-$name-null.json"
  fi
done
python3 - "$raw" "$out/examples_$tag" "$device" "$*" <<'PY'
import glob, json, os, sys
raw, stem, device, args = sys.argv[1:5]
rows = []
for f in sorted(glob.glob(os.path.join(raw, "*.json"))):
    if f.endswith("-null.json"):
        continue
    d = json.load(open(f))
    null = json.load(open(f[:-5] + "-null.json"))
    best, base = d["best"], d["baseline"]
    med = lambda t: t["median_ms"] if t and t.get("status") == "correct" else None
    null_ms = null.get("kernel", {}).get("median_ms") if null.get("status") == "correct" else None
    evals = d["evaluations"] + d["tiebreak_trials"]
    compile_ms = [t["compile_ms"] for t in d["trials"] if t["compile_ms"] > 0]
    cfg = " ".join(f"{k}={v}" for k, v in best["params"].items())
    local = best["local"]
    local_txt = "null" if local is None else "x".join(str(local[k]) for k in ("x", "y", "z")[: local["dims"]])
    rows.append(dict(kernel=d["kernel_name"], size=d["size"], device=d["device"]["name"], space=d["space_size"],
                     evaluations=d["evaluations"], best=(cfg + " local=" + local_txt).strip(), best_ms=med(best),
                     baseline_ms=med(base), null_ms=null_ms, wall_s=d["wall_ms"] / 1000,
                     ms_per_eval=d["wall_ms"] / max(1, evals), builds=len(compile_ms),
                     build_ms=sorted(compile_ms)[len(compile_ms) // 2] if compile_ms else None))
fmt = lambda v, s="{:.4f}": "-" if v is None else s.format(v)
ratio = lambda a, b: "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"
with open(stem + ".csv", "w") as c:
    c.write("kernel,size,device,space,evaluations,best,best_ms,baseline_ms,null_best_params_ms,wall_s,ms_per_eval,builds,median_build_ms\n")
    for r in rows:
        c.write(",".join(str(x) for x in (r["kernel"], r["size"], r["device"], r["space"], r["evaluations"],
                                          '"' + r["best"] + '"', r["best_ms"], r["baseline_ms"], r["null_ms"],
                                          f"{r['wall_s']:.1f}", f"{r['ms_per_eval']:.1f}", r["builds"], r["build_ms"])) + "\n")
with open(stem + ".md", "w") as m:
    m.write(f"# Example kernels (T1 tuning files) tuned on {rows[0]['device'] if rows else device}\n\n")
    m.write(f"Command: `scripts/bench-examples.sh {device} {os.path.basename(stem)[9:]} {args}`\n\n")
    m.write("Baseline = the file's reference configuration (NULL local size where the local size is searched); "
            "'NULL, best params' = the best configuration's parameters with the driver's local size. "
            "Per evaluation = tuning wall time / (evaluations + tie-break trials), builds included "
            "(programs of upcoming parameter sets are built several at once).\n\n")
    m.write("| kernel | size | configurations | evaluations | best | best ms | baseline ms | baseline/best | NULL, best params ms | NULL/best | tuning wall s | ms per evaluation | builds | median build ms |\n")
    m.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        m.write(f"| {r['kernel']} | {r['size']} | {r['space']} | {r['evaluations']} | {r['best']} | {fmt(r['best_ms'])} | "
                f"{fmt(r['baseline_ms'])} | {ratio(r['baseline_ms'], r['best_ms'])} | {fmt(r['null_ms'])} | "
                f"{ratio(r['null_ms'], r['best_ms'])} | {r['wall_s']:.1f} | {r['ms_per_eval']:.1f} | {r['builds']} | "
                f"{fmt(r['build_ms'], '{:.0f}')} |\n")
print(open(stem + ".md").read())
PY
