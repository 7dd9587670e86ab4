#!/bin/sh
# test_slurm.sh GRADFLOW WORKDIR — gradflow on a real single-node Slurm cluster (docs/cluster.md): starts munged,
# slurmctld and slurmd (single_node_slurm.sh: this host with its CPUs and memory, private ports, state and logs in
# WORKDIR), then:
#   1. a compare plan of 6 tasks submitted with `gradflow slurm --submit`, one task failing (an injected fault: the
#      jobs run a wrapper, given as --gradflow, whose `task` is the tests' plan_task_fault failing task 3): the merge
#      job exits 2 and lists it; `gradflow merge` locally too; resubmission runs only that task; then the merged
#      report and CSV equal the local `compare` run's, every numeric leaf (scripts/compare_reports.py);
#   2. a train-sweep plan of 8 tasks in a folder with a space and a % (quoted in the directives, % kept literal in
#      --output), packed 3 to an array element (--max-array-size 3) on 2 CPUs each: the jobs log there; the merged
#      report equals the local `train-sweep` run's;
#   3. a --mode streamed analyze split into 4 tasks (analyze --plan): the merge job's report equals the local
#      single-process run's bit for bit, and `gradflow slurm` printed the estimated core-hours first;
#   4. a --mode matrix-free analyze whose Hutchinson probes split into 3 tasks plus the Lanczos task: the merge
#      job's report equals the local run with the same --probe-chunk.
# The daemons are stopped by PID when the test ends, also on failure. If they cannot start, the test fails with the
# daemon's own log lines (it is never skipped).
usage="usage: test_slurm.sh PATH/TO/gradflow WORKDIR PATH/TO/plan_task_fault"
gf=${1:?$usage}
W=${2:?$usage}
faulty_task=${3:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
cmp_reports="/usr/bin/python3 $here/../../scripts/compare_reports.py"
fail() { echo "FAIL: $*"; exit 1; }

. "$here/single_node_slurm.sh"
slurm_up "$W"

# --- 1. compare: a failed task, the merge refusing, a resubmission of only that task --------------------------------
C="compare --placements post,pre,sandwich --layers 2,3 --seeds 1 --d-model 8 --heads 2 --seq-len 4"
P="$W/runs/compare"
"$gf" $C -q --json "$W/compare-local.json" --csv "$W/compare-local.csv" || fail "local compare"
"$gf" $C --plan "$P" -q || fail "compare --plan"
# the jobs' gradflow: its task fails task 3 on purpose, its merge is gradflow's
printf '#!/bin/sh\nif [ "$1" = task ]; then shift; exec "%s" 3 "$@"; fi\nexec "%s" "$@"\n' "$faulty_task" "$gf" \
  >"$W/faulty-gradflow" && chmod +x "$W/faulty-gradflow" || fail "cannot write the fault wrapper"
"$gf" slurm "$P" --gradflow "$W/faulty-gradflow" --submit --max-running 2 --time 00:10:00 --merge-time 00:05:00 --merge-mem 200M \
  --csv "$P/report.csv" >"$W/submit1.out" 2>"$W/submit1.err" ||
  fail "gradflow slurm --submit: $(cat "$W/submit1.err")"
! grep -q "MaxArraySize unknown" "$W/submit1.err" || fail "MaxArraySize not read from scontrol: $(cat "$W/submit1.err")"
grep -q '^#SBATCH --array=0-5%2$' "$P/slurm/array.sbatch" || fail "array line: $(grep array "$P/slurm/array.sbatch")"
grep -q '^#SBATCH --time=00:05:00$' "$P/slurm/merge.sbatch" && grep -q '^#SBATCH --mem=200M$' "$P/slurm/merge.sbatch" &&
  ! grep -q -- '--time=00:10:00' "$P/slurm/merge.sbatch" || fail "merge limits: $(grep SBATCH "$P/slurm/merge.sbatch")"
aid=$(job_id array "$W/submit1.out")
mid=$(job_id merge "$W/submit1.out")
[ -n "$aid" ] && [ -n "$mid" ] || fail "no job IDs printed: $(cat "$W/submit1.out")"
wait_jobs "$aid,$mid"
[ ! -e "$P/report.json" ] || fail "the merge job wrote a report although task 3 failed"
scontrol show job "$mid" | grep -q "ExitCode=2:0" || fail "merge job: $(scontrol show job "$mid" | grep -o 'ExitCode=[^ ]*')"
grep -q "task 3 (pre_L3_s0) failed: .*injected fault" "$P/slurm/merge-$mid.out" ||
  fail "the merge job did not list task 3: $(cat "$P/slurm/merge-$mid.out")"
"$gf" merge "$P" -q 2>"$W/merge.err"
rc=$?
[ $rc -eq 2 ] || fail "merge with a failed task: exit $rc, expected 2"
grep -q "rerun: gradflow task $P 3" "$W/merge.err" || fail "merge did not give the rerun command: $(cat "$W/merge.err")"
echo "ok: task 3 failed under Slurm; the merge job and gradflow merge list it and exit 2"

before=$(cksum "$P"/results/*.json)
"$gf" slurm "$P" --submit --csv "$P/report.csv" >"$W/submit2.out" 2>"$W/submit2.err" || fail "resubmit: $(cat "$W/submit2.err")"
grep -q '^#SBATCH --array=3$' "$P/slurm/array.sbatch" || fail "resubmission array: $(grep array "$P/slurm/array.sbatch")"
aid2=$(job_id array "$W/submit2.out")
mid2=$(job_id merge "$W/submit2.out")
wait_jobs "$aid2,$mid2"
[ "$(ls "$P"/slurm/task-"$aid2"_*.out | wc -l)" -eq 1 ] || fail "the resubmission ran more than one task"
after=$(cksum "$P"/results/*.json | grep -v pre_L3_s0)
[ "$after" = "$before" ] || fail "the resubmission rewrote finished results"
scontrol show job "$mid2" | grep -q "ExitCode=0:0" || fail "second merge job: $(cat "$P/slurm/merge-$mid2.out")"
$cmp_reports "$W/compare-local.json" "$P/report.json" || fail "merged compare report differs from the local run"
$cmp_reports "$W/compare-local.csv" "$P/report.csv" || fail "merged compare CSV differs from the local run"
echo "ok: resubmission ran only task 3; merged compare report and CSV equal the local run"

# --- 2. train-sweep: 8 tasks, 3 per array element, 2 CPUs each --------------------------------------------------
S="train-sweep --placements post,pre --layers 2 --warmup 0,5 --lr 1e-3,1e-2 --seeds 2 --steps 10 --log-every 5 \
--d-model 16 --heads 2 --seq-len 8 --vocab 8 --batch 4 --eval-size 8"
P="$W/runs/train sweep 50%x"  # a space and a % in the plan folder: quoted in every directive (issue 39 item 2)
"$gf" $S -q --threads 2 --json "$W/train-local.json" --csv "$W/train-local.csv" || fail "local train-sweep"
"$gf" $S --plan "$P" -q || fail "train-sweep --plan"
"$gf" slurm "$P" --submit --max-array-size 3 --cpus-per-task 2 --csv "$P/report.csv" >"$W/submit3.out" 2>&1 ||
  fail "gradflow slurm (train): $(cat "$W/submit3.out")"
grep -q '^#SBATCH --array=0-2$' "$P/slurm/array.sbatch" || fail "packed array: $(grep array "$P/slurm/array.sbatch")"
aid=$(job_id array "$W/submit3.out")
mid=$(job_id merge "$W/submit3.out")
wait_jobs "$aid,$mid"
[ -e "$P/slurm/merge-$mid.out" ] && ls "$P"/slurm/task-"$aid"_*.out > /dev/null ||
  fail "the jobs' logs are not in the plan folder (its space and % in --output): $(ls "$P/slurm" "$W/runs")"
scontrol show job "$mid" | grep -q "ExitCode=0:0" || fail "train merge job: $(cat "$P/slurm/merge-$mid.out")"
$cmp_reports "$W/train-local.json" "$P/report.json" || fail "merged train-sweep report differs from the local run"
$cmp_reports "$W/train-local.csv" "$P/report.csv" || fail "merged train-sweep CSV differs from the local run"
echo "ok: train-sweep, 8 tasks packed 3 per element: merged report and CSV equal the local run"

# analyze_on_slurm NAME TASKS IN_PLAN ARGS...: `gradflow analyze ARGS` run here, and the same written as a plan of
# TASKS (IN_PLAN tasks in all) submitted with `gradflow slurm --submit`, which prints the estimate first; the merge
# job's report equals the local run's
analyze_on_slurm() {
  name=$1 tasks=$2 in_plan=$3
  shift 3
  P="$W/runs/$name"
  "$gf" analyze "$@" -q --json "$W/$name-local.json" || fail "local $name analyze"
  "$gf" analyze "$@" --plan "$P" --tasks "$tasks" -q || fail "analyze --plan ($name)"
  "$gf" slurm "$P" --submit >"$W/submit-$name.out" 2>&1 || fail "gradflow slurm ($name): $(cat "$W/submit-$name.out")"
  grep -q "estimated .* core-hours for the $in_plan tasks to run" "$W/submit-$name.out" ||
    fail "no estimate: $(cat "$W/submit-$name.out")"
  aid=$(job_id array "$W/submit-$name.out")
  mid=$(job_id merge "$W/submit-$name.out")
  wait_jobs "$aid,$mid"
  scontrol show job "$mid" | grep -q "ExitCode=0:0" || fail "$name merge job: $(cat "$P/slurm/merge-$mid.out")"
  $cmp_reports "$W/$name-local.json" "$P/report.json" || fail "merged $name report differs from the local run"
}

# --- 3. a streamed analyze split into 4 tasks ----------------------------------------------------------------------
analyze_on_slurm streamed 4 4 --placement post --layers 3 --d-model 16 --heads 2 --seq-len 12 --mode streamed --stream-rows 16
echo "ok: a streamed analyze split into 4 Slurm tasks: the merged report equals the local run"

# --- 4. matrix-free: Hutchinson's probes in 3 tasks and the Lanczos values in one -----------------------------------
analyze_on_slurm probes 3 4 --placement pre --layers 3 --d-model 16 --heads 2 --seq-len 8 --mode matrix-free \
  --hutchinson-probes 10 --probe-chunk 3
echo "ok: a matrix-free analyze split into 3 probe tasks and a Lanczos task on Slurm: the merged report equals the local run"
