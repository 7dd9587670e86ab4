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
head -1 "$tmp/c1.csv" | grep -qx "placement,depth,layer,metric,mean,std,n,se,ci_low,ci_high,median,geomean,geo_ci_low,geo_ci_high,verdict" || fail "CSV header: $(head -1 "$tmp/c1.csv")"
grep -q '^post,3,2,grad_norm,' "$tmp/c1.csv" || fail "CSV lacks post layer 2 of depth 3"
grep -q '^post/pre,3,,bottom.grad_norm,' "$tmp/c1.csv" || fail "CSV lacks the post/pre ratio"
grep -q '"mean"' "$tmp/c.json" && grep -q '"std"' "$tmp/c.json" || fail "JSON lacks mean/std"
grep -q '"spec"' "$tmp/c.json" || fail "JSON lacks its spec"
grep -q 'post/pre' "$tmp/table" || fail "table lacks ratios"
"$gf" compare --placements post,pre --layers 2,3 --seeds 3 $small --csv "$tmp/c2.csv" --json "$tmp/c2.json" --threads 2 -q ||
  fail "compare -j2"
cmp -s "$tmp/c1.csv" "$tmp/c2.csv" || fail "1 and 2 threads differ"
# the JSON too, byte for byte apart from timings: the spec does not record --threads (issue 18)
strip_times() { grep -v -e '"elapsed' -e '_seconds"' -e '"seconds' "$1"; }
strip_times "$tmp/c.json" >"$tmp/c1.stripped"; strip_times "$tmp/c2.json" >"$tmp/c2.stripped"
cmp -s "$tmp/c1.stripped" "$tmp/c2.stripped" || fail "JSON with 1 and 2 threads differs: $(diff "$tmp/c1.stripped" "$tmp/c2.stripped" | head -5)"
# the progress line counts configurations and seeds apart (it said "12 configurations (3 seeds each)" for 4 x 3)
"$gf" compare --placements post,pre --layers 2,3 --seeds 3 $small 2>&1 >/dev/null | grep -q "4 configurations x 3 seeds = 12 runs" ||
  fail "progress line: $("$gf" compare --placements post,pre --layers 2,3 --seeds 3 $small 2>&1 >/dev/null | head -1)"

# a spec's claim, description and "plot" reach the report's spec (what `gradflow plot --kind claims` reads)
cat >"$tmp/claim.json" <<'SPEC'
{"gradflow_spec": 1, "claim": "C5", "description": "d", "command": "compare",
 "options": {"placements": "post,pre", "layers": "2", "seeds": 2, "d-model": 16, "heads": 2, "seq-len": 4, "gradients-only": true},
 "plot": {"metric": "bottom.grad_norm", "ratio": true, "article_value": 0.01}}
SPEC
"$gf" run "$tmp/claim.json" -q --json "$tmp/claim.out.json" || fail "run of a spec with \"plot\""
/usr/bin/python3 - "$tmp/claim.out.json" <<'PY' || fail "the report's spec lacks claim/plot"
import json, sys
s = json.load(open(sys.argv[1]))["spec"]
assert s["claim"] == "C5" and s["description"] == "d", s
assert s["plot"] == {"metric": "bottom.grad_norm", "ratio": True, "article_value": 0.01}, s
PY
"$gf" run "$tmp/claim.out.json" -q --json "$tmp/claim.rerun.json" || fail "rerun of a report whose spec has \"plot\""

# the spec recorded in the report, run again (`gradflow run REPORT`), gives the same CSV
"$gf" run "$tmp/c.json" --threads 2 -q --csv "$tmp/c3.csv" --json "$tmp/c3.json" || fail "run of the recorded spec"
cmp -s "$tmp/c1.csv" "$tmp/c3.csv" || fail "run of the recorded spec differs"
grep -q '"spec_file"' "$tmp/c3.json" || fail "run report lacks spec_file"

"$gf" sweep --placement pre --layers 2 --heads 2 --seq-len 4 --param d-model --values 8,16 --seeds 2 --csv "$tmp/s.csv" -q ||
  fail "sweep d-model"
