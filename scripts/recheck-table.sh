#!/usr/bin/env bash
# Re-measures configurations of a recorded exhaustive table in one process
# each (wstune run, REPEAT timed runs after a warm-up): the table's TOP
# fastest and RANDOM others (seeded), so a table recorded by several workers
# sharing a device can be checked against runs that had the device alone.
# Usage: scripts/recheck-table.sh TABLE.json.gz KERNEL_FILE SIZE DEVICE OUT.txt [TOP [RANDOM [REPEAT]]]
#   e.g. scripts/recheck-table.sh bench/tables/matmul_tiled-4096-h100.json.gz \
#          share/examples/kernels/matmul_tiled.json 4096x4096x4096 gpu recheck.txt 10 10 15
# OUT.txt gets, per configuration, "== TABLE_MS NAME=V,... local=X,Y" and wstune
# run's JSON on one line; the summary (table against re-measured medians, the ranking of the
# fastest) goes to stdout and OUT.txt's end.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 5 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
table=$1 file=$2 size=$3 device=$4 out=$5 top=${6:-10} random=${7:-10} repeat=${8:-15}
. "$here/scripts/bench-common.sh"
wstune_build_targets wstune_cli
picks=$(python3 - "$table" "$top" "$random" <<'PY'
import gzip, json, random, statistics, sys
doc = json.load(gzip.open(sys.argv[1]))
trials = [t for s in doc["sessions"] for t in s["trials"] if t["status"] == "correct" and t["samples_ms"]]
trials.sort(key=lambda t: statistics.median(t["samples_ms"]))
top, rest = trials[:int(sys.argv[2])], trials[int(sys.argv[2]):]
others = random.Random(1).sample(rest, min(int(sys.argv[3]), len(rest)))
def local(t):
    l = t.get("local") or {}
    return ",".join(str(l[d]) for d in "xyz"[: l.get("dims", 0)]) or "null"
for t in top + others:
    params = ",".join(f"{k}={v}" for k, v in sorted(t["params"].items()))
    print(f'{statistics.median(t["samples_ms"]):.6f}', local(t), params)
PY
)
: >"$out"
# A file whose LocalSize comes from its parameters takes no --local.
sets_local=$(python3 -c 'import json,sys; print(int("LocalSize" in json.load(open(sys.argv[1]))["KernelSpecification"]))' "$file")
while read -r ms local config; do
  echo "== $ms $config local=$local" >>"$out"
  args=(--config "$config")
  [ "$sets_local" = 1 ] || args+=(--local "$local")
  if "$build/cli/wstune" run --kernel-file "$file" --size "$size" --device "$device" "${args[@]}" \
    --repeat "$repeat" --json >"$out.run" 2>"$out.err"; then
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$out.run" >>"$out"
  else
    python3 -c 'import json,sys; print(json.dumps({"status": "failed", "error": open(sys.argv[1]).read()[-500:]}))' \
      "$out.err" >>"$out"
  fi
done <<<"$picks"
rm -f "$out.run" "$out.err"
python3 - "$out" "$top" <<'PY' | tee -a "$out"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
rows = []
for i, l in enumerate(lines):
    if l.startswith("== "):
        _, ms, config = l.split(" ", 2)
        try:
            d = json.loads(lines[i + 1])
            rows.append((float(ms), d["kernel"]["median_ms"], config))
        except (IndexError, KeyError, ValueError):
            rows.append((float(ms), None, config))
top = int(sys.argv[2])
for name, part in (("fastest", rows[:top]), ("others", rows[top:])):
    d = [(m / t - 1) * 100 for t, m, _ in part if m]
    if d:
        print(f"{name} {len(d)}: re-measured against the table {min(d):+.1f} % to {max(d):+.1f} %")
ok = [r for r in rows[:top] if r[1]]
if ok:
    best = min(ok, key=lambda r: r[1])
    print(f"the table's fastest re-measured: {ok[0][1]:.4f} ms ({ok[0][2]}); fastest re-measured of the top: {best[1]:.4f} ms ({best[2]})")
PY
