#!/bin/sh
# test_analyze_plan_probes.sh GRADFLOW — a --mode matrix-free run split into tasks (analyze --plan, docs/cluster.md
# "Exact full-scale runs"): Hutchinson's probes in chunks of --probe-chunk, cut into 1, 3 and 6 tasks over a probe
# count no chunk size divides, plus task 0 for the Lanczos values when any layer is spectral; the tasks run out of
# order and the merge's report equals the single-process run with the same --probe-chunk, every numeric leaf bit for
# bit (scripts/compare_reports.py), for one stream, ResiDual's two and a decoder block. Also: a missing probe task is
# named (exit 2) and --allow-partial reports the probes covered and no estimate; without the Lanczos task the
# singular values stay null; a result of another plan or with edited sums is refused by name; bad options exit 2
# with a one-line fix and write nothing; `gradflow slurm` prints the estimate. (The runner's kill, cut-short and
# foreign-gradflow cases: test_analyze_plan.sh.)
gf=${1:?usage: test_analyze_plan_probes.sh PATH/TO/gradflow}
here=$(cd "$(dirname "$0")" && pwd)
cmp_reports="/usr/bin/python3 $here/../../scripts/compare_reports.py"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$here/plan_helpers.sh"

# 11 probes in chunks of 2: 6 chunks (the last of one probe)
BASE="--layers 3 --d-model 8 --heads 2 --d-ff 16 --seq-len 5 --mode matrix-free --hutchinson-probes 11 --top-k 2"
MODEL="$BASE --probe-chunk 2"

# check NAME TASKS EXPECTED_TASKS WORDS...: plan_helpers.sh's check_plan (the Lanczos task is one more)
check() { check_plan "$@"; }

for tasks in 1 3 6; do
  check post "$tasks" $((tasks + 1)) --placement post $MODEL
done
check resi-dual 3 4 --placement resi-dual $MODEL
check decoder 6 7 --placement pre --causal --kv-heads 1 --rope --ffn swiglu $MODEL
check no-lanczos 3 3 --placement post --spectral-layers none $MODEL
check bottom 3 4 --placement sandwich --spectral-layers bottom $MODEL

# the merged report has the estimates and the Lanczos values, and no task's share
r="$T/post-3.json"
[ "$(value_of "$r" layers.0.product_jacobian.hutchinson_probes)" = 11 ] || fail "merged probes: $(value_of "$r" layers.0.product_jacobian)"
[ "$(value_of "$r" layers.0.block_jacobian.frobenius_norm)" != null ] || fail "no merged estimate"
[ "$(value_of "$r" layers.0.product_jacobian.spectral_norm)" != null ] || fail "no Lanczos value"
grep -q hutchinson_partial "$r" && fail "the merged report keeps a task's hutchinson_partial"
# the chunking changes only the standard error's pairs: the estimates agree with one chunk to rounding
"$gf" analyze --placement post $BASE --probe-chunk 64 -q --json "$T/one-chunk.json" || fail "one chunk"
/usr/bin/python3 - "$r" "$T/one-chunk.json" <<'PY' || fail "chunked against one chunk"
import json, math, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for la, lb in zip(a["layers"], b["layers"]):
    for key in ("block_jacobian", "product_jacobian"):
        x, y = la[key]["frobenius_norm"], lb[key]["frobenius_norm"]
        assert abs(x - y) <= 1e-13 * abs(y), (key, x, y)
        assert math.isfinite(la[key]["frobenius_std_error"]) and la[key]["frobenius_std_error"] > 0
assert a["config"]["probe_chunk"] == 2 and b["config"]["probe_chunk"] == 64
PY
echo "ok: the merged report holds the estimates and the Lanczos values; other chunkings agree to rounding"