head -1 "$tmp/s.csv" | grep -qx "placement,depth,param,value,layer,metric,mean,std,n,se,ci_low,ci_high,median,geomean,geo_ci_low,geo_ci_high,verdict" || fail "sweep CSV header"
grep -q '^pre,2,d-model,8,' "$tmp/s.csv" || fail "sweep CSV rows"

# output sensitivity to parameters (Liu et al.) in an experiment: aggregated like every scalar, the same at 1 and 2
# threads
for t in 1 2; do
  "$gf" compare --placements post --layers 2 $small --seeds 2 --sensitivity-probes 2 --threads $t -q \
    --csv "$tmp/sens$t.csv" || fail "compare --sensitivity-probes at $t threads"
done
grep -q ',output_sensitivity.first_order,' "$tmp/sens1.csv" || fail "compare CSV lacks output_sensitivity.first_order"
cmp -s "$tmp/sens1.csv" "$tmp/sens2.csv" || fail "compare --sensitivity-probes differs between 1 and 2 threads"

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
bad compare --placements post --layers 2 $small --sensitivity-size 1e-2
bad sweep --placement post --layers 2 --heads 2 --seq-len 4 --param d-model --values 16,15
bad sweep --placement post --layers 2 $small --param d-model --values 8,16
bad sweep --placement post --layers 2 $small --param nonsense --values 1
bad sweep --placement post --layers 2 $small --param init-scale --values 1,,2
bad sweep --placement post $small --param init-scale --values 1 --param2 layers
bad sweep --placement post --layers 2 $small --param init-scale --values 1 --values2 2,4
bad sweep --placement post --layers 2 $small --param init-scale --values 1 --param2 init-scale --values2 2
bad sweep --placement post $small --param init-scale --values 1 --param2 layers --values2 2,x
bad sweep --placement post --layers 2 $small --param init-scale --values 1 --param2 layers --values2 2,4
bad sweep --placement post --layers 2 $small --param init-scale --values 1 --param2 nonsense --values2 2
echo '{"gradflow_spec": 1, "command": "compare", "options": {"bogus-flag": 1}}' >"$tmp/badspec.json"
bad run "$tmp/badspec.json"
echo '{"gradflow_spec": 1, "command": "compare", "options": {"layers": 2}, "plot": {"metrc": "x"}}' >"$tmp/badplot.json"
bad run "$tmp/badplot.json"
echo '{"gradflow_spec": 1, "command": "compare", "options": {"layers": 2}, "plot": {"ratio": "yes"}}' >"$tmp/badplot2.json"
bad run "$tmp/badplot2.json"
# a 2-D sweep: both axes in the CSV and the table; the recorded spec reruns it; --resume skips finished points
"$gf" sweep --placement post,pre --layers 2 $small --param init-scale --values 0.5,2 --param2 residual-scale \
  --values2 0.5,1 --seeds 2 --csv "$tmp/s2.csv" --json "$tmp/s2.json" --resume "$tmp/r2" --threads 2 >"$tmp/table2" 2>/dev/null ||
  fail "2-D sweep"
head -1 "$tmp/s2.csv" | grep -qx "placement,depth,param,value,param2,value2,layer,metric,mean,std,n,se,ci_low,ci_high,median,geomean,geo_ci_low,geo_ci_high,verdict" || fail "2-D sweep CSV header"
grep -q '^pre,2,init-scale,2,residual-scale,0.5,1,grad_norm,' "$tmp/s2.csv" || fail "2-D sweep CSV rows"
grep -q '^post/pre,2,init-scale,0.5,residual-scale,1,,bottom.grad_norm,' "$tmp/s2.csv" || fail "2-D sweep CSV ratios"
grep -q 'residual-scale' "$tmp/table2" || fail "2-D sweep table lacks the second axis"
"$gf" run "$tmp/s2.json" --threads 1 -q --csv "$tmp/s2-rerun.csv" || fail "run of the recorded 2-D spec"
cmp -s "$tmp/s2.csv" "$tmp/s2-rerun.csv" || fail "run of the recorded 2-D spec differs"
[ "$(ls "$tmp/r2" | grep -c '\.json$')" -eq 16 ] || fail "2-D sweep --resume: not 16 result files"
rm "$tmp/r2/post_L2_2_0.5_s1.json"
"$gf" sweep --placement post,pre --layers 2 $small --param init-scale --values 0.5,2 --param2 residual-scale \
  --values2 0.5,1 --seeds 2 --csv "$tmp/s2-resumed.csv" --resume "$tmp/r2" >/dev/null 2>"$tmp/err" || fail "2-D resume"
