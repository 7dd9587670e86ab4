#!/bin/sh
# test_analyze_plan.sh GRADFLOW — a --mode streamed run split into tasks (analyze --plan, docs/cluster.md "Exact
# full-scale runs"): for placements of every stream layout (one stream, ResiDual's two, the parallel residual, a
# decoder block), with and without the B_l, and 1, 3 and 7 tasks over a row count none of them divides, the tasks
# run out of order and the merge's report equals the single-process run's, every numeric leaf bit for bit
# (scripts/compare_reports.py). Also: a task killed mid-run and one whose result was cut short are rerun and the
# merge is unchanged; a missing task is named with the command that reruns it (exit 2), and --allow-partial reports
# the rows covered and no norm; a result of another plan (another seed), of other BLAS kernels or of another gradflow
# is refused by name; bad options exit 2 with a one-line fix and write nothing; `gradflow slurm` prints the estimate.
gf=${1:?usage: test_analyze_plan.sh PATH/TO/gradflow}
here=$(cd "$(dirname "$0")" && pwd)
cmp_reports="/usr/bin/python3 $here/../../scripts/compare_reports.py"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$here/plan_helpers.sh"

# 5 tokens × d 8: N = 40 identity rows (80 with ResiDual's blocks), in chunks of 3: 14 (27) chunks
MODEL="--layers 3 --d-model 8 --heads 2 --d-ff 16 --seq-len 5 --mode streamed --stream-rows 3"

# check NAME TASKS WORDS...: the local run against plan + tasks + merge (plan_helpers.sh)
check() {
  name=$1 tasks=$2
  shift 2
  check_plan "$name" "$tasks" "$tasks" "$@"
}

for tasks in 1 3 7; do
  check post "$tasks" --placement post $MODEL
  check resi-dual "$tasks" --placement resi-dual $MODEL
done
check parallel 7 --placement parallel $MODEL
check pre-no-blocks 3 --placement pre --stream-blocks off $MODEL
check decoder 7 --placement pre --causal --kv-heads 1 --rope --ffn swiglu $MODEL
# the merged report has the norms (not the placeholders of a task) and no task's share
[ "$(value_of "$T/post-3.json" layers.0.product_jacobian.method)" = '"exact (streamed)"' ] || fail "merged norms: $(value_of "$T/post-3.json" layers.0.product_jacobian)"
grep -q streamed_partial "$T/post-3.json" && fail "the merged report keeps a task's streamed_partial"
[ "$(value_of "$T/post-3.json" summary.stream_chunks)" = 14 ] || fail "stream_chunks $(value_of "$T/post-3.json" summary.stream_chunks)"

# a task killed while it runs (a larger model, so that the kill lands mid-sweep) leaves nothing that is read as a
# result; run again, the plan merges to the local run
BIG="--placement post --layers 4 --d-model 48 --heads 4 --seq-len 48 --mode streamed --stream-rows 64"  # ~3 s on 1 thread
"$gf" analyze $BIG -q --json "$T/big-local.json" || fail "big: local run"
"$gf" analyze $BIG --plan "$T/big" --tasks 3 -q || fail "big: --plan"
"$gf" task "$T/big" 0-2 -q --threads 1 &
pid=$!
sleep 1
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
done_before=$(ls "$T/big/results" | grep -c '\.json$')
[ "$done_before" -lt 3 ] || echo "note: the kill came after every task had finished (a fast machine); the rerun below is a no-op"
"$gf" task "$T/big" 0-2 -q || fail "big: tasks after the kill"
"$gf" merge "$T/big" --json "$T/big-merged.json" -q || fail "big: merge after the kill"
$cmp_reports "$T/big-local.json" "$T/big-merged.json" || fail "big: the merge after a killed task differs"
echo "ok: a task killed mid-run ($done_before of 3 results before the kill), run again: the merge equals the local run"

# a result cut short (a disk that filled, a copy interrupted) is set aside and computed again by its task
dir="$T/post-3"
first=$(ls "$dir/results" | head -1)
cp "$dir/results/$first" "$T/saved.json"
head -c 200 "$T/saved.json" > "$dir/results/$first"
"$gf" merge "$dir" --json "$T/x.json" -q 2>"$T/err" && fail "merge of a cut-short result: exit 0"
[ ! -e "$T/x.json" ] || fail "a refused merge wrote its report"
grep -q "${first%.json}" "$T/err" || fail "the refusal does not name the result: $(cat "$T/err")"
"$gf" task "$dir" 0 -q 2>"$T/err" || fail "task 0 after a cut-short result: $(cat "$T/err")"
"$gf" merge "$dir" --json "$T/post-3-again.json" -q || fail "merge after rerunning the cut-short task"
$cmp_reports "$T/post-local.json" "$T/post-3-again.json" || fail "the merge after a rerun differs"
echo "ok: a cut-short result is refused by merge and replaced by its task"

