#!/bin/sh
# test_spelling_cli.sh GRADFLOW — issue 38's friction items on the command line: --placements and --placement mean
# the same in compare, sweep and train-sweep (a spec records one name); a misspelt option gets the nearest one;
# an unknown --metric lists its nearest names and `--metric list` prints them all; the tables stay aligned and
# print no raw JSON; -o fig.pdf and -o fig.png keep a script each; streamed mode's table shows its Frobenius norms.
gf=${1:?usage: test_spelling_cli.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
M="--layers 2 --d-model 8 --heads 2 --seq-len 4 --seeds 2 --gradients-only -q"

# --- one list option, two spellings, one meaning --------------------------------------------------------------
for cmd in compare sweep; do
  extra=""
  [ $cmd = sweep ] && extra="--param init-scale --values 1,0.5"
  "$gf" $cmd --placements post,pre $M $extra --json "$tmp/a.json" || fail "$cmd --placements exited $?"
  "$gf" $cmd --placement post,pre $M $extra --json "$tmp/b.json" || fail "$cmd --placement exited $?"
  /usr/bin/python3 - "$tmp/a.json" "$tmp/b.json" "$cmd" <<'PY' || fail "$cmd: the two spellings differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
own = "placements" if sys.argv[3] == "compare" else "placement"
for r in (a, b):
    assert [g["placement"] for g in r["groups"]][:1] == ["post"], r["groups"][0]["placement"]
    opts = r["spec"]["options"]
    assert own in opts and ({"placement", "placements"} - {own}).isdisjoint(opts), opts
strip = lambda r: [(g["placement"], g["scalars"]["summary.bottom_to_top_grad_ratio"]["mean"]) for g in r["groups"]]
assert strip(a) == strip(b)
PY
  ok "$cmd takes --placements and --placement alike"
done
"$gf" train-sweep --placement post --layers 1 --d-model 8 --heads 2 --seq-len 4 --steps 2 --log-every 1 --batch 2 \
  --eval-size 2 --warmup 0 --lr 1e-3 -q --plan "$tmp/plan" || fail "train-sweep --placement exited $?"
grep -q '"placements": "post"' "$tmp/plan/plan.json" || fail "train-sweep's spec does not record --placement as placements"

# --- the nearest option on a typo -------------------------------------------------------------------------------
near() {  # near WANT ARGS...: exit 2, one line, naming --WANT
  want=$1; shift
  "$gf" "$@" > /dev/null 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 2 ] || [ "$(grep -c . "$tmp/err")" -ne 1 ] || ! grep -q "did you mean --$want?" "$tmp/err"; then
    fail "$* -> exit $rc: $(cat "$tmp/err")"
  else
    ok "$* -> $(cat "$tmp/err")"
  fi
}
near placement analyze --placements post
near placement train --placements post
near placements compare --placemnts post
near seeds compare --seed 1 --sedes 2
"$gf" analyze --bogus-thing 1 > /dev/null 2> "$tmp/err"
grep -q "did you mean" "$tmp/err" && fail "a far-off option got a suggestion: $(cat "$tmp/err")"

# --- --metric: the nearest names, and the list -----------------------------------------------------------------
"$gf" plot "$tmp/a.json" --kind sensitivity --metric top_grad_norm -o "$tmp/s.svg" --no-render 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "nearest: .*top.grad_norm" "$tmp/err" && grep -q -- "--metric list" "$tmp/err" ||
  fail "unknown --metric: $(cat "$tmp/err")"
"$gf" plot "$tmp/a.json" --kind sensitivity --metric list -o "$tmp/s.svg" > "$tmp/list" || fail "--metric list exited $?"
grep -qx "summary.bottom_to_top_grad_ratio" "$tmp/list" && grep -qx "top.grad_norm" "$tmp/list" ||
  fail "--metric list: $(head -3 "$tmp/list")"
[ -e "$tmp/s.svg" ] && fail "--metric list drew a figure"

# --- the tables ---------------------------------------------------------------------------------------------------
"$gf" compare --placements post,hybridnorm,deepnorm --layers 2 --d-model 8 --heads 2 --seq-len 4 --seeds 2 \
  --gradients-only > "$tmp/table" 2> /dev/null || fail "compare exited $?"
/usr/bin/python3 - "$tmp/table" <<'PY' || fail "compare's rows are not aligned: $(cat "$tmp/table")"
import sys
rows = [r for r in open(sys.argv[1], encoding="utf-8").read().splitlines()
        if r.split() and r.split()[0] in ("post", "hybridnorm", "deepnorm", "post/hybridnorm", "post/deepnorm",
                                          "hybridnorm/deepnorm")]
assert len(rows) == 6, rows
starts = {tuple(i for i in range(1, len(r)) if r[i] != " " and r[i - 1] == " ") for r in rows}
assert len(starts) == 1, rows  # every column starts at the same character in every row
PY
"$gf" train-sweep --placements post,pre --layers 1 --d-model 8 --heads 2 --seq-len 4 --steps 2 --log-every 1 \
  --batch 2 --eval-size 2 --warmup 0,1 --lr 1e-3 > "$tmp/ts" 2> /dev/null || fail "train-sweep exited $?"
grep -q "null\|{" "$tmp/ts" && fail "train-sweep's table prints raw JSON: $(grep "null\|{" "$tmp/ts")"
grep -q "smallest converging warmup: lr 0.001: " "$tmp/ts" || fail "train-sweep's summary line: $(cat "$tmp/ts")"
"$gf" analyze --layers 2 --d-model 8 --heads 2 --seq-len 4 --mode streamed > "$tmp/st" || fail "streamed exited $?"
grep -q "||B_l||_F *||P_l||_F" "$tmp/st" && ! grep -q "^ *0 .* - " "$tmp/st" ||
  fail "streamed's table does not show its Frobenius norms: $(cat "$tmp/st")"

# --- one script per figure, whatever the format --------------------------------------------------------------------
"$gf" plot "$tmp/a.json" --kind sensitivity -o "$tmp/f.pdf" --no-render 2> /dev/null || fail "plot f.pdf"
"$gf" plot "$tmp/a.json" --kind sensitivity -o "$tmp/f.png" --no-render 2> /dev/null || fail "plot f.png"
grep -q "f.pdf'" "$tmp/f.pdf.gp" && grep -q "f.png'" "$tmp/f.png.gp" ||
  fail "f.pdf and f.png do not keep a script each: $(ls "$tmp")"
exit $fails