# a missing probe task: named with the command that reruns it; --allow-partial: the probes covered, no estimate
dir="$T/post-3"
missing=$(ls "$dir/results" | grep probes | sed -n 2p)
mv "$dir/results/$missing" "$T/missing.json"
"$gf" merge "$dir" --json "$T/x.json" -q 2>"$T/err"
[ $? -eq 2 ] || fail "merge with a task missing: not exit 2"
grep -q "${missing%.json}.*rerun: gradflow task" "$T/err" || fail "the missing task is not named with its rerun: $(cat "$T/err")"
[ ! -e "$T/x.json" ] || fail "a refused merge wrote its report"
"$gf" merge "$dir" --allow-partial --json "$T/partial.json" -q 2>"$T/err" || fail "--allow-partial: $(cat "$T/err")"
/usr/bin/python3 - "$T/partial.json" <<'PY' || fail "partial merge: probes covered"
import json, sys
r = json.load(open(sys.argv[1]))
cov, total = r["summary"]["hutchinson_probes_covered"], r["summary"]["hutchinson_probes_total"]
assert total == 11, total
assert r["partial"]["probes_covered"] == cov, r["partial"]
assert len(cov) == 2 and sum(b - a for a, b in cov) < total, cov  # the middle range is missing
assert r["layers"][0]["product_jacobian"]["frobenius_norm"] is None
assert r["layers"][0]["product_jacobian"]["spectral_norm"] > 0  # the Lanczos task's values are there
assert r["layers"][1]["grad_norm"] > 0
PY
mv "$T/missing.json" "$dir/results/$missing"
# the Lanczos task missing: --allow-partial gives the estimates and null singular values
lanczos=$(ls "$dir/results" | grep lanczos)
mv "$dir/results/$lanczos" "$T/lanczos.json"
merge_refuses "$dir" "the missing Lanczos task (not named)" "lanczos"
"$gf" merge "$dir" --allow-partial --json "$T/partial2.json" -q 2>"$T/err" || fail "--allow-partial: $(cat "$T/err")"
[ "$(value_of "$T/partial2.json" layers.0.product_jacobian.spectral_norm)" = null ] || fail "a Lanczos value without its task"
a=$(value_of "$T/partial2.json" layers.1.block_jacobian.frobenius_norm)
b=$(value_of "$T/post-local.json" layers.1.block_jacobian.frobenius_norm)
[ "$a" = "$b" ] || fail "the estimates without the Lanczos task: $a, not $b"
mv "$T/lanczos.json" "$dir/results/$lanczos"
echo "ok: a missing probe or Lanczos task is named; --allow-partial reports what is there"

# a foreign result (another seed's plan) and a result with edited sums: refused by name
"$gf" analyze --placement post $MODEL --seed 9 --plan "$T/other" --tasks 3 -q || fail "other plan"
"$gf" task "$T/other" 1 -q || fail "other plan's task"
one=$(ls "$T/other/results" | grep probes | head -1)
cp "$dir/results/$one" "$T/mine.json"
cp "$T/other/results/$one" "$dir/results/$one"
merge_refuses "$dir" "a foreign result (not named)" "$one.*other options"
/usr/bin/python3 - "$T/mine.json" "$dir/results/$one" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["report"]["hutchinson_partial"]["product"][0][0][0] = -1.0
json.dump(j, open(sys.argv[2], "w"))
PY
merge_refuses "$dir" "edited sums" "cannot be merged.*not its probes"
cp "$T/mine.json" "$dir/results/$one"
"$gf" merge "$dir" --json "$T/x.json" -q || fail "merge with the result restored"
echo "ok: results of another plan or with edited sums are refused by name"

# gradflow slurm: the estimate before anything is submitted
"$gf" analyze --placement post $MODEL --plan "$T/s" --tasks 3 -q || fail "slurm plan"
"$gf" slurm "$T/s" > "$T/out" 2>&1 || fail "slurm: $(cat "$T/out")"
grep -q "estimated .* core-hours for the 4 tasks to run" "$T/out" || fail "slurm prints no estimate: $(cat "$T/out")"
echo "ok: gradflow slurm prints the estimated core-hours"

bad "--plan without probes" analyze --placement post $MODEL --hutchinson-probes 0 --plan "$T/nothing"
bad "--tasks above the chunks" analyze --placement post $MODEL --plan "$T/nothing" --tasks 7
bad "--probe-chunk 0" analyze --placement post $BASE --probe-chunk 0 --plan "$T/nothing"
bad "--probe-chunk with --mode streamed" analyze --placement post --layers 2 --d-model 8 --heads 2 --mode streamed --probe-chunk 4
echo "ok: bad options exit 2 with a one-line fix and write nothing"