# a missing task: named with the command that reruns it; --allow-partial: the rows covered, no norm
missing=$(ls "$dir/results" | sed -n 2p)
mv "$dir/results/$missing" "$T/missing.json"
"$gf" merge "$dir" --json "$T/x.json" -q 2>"$T/err"
[ $? -eq 2 ] || fail "merge with a task missing: not exit 2"
grep -q "${missing%.json}.*rerun: gradflow task" "$T/err" || fail "the missing task is not named with its rerun: $(cat "$T/err")"
[ ! -e "$T/x.json" ] || fail "a refused merge wrote its report"
"$gf" merge "$dir" --allow-partial --json "$T/partial.json" -q 2>"$T/err" || fail "--allow-partial: $(cat "$T/err")"
[ "$(value_of "$T/partial.json" layers.0.product_jacobian.frobenius_norm)" = null ] || fail "a partial merge reports a norm"
/usr/bin/python3 - "$T/partial.json" <<'PY' || fail "partial merge: rows covered"
import json, sys
r = json.load(open(sys.argv[1]))
cov, total = r["summary"]["streamed_rows_covered"], r["summary"]["streamed_rows_total"]
assert total == 40, total
assert r["partial"]["rows_covered"] == cov and r["partial"]["merged"] == 2, r["partial"]
assert len(cov) == 2 and sum(b - a for a, b in cov) < total, cov  # the middle range is missing
assert r["layers"][1]["grad_norm"] > 0  # the rest of the report is there
PY
mv "$T/missing.json" "$dir/results/$missing"
echo "ok: a missing task is named; --allow-partial reports the rows covered and no norm"

# a foreign result: the same rows of a plan with another seed, copied in — refused, naming it
"$gf" analyze --placement post $MODEL --seed 9 --plan "$T/other" --tasks 3 -q || fail "other plan"
"$gf" task "$T/other" 1 -q || fail "other plan's task"
cp "$dir/results/$missing" "$T/mine.json"
cp "$T/other/results/$missing" "$dir/results/$missing"
merge_refuses "$dir" "a foreign result (not named)" "$missing.*other options"
# a result of another gradflow (its configuration names another version)
sed 's/"gradflow_version": "[^"]*"/"gradflow_version": "0.0.1"/' "$T/mine.json" > "$dir/results/$missing"
merge_refuses "$dir" "another gradflow's result" "gradflow differs"
# a result of other BLAS kernels: refused unless --allow-mixed-kernels
sed 's/^ "blas_kernel": ".*",$/ "blas_kernel": "OpenBLAS 0.3.21 OtherCore",/' "$T/mine.json" > "$dir/results/$missing"
grep -q OtherCore "$dir/results/$missing" || fail "the test could not set the kernel: $(head -c 300 "$T/mine.json")"
merge_refuses "$dir" "two kernel sets" "different BLAS kernels"
# a result whose share was edited (a chunk's mantissa out of its form)
/usr/bin/python3 - "$T/mine.json" "$dir/results/$missing" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["report"]["streamed_partial"]["product"][0][0][0] = 1.5
json.dump(j, open(sys.argv[2], "w"))
PY
merge_refuses "$dir" "an edited share" "cannot be merged.*mantissa"
# a share edited within its form (a mantissa still in [0.5, 1)): refused by its digest (issue 60 item 6)
/usr/bin/python3 - "$T/mine.json" "$dir/results/$missing" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
q = j["report"]["streamed_partial"]["product"][0][0]
q[0] = 0.9 if q[0] != 0.9 else 0.8
json.dump(j, open(sys.argv[2], "w"))
PY
merge_refuses "$dir" "a share edited within its form" "cannot be merged.*do not match its \"digest\""
cp "$T/mine.json" "$dir/results/$missing"
"$gf" merge "$dir" --json "$T/x.json" -q || fail "merge with the result restored"
echo "ok: results of another plan, another gradflow, other kernels or an edited share are refused by name"

# gradflow slurm: the scripts and the estimated core-hours, before anything is submitted
"$gf" analyze --placement post $MODEL --plan "$T/s" --tasks 4 -q || fail "slurm plan"
"$gf" slurm "$T/s" > "$T/out" 2>&1 || fail "slurm: $(cat "$T/out")"
grep -q "estimated .* core-hours for the 4 tasks to run" "$T/out" || fail "slurm prints no estimate: $(cat "$T/out")"
grep -q "gradflow.* task " "$T/s/slurm/array.sbatch" || fail "no task line in the array script"
echo "ok: gradflow slurm writes the scripts and prints the estimated core-hours"

# bad options: exit 2, one line with a fix, nothing written
bad "--plan without --mode streamed or matrix-free" analyze --placement post --layers 2 --d-model 8 --heads 2 --plan "$T/nothing"
bad "--plan with --gradients-only" analyze --placement post --layers 2 --d-model 8 --heads 2 --gradients-only --plan "$T/nothing"
bad "--tasks above the chunks" analyze --placement post $MODEL --plan "$T/nothing" --tasks 15
bad "--stream-rows 0" analyze --placement post --layers 2 --d-model 8 --heads 2 --mode streamed --stream-rows 0 --plan "$T/nothing"
bad "--tasks without --plan" analyze --placement post $MODEL --tasks 3
bad "a task above --max-memory" analyze $BIG --plan "$T/nothing" --max-memory 1M
bad "--json with --plan" analyze --placement post $MODEL --plan "$T/nothing" --json "$T/nothing.json"
bad "merge --csv of an analyze plan" merge "$dir" --csv "$T/nothing.csv"
bad "merge --json into the plan" merge "$dir" --json "$dir/results/r.json"
echo "ok: bad options exit 2 with a one-line fix and write nothing"
