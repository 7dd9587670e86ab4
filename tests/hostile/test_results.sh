#!/bin/sh
# test_results.sh GRADFLOW CASE — nothing read back from a file is trusted (issue 39 items 9, 11): in a result, a
# gradient norm that is null, a string or negative, a field missing in one seed's result, are refused by name (exit
# 2, no report); values near the largest double are averaged without overflow (the std not null); a plan.json or a
# plotted report with a field of the wrong type is refused naming the field (exit 2, never the internal error 4).
# Exit 0 pass, 1 fail.
gf=${1:?usage: test_results.sh GRADFLOW CASE}
case_=${2:?usage: test_results.sh GRADFLOW CASE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# a one-configuration compare with two seeds, both tasks run
"$gf" compare --placements post --layers 1 --d-model 8 --heads 2 --seq-len 2 --seeds 2 --plan "$tmp/p" -q \
  > /dev/null 2>&1 || fail "compare --plan exited $?"
"$gf" task "$tmp/p" 0-1 > /dev/null 2>&1 || fail "task exited $?"
r0="$tmp/p/results/post_L1_s0.json"
r1="$tmp/p/results/post_L1_s1.json"
[ -f "$r1" ] || fail "no result $r1: $(ls "$tmp/p/results")"
edit() {  # edit FILE SED-EXPRESSION: the result edited in place (the test checks that it changed)
  sed "$2" "$1" > "$tmp/edited" || fail "sed"
  cmp -s "$1" "$tmp/edited" && fail "the edit '$2' changed nothing in $1"
  mv "$tmp/edited" "$1"
}
refused() {  # refused WORDS: merge exits 2 with one line naming WORDS, writes no report
  "$gf" merge "$tmp/p" --json "$tmp/report.json" -q 2> "$tmp/err"
  rc=$?
  [ $rc -eq 2 ] || fail "merge exited $rc (want 2): $(cat "$tmp/err")"
  [ "$(wc -l < "$tmp/err")" -le 1 ] || fail "the message is not one line: $(cat "$tmp/err")"
  grep -q -- "$1" "$tmp/err" || fail "the message does not say '$1': $(cat "$tmp/err")"
  [ -e "$tmp/report.json" ] && fail "a report was written"
  echo "ok: $(cat "$tmp/err")"
}
case $case_ in
  null_norm)
    edit "$r1" 's/"grad_norm": [-0-9.e+]*/"grad_norm": null/'
    refused "layers\[0\].grad_norm' is null" ;;
  string_norm)
    edit "$r1" 's/"grad_norm": [-0-9.e+]*/"grad_norm": "big"/'
    refused "not a norm" ;;
  negative_norm)
    edit "$r1" 's/"grad_norm": [-0-9.e+]*/"grad_norm": -1e308/'
    refused "is negative" ;;
  missing_field)
    edit "$r1" 's/"grad_norm":/"grad_nrm":/'
    refused "disagree at 'layers\[0\].grad_n" ;;
  huge)
    edit "$r0" 's/"grad_norm": [-0-9.e+]*/"grad_norm": 1e308/'
    edit "$r1" 's/"grad_norm": [-0-9.e+]*/"grad_norm": 1.5e308/'
    "$gf" merge "$tmp/p" --json "$tmp/report.json" -q 2> "$tmp/err" || fail "merge exited $?: $(cat "$tmp/err")"
    tr -d ' \n' < "$tmp/report.json" > "$tmp/flat"
    # (the interval 1.25e308 ± 12.7·2.5e307 ends past the largest double on both sides: null, not inf)
    grep -q '"grad_norm":{"mean":1.25e+308,"std":3.5355339059327[0-9]*e+307,"n":2,"se":2.5e+307,"ci_low":null,"ci_high":null,"median":1.25e+308,' "$tmp/flat" ||
      fail "the mean and std of 1e308 and 1.5e308: $(grep -o '"grad_norm":{[^}]*}' "$tmp/flat" | head -2)"
    echo "ok: 1e308 and 1.5e308 average to 1.25e308 with their std, no overflow" ;;
  plan_types)
    for expr in 's/"command": "compare"/"command": 5/g' 's/"gradflow_plan": 1/"gradflow_plan": "1"/' \
                's/"id": 0/"id": "0"/'; do
      cp "$tmp/p/plan.json" "$tmp/plan.keep"
      edit "$tmp/p/plan.json" "$expr"
      "$gf" task "$tmp/p" 0 > /dev/null 2> "$tmp/err"
      rc=$?
      [ $rc -eq 2 ] || fail "task on a plan edited by '$expr' exited $rc (want 2): $(cat "$tmp/err")"
      grep -q "fix:" "$tmp/err" || fail "no fix in: $(cat "$tmp/err")"
      mv "$tmp/plan.keep" "$tmp/p/plan.json"
    done
    # issue 60 item 23: an analyze plan's top-level "command" (beside its spec's) edited is refused, not ignored
    "$gf" analyze --placement pre --layers 1 --d-model 8 --heads 2 --seq-len 2 --mode streamed --plan "$tmp/a" --tasks 1 \
      > /dev/null 2>&1 || fail "analyze --plan exited $?"
    edit "$tmp/a/plan.json" 's/^ "command": "analyze"/ "command": 5/'
    "$gf" task "$tmp/a" 0 > /dev/null 2> "$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "task on a plan whose command is 5 exited $rc (want 2): $(cat "$tmp/err")"
    grep -q "the plan was edited" "$tmp/err" || fail "the message: $(cat "$tmp/err")"
    echo "ok: plan.json fields of the wrong type are refused with exit 2" ;;
  plot_types)
    "$gf" analyze --placement pre --layers 1 --d-model 8 --heads 2 --seq-len 2 -q --json "$tmp/r.json" || fail "analyze"
    for expr in 's/"placement": "pre"/"placement": 7/' 's/"config": {/"config": 3, "was": {/' \
                's/"heads": 2/"heads": "two"/'; do
      cp "$tmp/r.json" "$tmp/e.json"
      edit "$tmp/e.json" "$expr"
      for kind in grad-by-depth attention-entropy; do
        "$gf" plot "$tmp/e.json" --kind $kind -o "$tmp/f.svg" --no-render 2> "$tmp/err"
        rc=$?
        [ $rc -eq 2 ] || fail "plot --kind $kind of a report edited by '$expr' exited $rc (want 2): $(cat "$tmp/err")"
        grep -q "config" "$tmp/err" || fail "the message does not name the field: $(cat "$tmp/err")"
      done
    done
    echo "ok: a plotted report's config of the wrong type is refused naming the field" ;;
  *) echo "unknown case $case_"; exit 1 ;;
esac
