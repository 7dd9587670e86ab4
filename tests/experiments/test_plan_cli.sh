#!/bin/sh
# test_plan_cli.sh GRADFLOW — plans without Slurm (docs/cluster.md): for compare, sweep, train-sweep and `run SPEC`,
# --plan DIR, then its tasks run in pieces and out of order (`gradflow task`, one by one, as ranges, and with
# xargs -P), then `gradflow merge`, whose JSON and CSV equal the single-machine run's, every numeric leaf bit for bit
# (scripts/compare_reports.py). Also: a merge with tasks missing lists them with the command to rerun each and exits 2;
# --allow-partial merges the rest and records the missing ones; a killed task's leftovers are never read as a result;
# a finished task is not rerun; bad input exits 2 with a one-line fix and writes nothing. A task that fails (an
# injected fault, by the tests' own plan_task_fault: the command line has no way to inject one) leaves no result,
# and the merge names the failure.
gf=${1:?usage: test_plan_cli.sh PATH/TO/gradflow PATH/TO/plan_task_fault}
faulty_task=${2:?usage: test_plan_cli.sh PATH/TO/gradflow PATH/TO/plan_task_fault}
here=$(cd "$(dirname "$0")" && pwd)
cmp_reports="/usr/bin/python3 $here/../../scripts/compare_reports.py"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
tasks_of() { /usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tasks']))" "$1/plan.json"; }

MODEL="--d-model 8 --heads 2 --seq-len 4"
TRAIN="--layers 2 --warmup 0,5 --lr 1e-3,1e-2 --seeds 2 --steps 10 --log-every 5 --d-model 16 --heads 2 --seq-len 8 --vocab 8 --batch 4 --eval-size 8"

# check NAME WORDS...: local run vs plan + tasks + merge
check() {
  name=$1
  shift
  "$gf" "$@" -q --threads 2 --json "$T/$name-local.json" --csv "$T/$name-local.csv" || fail "$name: local run"
  "$gf" "$@" --plan "$T/$name" 2>"$T/err" || fail "$name: --plan: $(cat "$T/err")"
  [ -s "$T/$name/plan.json" ] || fail "$name: no plan.json"
  n=$(tasks_of "$T/$name")
  [ "$n" -ge 6 ] || fail "$name: only $n tasks"
  # a second --plan with the same experiment is accepted (keeps the directory); no result yet
  "$gf" "$@" --plan "$T/$name" 2>"$T/err" || fail "$name: same --plan again: $(cat "$T/err")"
  # tasks: the last one first, then a range on 2 threads, then the rest through xargs -P 2
  "$gf" task "$T/$name" $((n - 1)) -q || fail "$name: task $((n - 1))"
  "$gf" task "$T/$name" 0-2 --threads 2 -q || fail "$name: task 0-2"
  seq 3 $((n - 2)) | xargs -P 2 -I{} "$gf" task "$T/$name" {} -q || fail "$name: xargs tasks"
  [ "$(ls "$T/$name/results" | grep -c '\.json$')" -eq "$n" ] || fail "$name: not $n results"
  "$gf" merge "$T/$name" --json "$T/$name-merged.json" --csv "$T/$name-merged.csv" -q 2>"$T/err" ||
    fail "$name: merge: $(cat "$T/err")"
  $cmp_reports "$T/$name-local.json" "$T/$name-merged.json" || fail "$name: merged JSON differs from the local run"
  $cmp_reports "$T/$name-local.csv" "$T/$name-merged.csv" || fail "$name: merged CSV differs from the local run"
  echo "ok: $name: $n tasks merged, JSON and CSV equal to the local run"
}

check compare compare --placements post,pre --layers 2,3 --seeds 2 $MODEL
check sweep sweep --placement post,pre --layers 2 --param init-scale --values 1,0.5 --seeds 2 $MODEL
check sweep2d sweep --placement post,pre --layers 2 --param init-scale --values 1,0.5 --param2 residual-scale \
  --values2 0.5,1,2 --seeds 2 $MODEL
[ "$(tasks_of "$T/sweep2d")" -eq 24 ] || fail "sweep2d: $(tasks_of "$T/sweep2d") tasks, expected 2 x 2 x 3 x 2 = 24"
[ -e "$T/sweep2d/results/pre_L2_0.5_2_s1.json" ] || fail "sweep2d: no result named for both values: $(ls "$T/sweep2d/results" | head -3)"
check train train-sweep --placements post,pre $TRAIN
cat > "$T/spec.json" <<'SPEC'
{"gradflow_spec": 1, "claim": "test", "description": "a tiny spec", "command": "compare",
 "options": {"placements": "post,pre,sandwich", "layers": [2, 3], "seeds": 2, "d-model": 8, "heads": 2, "seq-len": 4},
 "plot": {"metric": "bottom.grad_norm", "ratio": true}}
SPEC
# a 2-D sweep as a spec: plan, tasks and merge equal the local run
cat > "$T/spec2d.json" <<'SPEC'
{"gradflow_spec": 1, "claim": "test", "description": "a tiny 2-D sweep", "command": "sweep",
 "options": {"placement": "post,pre", "param": "init-scale", "values": "0.5,2", "param2": "layers",
             "values2": [1, 3], "seeds": 2, "d-model": 8, "heads": 2, "seq-len": 4}}
SPEC
"$gf" run "$T/spec2d.json" -q --threads 2 --json "$T/spec2d-local.json" --csv "$T/spec2d-local.csv" || fail "run 2-D spec: local"
"$gf" run "$T/spec2d.json" --plan "$T/spec2d" 2>"$T/err" || fail "run 2-D spec --plan: $(cat "$T/err")"
n=$(tasks_of "$T/spec2d")
[ "$n" -eq 16 ] || fail "run 2-D spec: $n tasks, expected 16"
seq 0 $((n - 1)) | xargs -P 2 -I{} "$gf" task "$T/spec2d" {} -q || fail "run 2-D spec: tasks"
"$gf" merge "$T/spec2d" --json "$T/spec2d-merged.json" --csv "$T/spec2d-merged.csv" -q || fail "run 2-D spec: merge"
$cmp_reports "$T/spec2d-local.json" "$T/spec2d-merged.json" || fail "run 2-D spec: merged JSON differs"
$cmp_reports "$T/spec2d-local.csv" "$T/spec2d-merged.csv" || fail "run 2-D spec: merged CSV differs"
/usr/bin/python3 - "$T/spec2d-merged.json" <<'PY' || fail "run 2-D spec: the report's axes"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["param"] == "init-scale" and r["param2"] == "layers" and r["values2"] == ["1", "3"], r.get("values2")
assert [(g["placement"], g["value"], g["value2"], g["layers"]) for g in r["groups"]][:3] == \
    [("post", "0.5", "1", 1), ("post", "0.5", "3", 3), ("post", "2", "1", 1)], r["groups"][:3]
assert r["spec"]["options"]["param2"] == "layers", r["spec"]
PY
echo "ok: run 2-D SPEC: $n tasks merged, equal to the local run"

"$gf" run "$T/spec.json" -q --threads 2 --json "$T/spec-local.json" || fail "run spec: local"
"$gf" run "$T/spec.json" --plan "$T/spec" 2>"$T/err" || fail "run spec --plan: $(cat "$T/err")"
n=$(tasks_of "$T/spec")
"$gf" task "$T/spec" 0-$((n - 1)) -q || fail "run spec: tasks"
"$gf" merge "$T/spec" --json "$T/spec-merged.json" -q || fail "run spec: merge"
$cmp_reports "$T/spec-local.json" "$T/spec-merged.json" || fail "run spec: merged JSON differs"
grep -q '"claim": "test"' "$T/spec-merged.json" || fail "run spec: the merged report lacks the spec's claim"
echo "ok: run SPEC: $n tasks merged, equal to the local run"

# a finished task is not rerun (its file is left as it is)
before=$(cksum < "$T/compare/results/post_L2_s0.json")
"$gf" task "$T/compare" 0 2>"$T/err" || fail "rerun of a finished task"
grep -q "1 of 1 configurations already done" "$T/err" || fail "a finished task ran again: $(cat "$T/err")"
[ "$(cksum < "$T/compare/results/post_L2_s0.json")" = "$before" ] || fail "a finished task's result changed"

# tasks missing: listed with their rerun commands, exit 2, no report written
rm "$T/compare/results/pre_L3_s1.json" "$T/compare/results/post_L2_s1.json"
# a killed task's leftover (its temporary file) is no result
echo '{"configuration": {}, "rep' > "$T/compare/results/pre_L3_s1.json.tmp.4242"
"$gf" merge "$T/compare" --json "$T/partial.json" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] || fail "merge with missing tasks: exit $rc, expected 2"
grep -q "task 1 (post_L2_s1) missing; rerun: gradflow task $T/compare 1" "$T/err" || fail "task 1 not listed: $(cat "$T/err")"
grep -q "task 7 (pre_L3_s1) missing" "$T/err" || fail "task 7 not listed: $(cat "$T/err")"
grep -q "2 of 8 tasks" "$T/err" || fail "no count of missing tasks: $(cat "$T/err")"
[ ! -e "$T/partial.json" ] || fail "a refused merge wrote its report"
# --allow-partial: the rest merged, the missing listed in the report
"$gf" merge "$T/compare" --allow-partial -q --json "$T/partial.json" 2>"$T/err" || fail "--allow-partial: $(cat "$T/err")"
/usr/bin/python3 - "$T/partial.json" <<'PY' || fail "--allow-partial report"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["partial"]
assert p["tasks"] == 8 and p["merged"] == 6, p
assert [m["id"] for m in p["missing"]] == [1, 7], p
g = {(x["placement"], x["layers"]): x for x in r["groups"]}
assert g[("post", 2)]["seeds"] == [0] and g[("pre", 3)]["seeds"] == [0] and g[("pre", 2)]["seeds"] == [0, 1], g.keys()
PY
# an injected fault: the task fails (exit != 0), merge names the failure
"$faulty_task" 1 "$T/compare" 1 -q 2>"$T/err" && fail "an injected fault did not fail the task"
grep -q "injected fault" "$T/err" || fail "no injected-fault message: $(cat "$T/err")"
[ ! -e "$T/compare/results/post_L2_s1.json" ] || fail "a failed task left a result"
"$gf" merge "$T/compare" -q 2>"$T/err"
grep -q "task 1 (post_L2_s1) failed: .*injected fault" "$T/err" || fail "merge does not name the failure: $(cat "$T/err")"
# rerun the missing ones: leftovers removed, merge complete and identical again
"$gf" task "$T/compare" 1,7 -q || fail "rerun of the missing tasks"
[ ! -e "$T/compare/results/pre_L3_s1.json.tmp.4242" ] || fail "a killed task's temporary file was left"
[ ! -e "$T/compare/failed/post_L2_s1.txt" ] || fail "the failure note stayed after the task succeeded"
"$gf" merge "$T/compare" -q --json "$T/again.json" || fail "merge after the rerun"
$cmp_reports "$T/compare-local.json" "$T/again.json" || fail "merge after the rerun differs"
echo "ok: missing tasks listed (exit 2), --allow-partial, injected fault, leftovers ignored, rerun completes"