grep -q "15 of 16 configurations already done" "$tmp/err" || fail "2-D resume did not skip: $(head -2 "$tmp/err")"
cmp -s "$tmp/s2.csv" "$tmp/s2-resumed.csv" || fail "2-D resumed CSV differs"
# the phase diagram of that sweep (when gnuplot is installed), and a metric it does not hold: one line, exit 2
if command -v gnuplot >/dev/null 2>&1; then
  "$gf" plot "$tmp/s2.json" --kind phase-diagram --metric top.token_geometry.mean_cosine -o "$tmp/phase.png" 2>/dev/null ||
    fail "plot --kind phase-diagram"
  [ -s "$tmp/phase.png" ] || fail "plot --kind phase-diagram wrote no figure"
fi
"$gf" plot "$tmp/s2.json" --kind phase-diagram --metric top.nonsense -o "$tmp/phase2.png" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c . "$tmp/err")" -eq 1 ] && grep -q "metric 'top.nonsense' is not in" "$tmp/err" &&
  [ ! -e "$tmp/phase2.png" ] || fail "phase-diagram with a bad metric -> exit $rc: $(cat "$tmp/err")"

# --device: cpu gives the report of no --device (bit for bit but timings); cuda without a CUDA build or a GPU stops
# before any configuration with one line and the fix; with --gradients-only it is refused (its gradients run on the
# CPU); writing a plan needs no GPU (a login node) and its spec carries the device for the tasks
"$gf" compare --placements post,pre --layers 2,3 --seeds 3 $small --json "$tmp/cdev.json" --device cpu --threads 1 -q ||
  fail "compare --device cpu"
strip_times "$tmp/cdev.json" | grep -v '"device"' >"$tmp/cdev.stripped"
strip_times "$tmp/c.json" >"$tmp/c1.again"
cmp -s "$tmp/cdev.stripped" "$tmp/c1.again" || fail "--device cpu changed the report: $(diff "$tmp/cdev.stripped" "$tmp/c1.again" | head -5)"
"$gf" compare --placements post --layers 2 --seeds 1 $small --device cuda -q --json "$tmp/cuda.json" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && [ "$(grep -c . "$tmp/err")" -eq 1 ] && grep -q "device cuda" "$tmp/err" && grep -q "fix:" "$tmp/err" &&
  [ ! -e "$tmp/cuda.json" ] || fail "compare --device cuda without a GPU -> exit $rc: $(cat "$tmp/err")"
"$gf" compare --placements post --layers 2 --seeds 1 $small --device cuda --gradients-only -q 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "which --gradients-only skips" "$tmp/err" || fail "--device cuda --gradients-only -> exit $rc: $(cat "$tmp/err")"
"$gf" compare --placements post --layers 2 --seeds 1 $small --device cuda --plan "$tmp/gpuplan" -q ||
  fail "writing a --device cuda plan without a GPU"
grep -q '"device": "cuda"' "$tmp/gpuplan/plan.json" || fail "the plan's spec lacks the device: $(head -c 400 "$tmp/gpuplan/plan.json")"
# also when auto weighs streamed mode (explicit over --max-memory), which asks the device for its GEMM rate: without
# a GPU the plan is still written (each task chooses again on its node)
"$gf" compare --placements post --layers 2 --seeds 1 --d-model 16 --heads 2 --seq-len 64 --max-memory 10M --device cuda \
  --plan "$tmp/gpuplan2" -q ||
  fail "writing a --device cuda plan without a GPU, explicit over --max-memory"


