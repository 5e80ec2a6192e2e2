#!/usr/bin/env bash
# Issue 17, end to end through the wstune CLI on PoCL: one CASE per item of
# the issue's list (tests/reliability.cmake registers each as a ctest case).
# Usage: reliability_cli_test.sh PATH/TO/wstune CASE
#   trapezoid_small  `run --kernel trapezoid --size 8:8` verifies (the rule's
#                    own value, not pi)
#   db_paths         --db "" is a usage error; --db /dev/null leaves no
#                    /dev/null-journal
#   read_only        a read-only database file in a read-only directory can
#                    be queried, exported, checked and reported, unchanged
#   import_refusals  bad imports exit 2 naming the file and the JSON path,
#                    the database unchanged
#   deep_json        a 100,000-deep import is refused (exit 2, file, path,
#                    depth bound); an export of nested free-form JSON grows
#                    linearly with the depth
#   concurrent_tune  five identical `wstune tune` processes on one database:
#                    five sessions, one best row each, one current best
#   no_resume        a live --no-resume session is not taken over
set -uo pipefail
W=$1 CASE=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstune-rel.XXXXXX")
chmod 755 "$TMP"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  chmod -R u+w "$TMP" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE REGEX -- command...: exit status and combined output.
expect() {
  local code=$1 pattern=$2; shift 3
  local rc
  OUT=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ]; then fail "'$*' exited $rc, expected $code: $(head -c 600 <<<"$OUT")"; return; fi
  if [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$OUT"; then
    fail "'$*' output lacks /$pattern/: $(head -c 600 <<<"$OUT")"; return
  fi
  echo "ok: $* -> $rc"
}
sql() { python3 -c "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); print(c.execute(sys.argv[2]).fetchone()[0])" "$@"; }
# A small export with one device, one session (two trials) and its best.
write_export() {
  python3 - "$1" <<'PY'
import json, sys
fp = "aee725a092fedc38"
dev = {"name": "Fake GPU", "vendor": "Fake Vendor", "type": "gpu", "driver_version": "1.0", "architecture": "sm_90",
       "compute_units": 8, "pe_per_cu": 64, "max_work_group_size": 1024, "max_work_item_sizes": [1024, 1024, 64],
       "fingerprint": fp}
k = {"name": "matmul", "source_hash": "", "build_options": ""}
p = {"global": {"x": 1024, "y": 1024, "dims": 2}, "size_text": "1024"}
t = lambda x, y, ms: {"local": {"x": x, "y": y, "dims": 2}, "status": "correct", "error": "", "samples_ms": [ms],
                      "created_at": "2025-01-01T00:00:00.000Z"}
s = {"uuid": "a" * 32, "device": fp, "kernel": k, "problem": p, "strategy": "exhaustive",
     "started_at": "2025-01-01T00:00:00.000Z", "ended_at": None, "wstune_version": "0.1.0", "host": "h",
     "trials": [t(32, 8, 1.0), t(16, 16, 2.0)]}
b = {"uuid": "b" * 32, "device": fp, "kernel": k, "problem": p, "local": {"x": 32, "y": 8, "dims": 2},
     "median_ms": 1.0, "null_ms": 2.0, "rule_ms": None, "session": "a" * 32, "recorded_at": "2025-01-01T00:00:00.000Z"}
cal = {"uuid": "c" * 32, "device": fp, "kernel": k, "model": "measured", "params": {"a": 1},
       "created_at": "2025-01-01T00:00:00.000Z"}
json.dump({"format": "wstune-store-export", "format_version": 2, "schema_version": 2, "devices": [dev],
           "sessions": [s], "best_configs": [b], "split_runs": [], "calibrations": [cal]}, open(sys.argv[1], "w"))
PY
}
# edit FILE OUT PYTHON-STATEMENT (on d, the document)
edit() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $3; json.dump(d, open(sys.argv[2],'w'))" "$1" "$2"; }
digest() { (cd "$1" && ls -lA --time-style=+%s.%N && sha256sum ./*) 2>/dev/null | sha256sum; }

case "$CASE" in
trapezoid_small)
  # 64 sub-intervals: the rule is 1.3e-5 from pi, above the old bound.
  expect 0 '"status": "correct"' -- "$W" run --kernel trapezoid --size 8:8 --repeat 1 --json
  python3 -c 'import json, sys; assert json.load(sys.stdin)["verify"]["ok"] is True' <<<"$OUT" \
    || fail "8:8 not verified: $(head -c 600 <<<"$OUT")"
  expect 0 "status: correct" -- "$W" run --kernel trapezoid --size 1:1 --repeat 1
  ;;
db_paths)
  write_export "$TMP/in.json"
  expect 2 "--db '': give a database file" -- "$W" db check --db ""
  expect 2 "--db ''" -- "$W" import "$TMP/in.json" --db ""
  expect 2 "--db ''" -- "$W" query --db ""
  had_journal=0; [ -e /dev/null-journal ] && had_journal=1
  expect 1 "/dev/null is not a regular file" -- "$W" db check --db /dev/null
  expect 1 "not a regular file" -- "$W" import "$TMP/in.json" --db /dev/null
  [ $had_journal = 0 ] && [ -e /dev/null-journal ] && fail "/dev/null-journal was created"
  mkfifo "$TMP/fifo"
  expect 1 "not a regular file" -- timeout 20 "$W" query --db "$TMP/fifo"
  ;;
read_only)
  write_export "$TMP/in.json"
  mkdir "$TMP/ro"
  expect 0 "imported 1 devices" -- "$W" import "$TMP/in.json" --db "$TMP/ro/w.db"
  chmod 444 "$TMP/ro/w.db"; chmod 555 "$TMP/ro"
  before=$(digest "$TMP/ro")
  # Root writes anything: run the readers as an unprivileged user.
  AS=(); [ "$(id -u)" = 0 ] && AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  mkdir "$TMP/out"; chmod 777 "$TMP/out"
  expect 0 "Fake GPU +matmul +1024x1024" -- "${AS[@]}" "$W" query --db "$TMP/ro/w.db"
  expect 0 "Fake GPU,matmul,1024x1024,32x8,exact" -- "${AS[@]}" "$W" query --db "$TMP/ro/w.db" --device "fake gpu" \
    --kernel matmul --size 1024x1024 --format csv
  expect 0 "exported 1 devices, 1 sessions, 1 best" -- "${AS[@]}" "$W" export "$TMP/out/x.json" --db "$TMP/ro/w.db"
  expect 0 "integrity: +ok" -- "${AS[@]}" "$W" db check --db "$TMP/ro/w.db"
  grep -q "2 trials" <<<"$OUT" || fail "db check of the read-only database: $OUT"
  expect 0 "wrote" -- "${AS[@]}" "$W" report --db "$TMP/ro/w.db" --out "$TMP/out/report"
  expect 1 "read-only" -- "${AS[@]}" "$W" import "$TMP/in.json" --db "$TMP/ro/w.db"
  [ "$(digest "$TMP/ro")" = "$before" ] || fail "the read-only directory changed"
  ls -a "$TMP/ro"
  ;;
import_refusals)
  write_export "$TMP/in.json"
  DB=$TMP/w.db
  expect 0 "imported 1 devices" -- "$W" import "$TMP/in.json" --db "$DB"
  before=$(sql "$DB" "SELECT count(*) FROM trials")
  n=0
  while IFS='|' read -r stmt path; do
    n=$((n + 1))
    edit "$TMP/in.json" "$TMP/bad$n.json" "$stmt"
    expect 2 "bad$n.json: import: $path" -- "$W" import "$TMP/bad$n.json" --db "$DB"
    expect 2 "bad$n.json: import: $path" -- "$W" import "$TMP/bad$n.json" --db "$TMP/fresh$n.db"
  done <<'EOF'
d["sessions"][0]["uuid"]="d"*32; d["sessions"][0]["trials"][0]["local"]["x"]=-8|sessions\[0\]\.trials\[0\]\.local\.x
d["sessions"][0]["uuid"]="d"*32; d["sessions"][0]["trials"][0]["local"]["x"]=18446744073709551608|sessions\[0\]\.trials\[0\]\.local\.x
d["sessions"][0]["uuid"]="S1"|sessions\[0\]\.uuid is "S1", not a wstune uuid
d["sessions"][0]["uuid"]="d"*32; d["sessions"][0]["trials"][1]["local"]["x"]=48|sessions\[0\]\.trials\[1\]\.local
d["sessions"][0]["uuid"]="d"*32; d["sessions"][0]["trials"][0]["local"]={"x":32,"dims":1}|sessions\[0\]\.trials\[0\]\.local has 1 dimension
d["sessions"][0]["uuid"]="d"*32; d["sessions"][0]["trials"][0]["samples_ms"]=[]|sessions\[0\]\.trials\[0\]\.samples_ms is empty
d["sessions"][0]["uuid"]="d"*32; d["sessions"][0]["trials"][0]["samples_ms"]=[1,-2]|sessions\[0\]\.trials\[0\]\.samples_ms\[1\]
d["schema_version"]=99|schema_version 99
d["best_configs"][0]["uuid"]="e"*32; d["best_configs"][0]["session"]="f"*32|best_configs\[0\]\.session refers to session
d["sessions"][0]["uuid"]="d"*32; d["sessions"][0]["device"]="0123456789abcdef"|sessions\[0\] refers to device
EOF
  # A stored session's uuid on another strategy: refused, and said once.
  edit "$TMP/in.json" "$TMP/conflict.json" 'd["sessions"][0]["strategy"]="random"'
  expect 2 "conflict.json: import: sessions\[0\] has uuid a{32}, which the database holds for another" -- \
    "$W" import "$TMP/conflict.json" --db "$DB"
  [ "$(grep -o "nothing was imported" <<<"$OUT" | wc -l)" = 1 ] || fail "the refusal does not say once that nothing was imported: $OUT"
  after=$(sql "$DB" "SELECT count(*) FROM trials")
  [ "$before" = "$after" ] || fail "a refused import changed the database ($before -> $after trials)"
  expect 0 "integrity: +ok" -- "$W" db check --db "$DB"
  ;;
deep_json)
  write_export "$TMP/in.json"
  edit "$TMP/in.json" "$TMP/deep.json" 'd["calibrations"][0]["params"]="DEEP"'
  python3 - "$TMP/deep.json" <<'PY'
import sys
p = sys.argv[1]
text = open(p).read().replace('"DEEP"', "[" * 100000 + "]" * 100000)
open(p, "w").write(text)
PY
  expect 2 "deep.json: arrays and objects nested deeper than 256 levels at calibrations\[0\]\.params" -- \
    "$W" import "$TMP/deep.json" --db "$TMP/w.db"
  [ ${#OUT} -lt 1000 ] || fail "the message is ${#OUT} bytes"
  [ -e "$TMP/w.db" ] && fail "a refused import created the database"
  # Exports of nested free-form JSON (split-run details) grow linearly.
  for depth in 0 50 100; do  # {"k": [v]} is two levels: up to 200 of the 256 allowed
    edit "$TMP/in.json" "$TMP/n$depth.json" "
v = 1
for _ in range($depth): v = {'k': [v]}
d['calibrations'][0]['params'] = {'nested': v}"
    expect 0 "imported" -- "$W" import "$TMP/n$depth.json" --db "$TMP/n$depth.db"
    expect 0 "exported" -- "$W" export "$TMP/e$depth.json" --db "$TMP/n$depth.db"
  done
  s0=$(stat -c %s "$TMP/e0.json") s1=$(stat -c %s "$TMP/e50.json") s2=$(stat -c %s "$TMP/e100.json")
  echo "export sizes at nesting 0, 100, 200 levels: $s0 $s1 $s2 bytes"
  # Linear: each 100 levels ({"k":[ ... ]} is 8 bytes per two levels) add the same.
  g1=$((s1 - s0)) g2=$((s2 - s1))
  [ $g1 -le 1000 ] && [ $g2 -le 1000 ] && [ $((g2 - g1)) -le 10 ] && [ $((g1 - g2)) -le 10 ] \
    || fail "export growth per 100 levels: $g1 then $g2 bytes (quadratic?)"
  expect 0 "imported 0 devices, 0 sessions, 0 trials, 0 best configurations, 0 split runs, 0 calibrations" -- \
    "$W" import "$TMP/e100.json" --db "$TMP/n100.db"
  ;;
concurrent_tune)
  DB=$TMP/tune.db
  args=(tune --kernel trapezoid --size 4096 --strategy exhaustive --repeat 2 --warmup 0 --min-time 0
        --median-error 0 --db "$DB")
  # create it before the race (an empty export: db check creates nothing)
  printf '{"format":"wstune-store-export","format_version":2,"devices":[],"sessions":[],"best_configs":[],"split_runs":[],"calibrations":[]}' >"$TMP/empty.json"
  "$W" import "$TMP/empty.json" --db "$DB" >/dev/null
  for i in 1 2 3 4 5; do "$W" "${args[@]}" >"$TMP/t$i.out" 2>"$TMP/t$i.err" & pids+=($!); done
  for i in 0 1 2 3 4; do wait "${pids[$i]}" || fail "tune process $((i + 1)) exited $?: $(cat "$TMP/t$((i + 1)).err")"; done
  pids=()
  grep -l "resuming session" "$TMP"/t*.err && fail "a process resumed another's live session"
  python3 - "$DB" <<'PY' || fail "sessions and best rows"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
sessions = c.execute("SELECT count(*), count(DISTINCT pid), sum(ended_at IS NOT NULL) FROM sessions").fetchone()
assert sessions == (5, 5, 5), f"5 finished sessions of 5 writers expected, got {sessions}"
per = c.execute("SELECT s.id, count(b.id) FROM sessions s LEFT JOIN best_configs b ON b.session_id = s.id "
                "GROUP BY s.id").fetchall()
assert all(n == 1 for _, n in per), f"best rows per session: {per}"
dups = c.execute("SELECT count(*) FROM (SELECT session_id, config FROM trials GROUP BY 1, 2 HAVING count(*) > 1)").fetchone()[0]
assert dups == 0, f"{dups} configurations stored twice in a session"
print(f"ok: 5 sessions, one best row each; {c.execute('SELECT count(*) FROM trials').fetchone()[0]} trials")
PY
  expect 0 "" -- "$W" query --db "$DB" --kernel trapezoid --format csv
  rows=$(grep -c "trapezoid" <<<"$OUT")
  [ "$rows" = 1 ] || fail "query lists $rows current bests for one (device, kernel, problem), expected 1"
  expect 0 "" -- "$W" query --db "$DB" --kernel trapezoid --format csv --history
  rows=$(grep -c "trapezoid" <<<"$OUT")
  [ "$rows" = 5 ] || fail "history has $rows rows, expected 5 (one per session)"
  ;;
no_resume)
  DB=$TMP/tune.db
  slow=(tune --kernel matmul --size 256 --strategy exhaustive --repeat 20 --warmup 1 --db "$DB")
  "$W" "${slow[@]}" --no-resume >"$TMP/a.out" 2>"$TMP/a.err" & pids+=($!)
  for _ in $(seq 1 600); do  # until its session is there
    [ -f "$DB" ] && [ "$(sql "$DB" "SELECT count(*) FROM trials" 2>/dev/null || echo 0)" -ge 1 ] && break
    sleep 0.1
  done
  kill -0 "${pids[0]}" 2>/dev/null || fail "the --no-resume tune ended too early to test"
  "$W" tune --kernel matmul --size 256 --strategy exhaustive --repeat 1 --warmup 0 --max-evals 2 --db "$DB" \
    >"$TMP/b.out" 2>"$TMP/b.err" || fail "the second tune failed: $(cat "$TMP/b.err")"
  grep -q "resuming session" "$TMP/b.err" && fail "the live --no-resume session was taken over: $(cat "$TMP/b.err")"
  kill -0 "${pids[0]}" 2>/dev/null || fail "the --no-resume tune ended before the second one (test too slow)"
  [ "$(sql "$DB" "SELECT count(*) FROM sessions")" = 2 ] || fail "two sessions expected"
  kill -KILL "${pids[0]}"; wait "${pids[0]}" 2>/dev/null; pids=()
  # Its writer gone, the session is resumed (and taken over) by the next run.
  "$W" tune --kernel matmul --size 256 --strategy exhaustive --repeat 1 --warmup 0 --max-evals 2 --db "$DB" \
    >"$TMP/c.out" 2>"$TMP/c.err" || fail "the third tune failed: $(cat "$TMP/c.err")"
  grep -q "resuming session 1 " "$TMP/c.err" || fail "the killed session was not resumed: $(cat "$TMP/c.err")"
  ;;
*) echo "unknown CASE $CASE"; exit 2 ;;
esac
[ $fails -eq 0 ] && echo "$CASE: all checks passed" || { echo "$CASE: $fails check(s) failed"; exit 1; }
