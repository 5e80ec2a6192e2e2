#!/usr/bin/env bash
# End to end with T1 tuning files on PoCL: every example tuned (small sizes,
# small budgets) and verified into a fresh database, a configuration run and
# queried, the T4 export, and bad files refused with exit 2 without touching
# the store. Usage: tuning_file_test.sh PATH/TO/wstune SOURCE_DIR WORK_DIR
set -u
W=$1
SRC=$2
WORK=$3
EX=$SRC/share/examples/kernels
rm -rf "$WORK" && mkdir -p "$WORK"
DB=$WORK/t1.db
fails=0
. "$(dirname "$0")/expect.sh"
T=(--device cpu --db "$DB" --repeat 2 --min-time 0 --median-error 0 --trial-timeout 120)
# Every example, tuned and verified (status correct: the best is verified).
expect 0 "best .*correct" -- "$W" tune --kernel-file "$EX/matmul_tiled.json" --size 64x64x64 --max-evals 12 "${T[@]}"
expect 0 "best .*correct" -- "$W" tune --kernel-file "$EX/stencil5.json" --size 61x47 --max-evals 12 "${T[@]}"
expect 0 "best .*correct" -- "$W" tune --kernel-file "$EX/reduction.json" --size 10007 --max-evals 12 "${T[@]}"
expect 0 "best .*correct" -- "$W" tune --kernel-file "$EX/stencil7_3d.json" --size 17x13x11 --max-evals 10 "${T[@]}"
expect 0 "best .*correct" -- "$W" tune --kernel-file "$SRC/kernels/matmul.json" --size 37x41x29 --max-evals 8 "${T[@]}"
expect 0 "best .*correct" -- "$W" tune --kernel-file "$SRC/kernels/bilinear.json" --size IW=33,IH=20,OW=70,OH=41 --max-evals 8 "${T[@]}"
# The prime size runs a padded NDRange: reduction 10007 does not need local size 1.
expect 0 '"local": \{' -- "$W" query --kernel-file "$EX/reduction.json" --size 10007 --device cpu --db "$DB" --format json
# One configuration, verified; the query gives the build options with the parameters.
expect 0 "status: correct" -- "$W" run --kernel-file "$EX/matmul_tiled.json" --size 64x64x64 --device cpu \
  --config TSM=32,TSN=32,TSK=16,WPTM=2,WPTN=4,VW=4 --repeat 2
expect 0 "-D TSM=" -- "$W" query --kernel-file "$EX/matmul_tiled.json" --size 64x64x64 --device cpu --db "$DB"
expect 0 "matmul_tiled" -- "$W" query --db "$DB"
# T4: every trial.
expect 0 "trials of .* sessions \(T4\)" -- "$W" export --format t4 "$WORK/results.t4.json" --db "$DB"
grep -q '"invalidity"' "$WORK/results.t4.json" && grep -q '"schema_version": "1.0.0"' "$WORK/results.t4.json" \
  && echo "ok: T4 file" || { echo "FAIL: T4 file"; fails=$((fails+1)); }
# Bad input: exit 2, the file and the JSON path named, nothing stored.
before=$("$W" db check --db "$DB" 2>&1 | grep -E "trials|sessions")
printf '{"ConfigurationSpace": {"TuningParameters": []}, "KernelSpecification": {"Language": "CUDA"}}' > "$WORK/cuda.json"
expect 2 "cuda.json: KernelSpecification.Language: is 'CUDA'" -- "$W" tune --kernel-file "$WORK/cuda.json" --db "$DB"
expect 2 "does not exist" -- "$W" tune --kernel-file "$WORK/none.json" --db "$DB"
expect 2 "not one of TSM's values" -- "$W" run --kernel-file "$EX/matmul_tiled.json" --config TSM=48
expect 2 "violates the kernel's Conditions" -- "$W" run --kernel-file "$EX/matmul_tiled.json" --config TSM=16,TSN=16,WPTM=8,WPTN=8
expect 2 "give --kernel or --kernel-file, not both" -- "$W" tune --kernel matmul --kernel-file "$EX/stencil5.json"
expect 2 "is not a size of this file" -- "$W" tune --kernel-file "$EX/stencil5.json" --size M=4 --db "$DB"
after=$("$W" db check --db "$DB" 2>&1 | grep -E "trials|sessions")
[ "$before" = "$after" ] && echo "ok: bad input stored nothing" || { echo "FAIL: the store changed"; fails=$((fails+1)); }
[ $fails -eq 0 ] && echo "all tuning-file checks passed" || { echo "$fails tuning-file check(s) failed"; exit 1; }