# a killed task (kill -9 while it computes) leaves no result; a rerun completes it
"$gf" compare --placements post --layers 40 --seeds 1 --d-model 64 --heads 4 --seq-len 32 --plan "$T/slow" 2>/dev/null ||
  fail "slow plan"
"$gf" task "$T/slow" 0 -q &
pid=$!
sleep 0.5
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[ ! -e "$T/slow/results/post_L40_s0.json" ] || echo "(the slow task finished before the kill: nothing to check)"
"$gf" merge "$T/slow" -q 2>/dev/null
[ $? -eq 2 ] || [ -e "$T/slow/results/post_L40_s0.json" ] || fail "a killed task was merged"

# bad input: exit 2, one line with a fix, nothing written
bad() {
  "$gf" "$@" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] || fail "'$*' exited $rc, expected 2: $(cat "$T/err")"
  [ "$(wc -l < "$T/err")" -eq 1 ] && grep -q "fix:" "$T/err" || fail "'$*': not one line with a fix: $(cat "$T/err")"
}
bad task "$T/compare" 8
bad task "$T/compare" x
bad task "$T/compare" 3-1
bad task "$T/nowhere" 0
bad merge "$T/nowhere" --json "$T/x.json"
bad compare --placements post,pre --layers 2 $MODEL --plan "$T/p2" --json "$T/x.json"
bad compare --placements post,pre --layers 2 $MODEL --plan "$T/p2" --resume "$T/r"
bad train-sweep --placements post $TRAIN --plan "$T/p2" --threads 2
bad compare --placements post --layers 2 $MODEL --plan "$T/compare" -q
echo '{"gradflow_plan": 7}' > "$T/broken.json" && mkdir -p "$T/broken" && mv "$T/broken.json" "$T/broken/plan.json"
bad task "$T/broken" 0
[ ! -e "$T/x.json" ] && [ ! -e "$T/p2/plan.json" ] || fail "a refused command wrote a file"
echo "ok: bad input refused with exit 2"

# the Slurm scripts (no Slurm needed to write them): packed when the plan exceeds MaxArraySize
rm "$T/compare/results/pre_L2_s0.json" "$T/compare/results/pre_L3_s1.json"
"$gf" slurm "$T/compare" --max-array-size 3 --max-running 2 --time 00:05:00 --partition debug >"$T/out" || fail "slurm"
s="$T/compare/slurm/array.sbatch"
grep -q '^#SBATCH --array=1-2%2$' "$s" || fail "array line (tasks 4 and 7 missing, 3 per element): $(grep array "$s")"
grep -q 'first=$((SLURM_ARRAY_TASK_ID \* 3))' "$s" || fail "packing: $(cat "$s")"
grep -q '^#SBATCH --partition=debug$' "$s" && grep -q '^#SBATCH --time=00:05:00$' "$s" || fail "partition/time"
grep -q "merge '.*compare' --json '.*report.json'" "$T/compare/slurm/merge.sbatch" || fail "merge script"
echo "ok: slurm scripts"
