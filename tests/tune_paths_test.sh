#!/usr/bin/env bash
# One tuning request, two paths (issue 35): every example tuning file
# (share/examples/kernels/*.json) and a T1 file with fixed sizes
# (tests/data/fixed_scale.json: no ProblemSize) tuned by `wstune tune
# --kernel-file F --json` and by `mpiexec -n 2 wstuned tune --kernel-file F`
# with the same options. Both must resolve the same problem size, strategy
# (the file's Search, else auto), number of configurations in the space and
# budget (the file's Budget, else the strategy's default), and both must
# store a session with that strategy and budget. Small sizes and budgets.
# Usage: tune_paths_test.sh MPIEXEC NPFLAG WSTUNED WSTUNE SHARE DATA
set -uo pipefail
MPIEXEC=$1 NPFLAG=$2 WSTUNED=$3 WSTUNE=$4 SHARE=$5 DATA=$6
source "$(dirname "$0")/daemon_test_lib.sh"
export POCL_DEVICES=pthread  # one device: the CLI's default and the worker's

# FILE|SIZE|MAX-EVALS ("" = the file's default size / the default budget)
cases=(
  "$SHARE/examples/kernels/matmul_tiled.json|64x64x64|8"
  "$SHARE/examples/kernels/reduction.json|10007|6"
  "$SHARE/examples/kernels/stencil5.json|16x16|6"
  "$SHARE/examples/kernels/stencil7_3d.json|17x13x11|6"
  "$DATA/fixed_scale.json||"
)
# Every example file is a case: a new one must be added above.
for f in "$SHARE"/examples/kernels/*.json; do
  printf '%s\n' "${cases[@]}" | grep -q "^$f|" || fail "$f has no case in $0"
done

n=0
for c in "${cases[@]}"; do
  IFS='|' read -r file size evals <<<"$c"
  name=$(basename "$file" .json)
  args=(--kernel-file "$file" -r 1)
  [ -n "$size" ] && args+=(--size "$size")
  cli_db=$TMP/$name-cli.db daemon_db=$TMP/$name-daemon.db
  cli_budget=() daemon_budget=()
  [ -n "$evals" ] && cli_budget=(--max-evals "$evals") daemon_budget=(--max-trials "$evals")
  "$WSTUNE" tune "${args[@]}" "${cli_budget[@]}" --db "$cli_db" --json >"$TMP/out" 2>"$TMP/err" ||
    fail "$name: wstune tune exited $?"
  cp "$TMP/out" "$TMP/$name-cli.json"
  "$MPIEXEC" "$NPFLAG" 2 "$WSTUNED" tune "${args[@]}" "${daemon_budget[@]}" --db "$daemon_db" --json \
    --timeout 120 >"$TMP/out" 2>"$TMP/err" || fail "$name: wstuned tune exited $?"
  python3 - "$TMP/$name-cli.json" "$TMP/out" "$cli_db" "$daemon_db" "$name" <<'PY' || fail "$name: the two paths differ"
import json, sqlite3, sys
cli = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
daemon = json.loads(text[text.index("{"):])
name = sys.argv[5]
job = daemon["jobs"][0]
assert job["status"] == "ok", f"wstuned: {job['status']}: {job.get('error')}"
res = job["workers"][0]["result"]

def session(db):
    rows = sqlite3.connect(db).execute(
        "SELECT s.strategy, s.budget_trials, s.budget_seconds, p.size_text FROM sessions s "
        "JOIN problems p ON p.id = s.problem_id").fetchall()
    assert len(rows) == 1, f"{db}: {len(rows)} sessions"
    return rows[0]

got = {"size": (cli["size"], job["size"]),
       "strategy": (cli["strategy"], res["strategy"]),
       "space_size": (cli["space_size"], res["space_size"]),
       "stored session (strategy, budget, seconds, size)": (session(sys.argv[3]), session(sys.argv[4]))}
for what, (a, b) in got.items():
    assert a == b, f"{what}: wstune {a!r}, wstuned {b!r}"
assert cli["max_evals"] == (session(sys.argv[3])[1] or 0)
print(f"ok: {name}: size {cli['size']}, strategy {cli['strategy']}, {cli['space_size']} configurations, "
      f"budget {cli['max_evals']}, one session each")
PY
  n=$((n + 1))
done
echo "ok: $n tuning files resolved alike by wstune and wstuned"