# --- intervals, paired verdicts, --seeds auto, claims decided (issue 58) ---
/usr/bin/python3 - "$tmp/c.json" <<'PY' || fail "the report's intervals and paired verdicts"
import json, math, sys
r = json.load(open(sys.argv[1]))
assert r["statistics"]["level"] == 0.95, r["statistics"]
g = r["groups"][0]["scalars"]["summary.bottom_to_top_grad_ratio"]
for k in ("mean", "std", "n", "se", "ci_low", "ci_high", "median", "geomean", "geo_ci_low", "geo_ci_high"):
    assert k in g, k
assert g["ci_low"] < g["mean"] < g["ci_high"] and g["geo_ci_low"] < g["geomean"] < g["geo_ci_high"], g
ratio = r["ratios"][0]["metrics"]["summary.bottom_to_top_grad_ratio"]
p = ratio["paired"]
assert p["by"] == "ratio" and ratio["verdict"] in ("greater", "less", "undetermined"), ratio
assert abs(p["estimate"] - ratio["geomean"]) <= 1e-12 * ratio["geomean"], (p, ratio)
# the depth pairs of one placement, paired as the placement pairs are
axes = {(c["placement"], c["axis"], c["numerator"], c["denominator"]) for c in r["comparisons"]}
assert ("post", "layers", 2, 3) in axes and ("pre", "layers", 2, 3) in axes, axes
PY
# --seeds auto: the same seeds and bits twice, and equal to --seeds N at the N it stopped at
auto0="--placements post,pre --layers 2 $small --gradients-only --seeds auto --seed-batch 3 --max-seeds 9"
auto="$auto0 --ci-target 0.5"
"$gf" compare $auto -q --json "$tmp/a1.json" --csv "$tmp/a1.csv" || fail "--seeds auto"
"$gf" compare $auto -q --json "$tmp/a2.json" --csv "$tmp/a2.csv" --threads 1 || fail "--seeds auto again"
cmp -s "$tmp/a1.csv" "$tmp/a2.csv" || fail "--seeds auto is not reproducible"
n=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['seeds']['repetitions'])" "$tmp/a1.json")
"$gf" compare --placements post,pre --layers 2 $small --gradients-only --seeds "$n" -q --csv "$tmp/an.csv" ||
  fail "--seeds $n"
cmp -s "$tmp/a1.csv" "$tmp/an.csv" || fail "--seeds auto stopping at $n differs from --seeds $n"
/usr/bin/python3 - "$tmp/a1.json" <<'PY' || fail "--seeds auto's record"
import json, sys
a = json.load(open(sys.argv[1]))["seeds"]["auto"]
assert a["ci_target"] == 0.5 and a["batch"] == 3 and a["max_seeds"] == 9 and isinstance(a["target_met"], bool), a
assert a["target_met"] == (not a["unmet"]), a
PY
# a target no run can meet stops at --max-seeds and says so
"$gf" compare $auto0 --ci-target 1e-6 -q --json "$tmp/a3.json" || fail "--seeds auto to --max-seeds"
/usr/bin/python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert r['seeds']['repetitions'] == 9 and r['seeds']['auto']['target_met'] is False and r['seeds']['auto']['batches'] == 3, r['seeds']
" "$tmp/a3.json" || fail "--seeds auto at --max-seeds"
# a claims spec's statements decided at a level: holds, fails, undetermined, and another level
cat >"$tmp/verdicts.json" <<'SPEC'
{"gradflow_spec": 1, "command": "compare",
 "options": {"placements": "post,pre", "layers": "2,3", "seeds": 4, "d-model": 16, "heads": 2, "seq-len": 4, "gradients-only": true},
 "verdicts": [
  {"says": "above 0", "metric": "summary.bottom_to_top_grad_ratio", "group": {"placement": "post", "layers": 3}, "expect": "greater", "than": 0.001},
  {"says": "below 0", "metric": "summary.bottom_to_top_grad_ratio", "group": {"placement": "post", "layers": 3}, "expect": "less", "than": 0.001},
  {"says": "pair", "metric": "summary.bottom_to_top_grad_ratio", "numerator": {"placement": "pre", "layers": 3}, "denominator": {"placement": "post", "layers": 3}, "expect": "greater", "level": 0.5},
  {"says": "depth pair", "metric": "bottom.grad_norm", "numerator": {"placement": "pre", "layers": 3}, "denominator": {"placement": "pre", "layers": 2}, "expect": "greater"}]}
