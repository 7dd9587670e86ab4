#!/bin/sh
# test_compare_cli.sh GRADFLOW — compare and sweep from the command line: JSON with the spec and mean/std, the
# long CSV, `gradflow run` of the recorded spec reproducing the same CSV, the same numbers with 1 and 2 threads,
# and bad options refused with exit code 2 and a one-line "fix" message.
gf=${1:?usage: test_compare_cli.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
small="--d-model 16 --heads 2 --seq-len 4"

"$gf" compare --placements post,pre --layers 2,3 --seeds 3 $small --json "$tmp/c.json" --csv "$tmp/c1.csv" --threads 1 \
  >"$tmp/table" 2>/dev/null || fail "compare"
head -1 "$tmp/c1.csv" | grep -qx "placement,depth,layer,metric,mean,std,n" || fail "CSV header: $(head -1 "$tmp/c1.csv")"
grep -q '^post,3,2,grad_norm,' "$tmp/c1.csv" || fail "CSV lacks post layer 2 of depth 3"
grep -q '^post/pre,3,,bottom.grad_norm,' "$tmp/c1.csv" || fail "CSV lacks the post/pre ratio"
grep -q '"mean"' "$tmp/c.json" && grep -q '"std"' "$tmp/c.json" || fail "JSON lacks mean/std"
grep -q '"spec"' "$tmp/c.json" || fail "JSON lacks its spec"
grep -q 'post/pre' "$tmp/table" || fail "table lacks ratios"
"$gf" compare --placements post,pre --layers 2,3 --seeds 3 $small --csv "$tmp/c2.csv" --threads 2 -q || fail "compare -j2"
cmp -s "$tmp/c1.csv" "$tmp/c2.csv" || fail "1 and 2 threads differ"

# the spec recorded in the report, run again (`gradflow run REPORT`), gives the same CSV
"$gf" run "$tmp/c.json" --threads 2 -q --csv "$tmp/c3.csv" --json "$tmp/c3.json" || fail "run of the recorded spec"
cmp -s "$tmp/c1.csv" "$tmp/c3.csv" || fail "run of the recorded spec differs"
grep -q '"spec_file"' "$tmp/c3.json" || fail "run report lacks spec_file"

"$gf" sweep --placement pre --layers 2 $small --param d-model --values 8,16 --seeds 2 --csv "$tmp/s.csv" -q ||
  fail "sweep d-model"
head -1 "$tmp/s.csv" | grep -qx "placement,depth,param,value,layer,metric,mean,std,n" || fail "sweep CSV header"
grep -q '^pre,2,d-model,8,' "$tmp/s.csv" || fail "sweep CSV rows"

bad() {
  "$gf" "$@" -q --json "$tmp/bad.json" >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc -eq 2 ] && [ "$(grep -c . "$tmp/err")" -eq 1 ] && grep -q fix "$tmp/err" && [ ! -e "$tmp/bad.json" ] ||
    fail "$* -> exit $rc: $(cat "$tmp/err")"
  echo "ok: $* -> $(cat "$tmp/err")"
}
bad compare --placements post,bogus --layers 2 $small
bad compare --placements post --layers 2,x $small
bad compare --placements post --layers 2 --seeds 0 $small
bad sweep --placement post --layers 2 $small --param d-model --values 16,15
bad sweep --placement post --layers 2 $small --param nonsense --values 1
bad sweep --placement post --layers 2 $small --param init-scale --values 1,,2
echo '{"gradflow_spec": 1, "command": "compare", "options": {"bogus-flag": 1}}' >"$tmp/badspec.json"
bad run "$tmp/badspec.json"
echo "ok: compare/sweep/run"
