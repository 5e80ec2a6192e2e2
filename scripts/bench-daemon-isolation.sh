#!/usr/bin/env bash
# The isolated OpenCL process's cost in wstuned, side by side: one worker,
# sessions with and without --no-isolation alternated ROUNDS times, each a
# warm-up job (1 run) and two measured jobs of REPS runs. Prints per job the
# makespan, the worker's busy time, kernels, transfers (the master's
# transfer_ms: MPI receive, upload, read-back and MPI return) and the
# daemon's overhead as the report gives it (makespan − kernels − transfers),
# and writes the same lines to OUTFILE.
# Usage: scripts/bench-daemon-isolation.sh OUTFILE [DEVICE] [KERNEL] [SIZE] [REPS] [ROUNDS]
#   e.g. scripts/bench-daemon-isolation.sh docs/results/daemon_isolation_h100/side_by_side.txt gpu matmul 4096 10 3
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUTFILE [DEVICE] [KERNEL] [SIZE] [REPS] [ROUNDS]}
device=${2:-auto} kernel=${3:-matmul} size=${4:-1024} reps=${5:-10} rounds=${6:-3}
. "$here/scripts/bench-common.sh"
wstune_build_targets wstuned
. "$here/daemon/mpi-launch.sh"
wstuned_launcher
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/jobs.json" <<JSON
{"jobs": [{"kernel": "$kernel", "size": "$size", "repetitions": 1},
          {"kernel": "$kernel", "size": "$size", "repetitions": $reps},
          {"kernel": "$kernel", "size": "$size", "repetitions": $reps}]}
JSON
for round in $(seq "$rounds"); do
  for mode in isolated in-rank; do
    extra=()
    [ "$mode" = in-rank ] && extra=(--no-isolation)
    "$MPI_LAUNCHER" "${MPI_FLAGS[@]}" -n 2 "$build/daemon/wstuned" run --job "$tmp/jobs.json" --device "$device" \
      --no-store --json "${extra[@]}" >"$tmp/$mode-$round.json" 2>"$tmp/$mode-$round.err" ||
      { echo "$mode round $round: wstuned failed; see below" >&2; tail -5 "$tmp/$mode-$round.err" >&2; exit 1; }
  done
done
python3 - "$tmp" "$rounds" "$kernel $size, $reps runs per job, device $device" <<'PY' | tee "$out"
import json, sys
tmp, rounds, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
print(f"# wstuned with and without the isolated OpenCL process: {what}")
print("mode round job makespan_ms busy_ms kernel_ms transfer_ms return_ms overhead_ms overhead_pct")
for r in range(1, rounds + 1):
    for mode in ("isolated", "in-rank"):
        d = json.load(open(f"{tmp}/{mode}-{r}.json"))
        for k, j in enumerate(d["jobs"][1:], 1):
            p = j["parts"][0]
            o = j["overhead_ms"]
            print(f"{mode} {r} {k} {j['makespan_ms']:.1f} {p['busy_ms']:.1f} {p['kernel_ms']:.1f} {p['transfer_ms']:.1f} "
                  f"{p['return_ms']:.1f} {o:.1f} {100 * o / j['makespan_ms']:.1f}")
PY