SPEC
"$gf" run "$tmp/verdicts.json" --json "$tmp/v.json" >"$tmp/v.table" 2>/dev/null || fail "run of a spec with verdicts"
grep -q "claims decided" "$tmp/v.table" || fail "the table lacks the verdicts"
/usr/bin/python3 - "$tmp/v.json" <<'PY' || fail "the verdicts"
import json, sys
v = {x["says"]: x for x in json.load(open(sys.argv[1]))["verdicts"]}
assert v["above 0"]["verdict"] == "holds" and v["below 0"]["verdict"] == "fails", v
assert v["pair"]["level"] == 0.5 and v["pair"]["by"] == "paired ratio", v["pair"]
assert v["depth pair"]["by"] == "paired ratio" and v["depth pair"]["n"] == 4, v["depth pair"]
for x in v.values():
    assert x["verdict"] in ("holds", "fails", "undetermined")
    assert x["ci_low"] <= x["estimate"] <= x["ci_high"], x
PY
# the 50 % interval is narrower than the 95 % one (the same statement at two levels)
sed 's/"level": 0.5/"level": 0.95/' "$tmp/verdicts.json" >"$tmp/verdicts95.json"
"$gf" run "$tmp/verdicts95.json" -q --json "$tmp/v95.json" || fail "run at 0.95"
/usr/bin/python3 -c "
import json, sys
a = {x['says']: x for x in json.load(open(sys.argv[1]))['verdicts']}['pair']
b = {x['says']: x for x in json.load(open(sys.argv[2]))['verdicts']}['pair']
assert a['estimate'] == b['estimate'] and b['ci_low'] < a['ci_low'] < a['ci_high'] < b['ci_high'], (a, b)
" "$tmp/v.json" "$tmp/v95.json" || fail "a verdict's level"

# bad input: one line, exit 2, naming the option
refuse() {  # refuse WHAT WORD ARGS...: exit 2 and WORD in the one-line message
  what=$1; word=$2; shift 2
  "$gf" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc -eq 2 ] || fail "$what: exit $rc, not 2"
  grep -q -- "$word" "$tmp/err" || fail "$what: message lacks '$word': $(cat "$tmp/err")"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$what: more than one line: $(cat "$tmp/err")"
}
base="compare --placements post --layers 2 $small --gradients-only -q"
refuse "auto without a target" "--ci-target" $base --seeds auto
refuse "target 0" "--ci-target" $base --seeds auto --ci-target 0
refuse "target 1" "--ci-target" $base --seeds auto --ci-target 1
refuse "max below the batch" "--max-seeds" $base --seeds auto --ci-target 0.1 --max-seeds 5
refuse "max past --seeds' limit" "--max-seeds" $base --seeds auto --ci-target 0.1 --max-seeds 2000000000 --seed-batch 2000000000
refuse "target without auto" "--ci-target" $base --seeds 3 --ci-target 0.1
refuse "seeds not a number" "--seeds" $base --seeds many
refuse "auto with a plan" "plan" $base --seeds auto --ci-target 0.1 --plan "$tmp/plan"
refuse "unknown ci metric" "--ci-metrics" $base --seeds auto --ci-target 0.1 --ci-metrics summary.nothing
sed 's/"level": 0.5/"level": 1.5/' "$tmp/verdicts.json" >"$tmp/bad_level.json"
refuse "a verdict's level" "level" run "$tmp/bad_level.json" -q
sed 's/"bottom.grad_norm"/"bottom.no_such_metric"/' "$tmp/verdicts.json" >"$tmp/bad_metric.json"
refuse "a verdict's metric" "no_such_metric" run "$tmp/bad_metric.json" -q
sed 's/"layers": 3}, "expect": "greater", "than"/"layers": 7}, "expect": "greater", "than"/' "$tmp/verdicts.json" >"$tmp/bad_group.json"
refuse "a verdict's group" "names no group" run "$tmp/bad_group.json" -q
echo "ok: compare/sweep/run"
