#!/usr/bin/env bash
# `wstune split --model measured --run` on two PoCL devices with a database:
# the first run calibrates, refines online and stores the calibration (one row
# per device); the second reuses it ("calibration: stored", no calibration or
# refinement runs, no new rows); --recalibrate measures anew; --no-store
# neither reads nor writes; another size does not reuse the stored one. On
# three devices the refinement chooses the devices it uses, printed, in the
# JSON and in the stored split run's detail.
# Usage: split_store_test.sh PATH/TO/wstune
set -euo pipefail
W=$1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wstune-split-store.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export POCL_DEVICES="basic pthread"
DB=$TMP/split.db
count() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('SELECT count(*) FROM split_calibrations').fetchone()[0])" "$DB"; }
fail() { echo "FAIL: $*"; exit 1; }
args=(split --kernel trapezoid --size 65536 --devices 0:0,0:1 --model measured --run --repeat 2 --refine 5 --refine-repeat 2 --db "$DB")

"$W" "${args[@]}" >"$TMP/1.out" 2>"$TMP/1.err" || { cat "$TMP/1.out" "$TMP/1.err"; fail "first run"; }
cat "$TMP/1.out"
grep -q "calibrating each device alone" "$TMP/1.err" || fail "the first run did not calibrate"
grep -qE "^calibration: measured \([0-9]+ slices\), stored in $DB" "$TMP/1.out" || fail "the first run did not store"
grep -qE "^refinement: [1-5] splits measured" "$TMP/1.out" || fail "the first run did not refine within 5 splits"
grep -q "^status: correct" "$TMP/1.out" || fail "the first run's split is not correct"
[ "$(count)" = 2 ] || fail "expected 2 calibration rows (one per device), got $(count)"

"$W" "${args[@]}" >"$TMP/2.out" 2>"$TMP/2.err" || { cat "$TMP/2.out" "$TMP/2.err"; fail "second run"; }
cat "$TMP/2.out"
grep -q "^calibration: stored ($DB" "$TMP/2.out" || fail "the second run did not reuse the stored calibration"
grep -q "^refinement: stored" "$TMP/2.out" || fail "the second run did not reuse the stored refinement"
! grep -q "calibrating\|refining" "$TMP/2.err" || fail "the second run measured again"
grep -q "^status: correct" "$TMP/2.out" || fail "the second run's split is not correct"
[ "$(count)" = 2 ] || fail "the second run added calibration rows ($(count))"
# The same shares both times: the stored refinement's split.
diff <(grep -E "^(basic|pthread)" "$TMP/1.out" | head -2) <(grep -E "^(basic|pthread)" "$TMP/2.out" | head -2) >/dev/null \
  || fail "the second run chose other shares than the first"

"$W" "${args[@]}" --json >"$TMP/3.json" 2>/dev/null
python3 - "$TMP/3.json" <<'PY' || fail "--json lacks calibration_source/refinement source 'stored'"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["calibration_source"] == "stored", d["calibration_source"]
assert d["refinement"]["source"] == "stored", d["refinement"]
assert d["run"]["status"] == "correct"
assert len(d["calibration"]["devices"]) == 2
PY

"$W" "${args[@]}" --recalibrate >"$TMP/4.out" 2>"$TMP/4.err"
grep -q "^calibration: measured" "$TMP/4.out" || fail "--recalibrate reused the stored calibration"
[ "$(count)" = 4 ] || fail "--recalibrate did not store anew ($(count) rows)"

"$W" "${args[@]}" --no-store >"$TMP/5.out" 2>"$TMP/5.err"
grep -q "^calibration: measured.*not stored (--no-store)" "$TMP/5.out" || fail "--no-store reused or stored"
[ "$(count)" = 4 ] || fail "--no-store wrote the database"

# Another size: the stored calibration does not fit, so it calibrates again.
"$W" split --kernel trapezoid --size 32768 --devices 0:0,0:1 --model measured --refine 0 --db "$DB" >"$TMP/6.out" 2>&1
grep -q "^calibration: measured" "$TMP/6.out" || fail "a calibration of another size was reused"
grep -q "^refinement: off" "$TMP/6.out" || fail "--refine 0 still refined"
# Three devices: the chosen device set in the output, the JSON and the split run's detail.
DB3=$TMP/split3.db
POCL_DEVICES="basic pthread pthread" "$W" split --kernel trapezoid --size 65536 --devices 0:0,0:1,0:2 --model measured \
  --run --repeat 2 --refine 10 --refine-repeat 2 --db "$DB3" >"$TMP/7.out" 2>"$TMP/7.err" \
  || { cat "$TMP/7.out" "$TMP/7.err"; fail "three-device run"; }
cat "$TMP/7.out"
grep -qE "^devices used: [1-3] of 3 \(0:[0-2]" "$TMP/7.out" || fail "no 'devices used' line for three devices"
grep -qE "^refinement: ([1-9]|10) splits measured" "$TMP/7.out" || fail "three devices were not refined within 10 splits"
grep -q "^status: correct" "$TMP/7.out" || fail "the three-device split is not correct"
POCL_DEVICES="basic pthread pthread" "$W" split --kernel trapezoid --size 65536 --devices 0:0,0:1,0:2 --model measured \
  --db "$DB3" --json >"$TMP/8.json" 2>/dev/null
python3 - "$TMP/8.json" "$DB3" <<'PY' || fail "the device set is missing from the JSON or the stored split run"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
units = d["refinement"]["search"]["units"]
assert len(units) == 3 and sum(units) == 65536, units
used = [s["device"]["id"] for s in d["shares"] if s["end"] > s["begin"]]
assert d["device_set"] == used and used, (d["device_set"], used)
rows = sqlite3.connect(sys.argv[2]).execute("SELECT model, detail FROM split_runs").fetchall()
assert len(rows) == 1, rows
detail = json.loads(rows[0][1])
assert rows[0][0] == "measured" and detail["source"] == "wstune split", rows
assert detail["device_set"] == used and detail["units"] == units, detail
PY
echo "split store checks passed"
