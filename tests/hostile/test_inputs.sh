#!/bin/sh
# test_inputs.sh GRADFLOW CASE — a result is reused only for the same inputs, by content (issue 39 item 8): a
# --resume folder or a plan whose --weights or --input file changed since is refused naming the file (exit 2, no
# report); the same file under another name is reused. Results of two BLAS kernel sets are not mixed (item 10); a
# task replaces a result of its ID that cannot be used, and a failing task says why in failed/ (item 12).
# Exit 0 pass, 1 fail.
gf=${1:?usage: test_inputs.sh GRADFLOW CASE}
case_=${2:?usage: test_inputs.sh GRADFLOW CASE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
model="--layers 1 --d-model 8 --heads 2"
seeds="--seeds 1"
weights() {  # weights SEED: a torch-encoder checkpoint drawn from SEED at $tmp/w.safetensors
  "$gf" export --placement pre $model --seed "$1" --out "$tmp/w.safetensors" 2> "$tmp/err" || fail "export: $(cat "$tmp/err")"
}
input() {  # input SEED FILE: an (8, 8) array drawn from SEED (a Jacobian of one token: gradflow writes the .npy)
  "$gf" jacobian --placement pre $model --seq-len 1 --seed "$1" --out "$2" 2> "$tmp/err" || fail "jacobian: $(cat "$tmp/err")"
}
same_result() {  # same_result A B: two result files equal but for their timings
  for f in "$1" "$2"; do
    sed -E '/"(elapsed_seconds|model_and_init|forward_backward|analyses)":/d' "$f" > "$f.untimed"
  done
  cmp -s "$1.untimed" "$2.untimed"
}
refused() {  # refused WORDS -- ARGS: gradflow ARGS exits 2 with one line saying WORDS, writes no report
  words=$1; shift 2
  "$gf" "$@" 2> "$tmp/err" > /dev/null
  rc=$?
  [ $rc -eq 2 ] || fail "gradflow $* exited $rc (want 2): $(cat "$tmp/err")"
  [ "$(grep -c 'error' "$tmp/err")" -eq 1 ] || fail "not one error line: $(cat "$tmp/err")"
  grep -q -- "$words" "$tmp/err" || fail "the message does not say '$words': $(cat "$tmp/err")"
  grep -q "fix:" "$tmp/err" || fail "no fix in: $(cat "$tmp/err")"
  [ -e "$tmp/report.json" ] && fail "a report was written"
  :
}
case $case_ in
  resume_weights)
    weights 1
    run="compare --placements pre,post $model $seeds --weights $tmp/w.safetensors --resume $tmp/r"
    "$gf" $run --json "$tmp/first.json" 2> "$tmp/err" > /dev/null || fail "compare: $(cat "$tmp/err")"
    weights 2
    refused "the --weights file held other contents" -- $run --json "$tmp/report.json"
    weights 1  # the first checkpoint again: its results are reused
    "$gf" $run --json "$tmp/report.json" 2> "$tmp/err" > /dev/null || fail "compare on the first weights again: $(cat "$tmp/err")"
    grep -q "2 of 2 configurations already done" "$tmp/err" || fail "not resumed: $(cat "$tmp/err")"
    echo "ok: --resume refuses results of another checkpoint at the same path" ;;
  resume_input)
    input 1 "$tmp/x.npy"
    run="compare --placements pre,post $model $seeds --resume $tmp/r"
    "$gf" $run --input "$tmp/x.npy" 2> "$tmp/err" > /dev/null || fail "compare: $(cat "$tmp/err")"
    input 2 "$tmp/x.npy"
    refused "the --input file held other contents" -- $run --input "$tmp/x.npy" --json "$tmp/report.json"
    input 1 "$tmp/renamed.npy"  # the same content under another name: reused
    "$gf" $run --input "$tmp/renamed.npy" --json "$tmp/report.json" 2> "$tmp/err" > /dev/null || fail "renamed: $(cat "$tmp/err")"
    grep -q "2 of 2 configurations already done" "$tmp/err" || fail "not resumed: $(cat "$tmp/err")"
    echo "ok: --resume goes by the input's content, not its name" ;;
  plan_input)
    input 1 "$tmp/x.npy"
    "$gf" compare --placements pre,post $model $seeds --input "$tmp/x.npy" --plan "$tmp/p" -q 2> "$tmp/err" ||
      fail "compare --plan: $(cat "$tmp/err")"
    "$gf" task "$tmp/p" 0 2> "$tmp/err" > /dev/null || fail "task 0: $(cat "$tmp/err")"
    input 2 "$tmp/x.npy"  # the input changes between the tasks
    refused "the --input file held other contents" -- task "$tmp/p" 1
    [ -e "$tmp/p/results/post_L1_s0.json" ] && fail "task 1 wrote a result from the changed input"
    refused "the --input file held other contents" -- merge "$tmp/p" --allow-partial --json "$tmp/report.json"
    echo "ok: a plan refuses tasks and merges on an input changed since it was written" ;;
  merge_kernels)
    "$gf" compare --placements pre,post $model $seeds --plan "$tmp/p" -q 2> "$tmp/err" || fail "compare --plan: $(cat "$tmp/err")"
    "$gf" task "$tmp/p" 0-1 -q 2> "$tmp/err" > /dev/null || fail "tasks: $(cat "$tmp/err")"
    "$gf" merge "$tmp/p" --json "$tmp/one.json" -q 2> "$tmp/err" || fail "merge: $(cat "$tmp/err")"
    kernel=$(sed -n 's/^ "blas_kernel": "\(.*\)",$/\1/p' "$tmp/p/results/pre_L1_s0.json")
    [ -n "$kernel" ] || fail "the result records no blas_kernel: $(head -c 300 "$tmp/p/results/pre_L1_s0.json")"
    grep -q "\"blas_kernel\": \"$kernel\"" "$tmp/one.json" || fail "the merged report does not name the kernel $kernel"
    # task 1 as if computed on another machine's kernels
    sed -i 's/^ "blas_kernel": ".*",$/ "blas_kernel": "OpenBLAS 0.3.21 OtherCore",/' "$tmp/p/results/post_L1_s0.json"
    refused "different BLAS kernels" -- merge "$tmp/p" --json "$tmp/report.json"
    grep -q "OPENBLAS_CORETYPE" "$tmp/err" || fail "the fix does not say how to choose the kernel: $(cat "$tmp/err")"
    "$gf" merge "$tmp/p" --allow-mixed-kernels --json "$tmp/mixed.json" -q 2> "$tmp/err" ||
      fail "merge --allow-mixed-kernels: $(cat "$tmp/err")"
    grep -q "OtherCore" "$tmp/mixed.json" || fail "the mixed report does not list both kernels"
    echo "ok: merge refuses results of two kernel sets unless --allow-mixed-kernels, and records them" ;;
  resume_kernels)
    run="compare --placements pre,post $model $seeds --resume $tmp/r -q"
    "$gf" $run 2> "$tmp/err" || fail "compare: $(cat "$tmp/err")"
    rm "$tmp/r/post_L1_s0.json"
    sed -i 's/^ "blas_kernel": ".*",$/ "blas_kernel": "OpenBLAS 0.3.21 OtherCore",/' "$tmp/r/pre_L1_s0.json"
    refused "this run computes on" -- $run --json "$tmp/report.json"
    [ -e "$tmp/r/post_L1_s0.json" ] && fail "the refused run computed a configuration first"
    # a real second kernel set: OpenBLAS's generic x86-64 kernels, chosen by OPENBLAS_CORETYPE (DYNAMIC_ARCH builds)
    rm -rf "$tmp/r"
    "$gf" $run 2> "$tmp/err" || fail "compare: $(cat "$tmp/err")"
    kernel=$(sed -n 's/^ "blas_kernel": "\(.*\)",$/\1/p' "$tmp/r/pre_L1_s0.json")
    case "$kernel" in
      "OpenBLAS "*" Prescott") echo "ok (the generic kernels already run here: the edited case only)" ;;
      "OpenBLAS "*)
        rm "$tmp/r/post_L1_s0.json"
        OPENBLAS_CORETYPE=Prescott "$gf" $run --json "$tmp/report.json" 2> "$tmp/err" > /dev/null
        rc=$?
        if grep -q "Prescott" "$tmp/r/pre_L1_s0.json" "$tmp/err"; then  # OpenBLAS took it: refused, naming both
          [ $rc -eq 2 ] && grep -q "this run computes on" "$tmp/err" || fail "OPENBLAS_CORETYPE=Prescott: exit $rc: $(cat "$tmp/err")"
        fi
        echo "ok: --resume refuses results of another kernel set ($kernel)" ;;
      *) echo "ok (no OpenBLAS: the edited case only)" ;;
    esac ;;
  task_replaces)
    "$gf" compare --placements pre,post $model $seeds --plan "$tmp/p" -q 2> "$tmp/err" || fail "compare --plan: $(cat "$tmp/err")"
    "$gf" task "$tmp/p" 0-1 -q 2> "$tmp/err" > /dev/null || fail "tasks: $(cat "$tmp/err")"
    cp "$tmp/p/results/pre_L1_s0.json" "$tmp/good.json"
    echo "garbage" > "$tmp/p/results/pre_L1_s0.json"
    "$gf" task "$tmp/p" 0 2> "$tmp/err" > /dev/null || fail "task 0 on a corrupt result: $(cat "$tmp/err")"
    same_result "$tmp/good.json" "$tmp/p/results/pre_L1_s0.json" || fail "task 0 did not compute its result again"
    [ "$(cat "$tmp/p/failed/pre_L1_s0.rejected.json")" = garbage ] || fail "no copy of the corrupt result under failed/"
    grep -q "not a gradflow result" "$tmp/p/failed/pre_L1_s0.rejected.txt" || fail "no reason kept under failed/"
    # a foreign result (task 1's) under task 0's name
    cp "$tmp/p/results/post_L1_s0.json" "$tmp/p/results/pre_L1_s0.json"
    "$gf" task "$tmp/p" 0 -q 2> "$tmp/err" > /dev/null || fail "task 0 on a foreign result: $(cat "$tmp/err")"
    same_result "$tmp/good.json" "$tmp/p/results/pre_L1_s0.json" || fail "task 0 kept a foreign result"
    grep -q "other options" "$tmp/p/failed/pre_L1_s0.rejected.txt" || fail "no reason for the foreign result"
    # merge --allow-partial counts a corrupt result as missing, with its reason
    echo "{}" > "$tmp/p/results/post_L1_s0.json"
    refused "not a gradflow result" -- merge "$tmp/p" --json "$tmp/report.json"
    "$gf" merge "$tmp/p" --allow-partial --json "$tmp/partial.json" -q 2> "$tmp/err" ||
      fail "merge --allow-partial over a corrupt result: $(cat "$tmp/err")"
    grep -q "post_L1_s0.*cannot be used" "$tmp/err" || fail "the corrupt result is not named: $(cat "$tmp/err")"
    grep -q '"missing"' "$tmp/partial.json" || fail "the partial report does not list the corrupt result as missing"
    echo "ok: a task replaces a corrupt or foreign result (kept under failed/), merge --allow-partial skips it" ;;
  task_failure)
    "$gf" compare --placements pre,post $model $seeds --device cuda --plan "$tmp/p" -q 2> "$tmp/err" ||
      fail "compare --device cuda --plan (no GPU needed to write it): $(cat "$tmp/err")"
    if "$gf" task "$tmp/p" 0 -q 2> "$tmp/err" > /dev/null; then
      echo "ok (a GPU ran the task: nothing to fail)"; exit 0
    fi
    [ -s "$tmp/p/failed/pre_L1_s0.txt" ] || fail "the failed task wrote no failed/pre_L1_s0.txt: $(cat "$tmp/err")"
    grep -q "fix:" "$tmp/p/failed/pre_L1_s0.txt" || fail "failed/pre_L1_s0.txt gives no fix: $(cat "$tmp/p/failed/pre_L1_s0.txt")"
    echo "ok: a task that fails (--device cuda without a GPU) writes failed/NAME.txt" ;;
  *) echo "unknown case $case_"; exit 1 ;;
esac
