#!/usr/bin/env bash
# Shared-tune throughput of wstuned with 1, 2 and 4 GPU workers, one GPU per
# worker (issue 40): for each worker count N, one launch of N+1 ranks (rank
# 0 the master, rank i the worker of GPU 1:(i-1), --worker-device), a fresh
# database, one tune job that every worker shares (one device fingerprint:
# one search, each configuration measured by one worker). Reports the
# launch's wall time, the trials stored, trials per second and each rank's
# share of the measurements. No namespaces here: on one multi-GPU host the
# ranks are the cluster's workers; the namespaced hosts are CI's
# (tests/cluster/cluster_test.sh).
# Usage: scripts/bench-daemon-cluster-gpu.sh OUTDIR [COUNTS [TRIALS]]
#   COUNTS  worker counts (default "1 2 4"; needs that many GPUs, platform 1)
#   TRIALS  --max-trials of the job (default 240)
# Environment: KERNEL_FILE (default share/examples/kernels/matmul_tiled.json),
#   SIZE (default 512x512x512), REPS (-r, default 5), PLATFORM (default 1),
#   TRANSPORT (mpi, default: one launch of N+1 ranks; tcp: the master alone
#   with --listen 127.0.0.1:0 and N `wstuned worker --connect` processes,
#   docs/cluster.md).
# Writes OUTDIR/daemon_cluster_gpu.{csv,md} and OUTDIR/raw/N.{json,err}.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=$1 counts=${2:-"1 2 4"} trials=${3:-240}
kfile=${KERNEL_FILE:-$here/share/examples/kernels/matmul_tiled.json}
size=${SIZE:-512x512x512} reps=${REPS:-5} platform=${PLATFORM:-1}
cmdline="scripts/bench-daemon-cluster-gpu.sh $*"
. "$here/scripts/bench-common.sh"
wstune_build_targets wstuned
. "$here/daemon/mpi-launch.sh"
wstuned_launcher
mkdir -p "$out/raw"
for n in $counts; do
  flags=()
  for ((i = 1; i <= n; i++)); do flags+=(--worker-device "$i=$platform:$((i - 1))"); done
  db=$out/raw/$n.db
  rm -f "$db" "$db-wal" "$db-shm"
  t0=$(date +%s.%N)
  job=(tune --kernel-file "$kfile" --size "$size" --strategy exhaustive --max-trials "$trials" -r "$reps" --db "$db"
       --json --timeout 600)
  if [ "${TRANSPORT:-mpi}" = tcp ]; then
    "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n 1 "$build/daemon/wstuned" "${job[@]}" --listen 127.0.0.1:0 --wait-workers "$n" \
      >"$out/raw/$n.json" 2>"$out/raw/$n.err" &
    master=$!
    port=
    while [ -z "$port" ] && kill -0 "$master" 2>/dev/null; do
      sleep 0.2
      port=$(sed -n 's/^wstuned: listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$out/raw/$n.err")
    done
    for ((i = 1; i <= n; i++)); do
      "$build/daemon/wstuned" worker --connect "127.0.0.1:$port" --device "$platform:$((i - 1))" \
        2>"$out/raw/$n.worker$i.err" &
    done
    wait "$master" || echo "$n worker(s): wstuned exit $? (see $out/raw/$n.err)" >&2
    wait
  else
    "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n "$((n + 1))" "$build/daemon/wstuned" "${job[@]}" "${flags[@]}" \
      >"$out/raw/$n.json" 2>"$out/raw/$n.err" || echo "$n worker(s): wstuned exit $? (see $out/raw/$n.err)" >&2
  fi
  t1=$(date +%s.%N)
  echo "$n $t0 $t1" >>"$out/raw/times.txt"
  echo "$n worker(s): $(python3 -c "print(round($t1 - $t0, 1))") s" >&2
done
python3 - "$out" "$cmdline" <<'PY'
import csv, json, sys
out, cmdline = sys.argv[1], sys.argv[2]
rows = []
for line in open(f"{out}/raw/times.txt"):
    n, t0, t1 = line.split()
    wall = float(t1) - float(t0)
    try:
        text = open(f"{out}/raw/{n}.json").read()
        job = json.loads(text[text.index("{"):])["jobs"][0]
        res = job["workers"][0]["result"]
        by = res["measured_by_rank"]
        measured = sum(by.values())
        status, search_s = job["status"], res["wall_ms"] / 1000
        hosts = sorted({w["host"] for w in job["workers"]})
    except (ValueError, KeyError, IndexError) as e:
        by, measured, status, search_s, hosts = {}, 0, f"no report ({e})", 0, []
    rows.append({"workers": int(n), "status": status, "trials": measured, "launch_s": round(wall, 1),
                 "search_s": round(search_s, 1), "trials_per_s": round(measured / search_s, 2) if search_s else 0,
                 "by_rank": " ".join(f"r{r}:{c}" for r, c in sorted(by.items())), "hosts": " ".join(hosts)})
rows.sort(key=lambda r: r["workers"])
with open(f"{out}/daemon_cluster_gpu.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
base = next((r["trials_per_s"] for r in rows if r["workers"] == 1 and r["trials_per_s"]), 0)
with open(f"{out}/daemon_cluster_gpu.md", "w") as f:
    f.write(f"# wstuned shared tune over GPU workers\n\nCommand: `{cmdline}`\n\n"
            "One launch per worker count, a fresh database each; search_s: the master's search wall clock "
            "(tune_result wall_ms), trials: first measurements stored.\n\n"
            "| workers | status | trials | launch s | search s | trials/s | speed-up | by rank |\n|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        sp = f"{r['trials_per_s'] / base:.2f}" if base else ""
        f.write(f"| {r['workers']} | {r['status']} | {r['trials']} | {r['launch_s']} | {r['search_s']} | "
                f"{r['trials_per_s']} | {sp} | {r['by_rank']} |\n")
print(open(f"{out}/daemon_cluster_gpu.md").read())
PY
