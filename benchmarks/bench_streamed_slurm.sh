#!/bin/sh
# bench_streamed_slurm.sh GRADFLOW WORKDIR [TASKS] — issue 36's end-to-end run (docs/benchmarks.md): the exact
# streamed run at N = 16384 (Post-LN, L = 24, d = 128, h = 4, n = 128; every ‖P_l‖_F and ‖B_l‖_F) once as a single
# process on every core, then as a plan of TASKS (16) tasks submitted with `gradflow slurm --submit` to a real
# single-node Slurm started here (tests/cluster/single_node_slurm.sh; as root, like the test), one CPU per task; the
# merge job's report must equal the single process's bit for bit (scripts/compare_reports.py). Prints each wall time.
# About fifteen minutes each way on the 2-core VM.
usage="usage: bench_streamed_slurm.sh PATH/TO/gradflow WORKDIR [TASKS]"
gf=$(cd "$(dirname "${1:?$usage}")" && pwd)/$(basename "$1")
W=${2:?$usage}
tasks=${3:-16}
here=$(cd "$(dirname "$0")/../tests/cluster" && pwd)
cmp_reports="/usr/bin/python3 $here/../../scripts/compare_reports.py"
fail() { echo "FAIL: $*"; exit 1; }

. "$here/single_node_slurm.sh"
slurm_up "$W"
A="analyze --placement post --layers 24 --d-model 128 --heads 4 --seq-len 128 --mode streamed"
P="$W/runs/n16k-l24"
t0=$(date +%s.%N)
"$gf" $A -q --json "$W/single.json" || fail "the single-process run"
t1=$(date +%s.%N)
"$gf" $A --plan "$P" --tasks "$tasks" -q || fail "analyze --plan"
"$gf" slurm "$P" --submit --time 02:00:00 >"$W/submit.out" 2>&1 || fail "gradflow slurm: $(cat "$W/submit.out")"
cat "$W/submit.out"
aid=$(job_id array "$W/submit.out")
mid=$(job_id merge "$W/submit.out")
wait_jobs "$aid,$mid" 7200
t2=$(date +%s.%N)
scontrol show job "$mid" | grep -q "ExitCode=0:0" || fail "merge job: $(cat "$P/slurm/merge-$mid.out")"
/usr/bin/python3 - "$P" <<'PY'
import glob, json, sys
s = sorted(json.load(open(f))["report"]["elapsed_seconds"] for f in glob.glob(sys.argv[1] + "/results/*.json"))
print(f"tasks: {len(s)}, each {s[0]:.1f}-{s[-1]:.1f} s (sum {sum(s):.1f} s)")
PY
/usr/bin/python3 -c "print(f'single process: {$t1 - $t0:.1f} s; plan on Slurm (submit to merged report): {$t2 - $t1:.1f} s')"
$cmp_reports "$W/single.json" "$P/report.json" || fail "the merged report differs from the single process's"
