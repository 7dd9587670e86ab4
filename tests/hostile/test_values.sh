#!/bin/sh
# test_values.sh GRADFLOW CASE — values that were read wrong or crashed (issue 60 items 7, 10, 13, 19): one decimal
# number syntax for every option of every command (hexadecimal refused, a leading zero decimal), an overflow that
# stops with exit 3, a 50,000-character Slurm option refused with exit 2, a step number never cut. Exit 0 pass, 1 fail.
gf=${1:?usage: test_values.sh GRADFLOW CASE}
case_=${2:?usage: test_values.sh GRADFLOW CASE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
model="--placement pre --layers 1 --d-model 8 --heads 2 --seq-len 2 -q"
refused() {  # refused WORDS CMD...: exit 2, one line naming WORDS
  words=$1
  shift
  "$@" > /dev/null 2> "$tmp/err"
  rc=$?
  [ $rc -eq 2 ] || fail "'$*' exited $rc (want 2): $(cat "$tmp/err")"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "'$*': the message is not one line: $(cat "$tmp/err")"
  grep -q -- "$words" "$tmp/err" || fail "'$*': the message does not say '$words': $(cat "$tmp/err")"
}
case $case_ in
  hexadecimal)
    for opt in "--init-scale 0x1p-1" "--residual-scale 0x1p-1" "--rope-theta 0x10" "--max-memory 0x100M" \
               "--seed 0x10" "--d-ff 0x10"; do
      refused "not a decimal number" "$gf" analyze $model $opt
    done
    refused "not a decimal number" "$gf" analyze --arch llama --layers 1 --d-model 8 --heads 2 --seq-len 2 -q \
      --attn-softcap 0x10
    refused "not a decimal number" "$gf" analyze $model --precision f16 --loss-scale 0x10
    refused "not a decimal number" "$gf" train --layers 0x2 --d-model 8 --heads 2 --steps 1 -q
    refused "not a decimal number" "$gf" train-sweep --d-model 0x10 --steps 1 -q
    refused "not a decimal number" "$gf" sweep $model --param init-scale --values 0x1,2
    # a spec's options are read by the same rule
    printf '{"gradflow_spec": 1, "command": "compare", "options": {"placements": "pre", "layers": 1, "d-model": "0x8", "heads": 2, "seq-len": 2}}' \
      > "$tmp/spec.json"
    refused "not a decimal number" "$gf" run "$tmp/spec.json" --json "$tmp/r.json" -q
    echo "ok: hexadecimal refused by every command" ;;
  leading_zero)
    # CLI11 reads an integer option's 010 as octal 8 (train --steps); gradflow reads it as ten, as the model
    # options (--seq-len) always did
    "$gf" train --placement pre --layers 1 --d-model 8 --heads 2 --seq-len 010 --steps 010 -q --json "$tmp/t.json" \
      > /dev/null 2>&1 || fail "train --steps 010 exited $?"
    /usr/bin/python3 - "$tmp/t.json" <<'PY' || fail "010 is not ten"
import json, sys
r = json.load(open(sys.argv[1]))
got = (r["final"]["updates"], r["config"]["seq_len"])
sys.exit(0 if got == (10, 10) else print("updates, seq_len:", got) or 1)
PY
    echo "ok: 010 is ten" ;;
  overflow)
    # (the default model: its attention branch overflows to inf while the stream stays finite)
    for opt in "--init-scale 1e308" "--residual-scale 1e308"; do
      "$gf" analyze -q $opt --json "$tmp/r.json" > /dev/null 2> "$tmp/err"
      rc=$?
      if [ $rc -eq 0 ]; then
        /usr/bin/python3 - "$tmp/r.json" <<'PY' || fail "$opt exited 0 with a number that is not finite"
import json, math, sys
def walk(v, at):
    if isinstance(v, dict):
        for k, x in v.items():
            if k not in ("config", "metadata", "timing"): walk(x, at + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v): walk(x, "%s[%d]" % (at, i))
    elif v is None or (isinstance(v, float) and not math.isfinite(v)):
        print("null or not finite at", at); sys.exit(1)
walk(json.load(open(sys.argv[1])), "")
PY
      else
        [ $rc -eq 3 ] || fail "$opt exited $rc (want 3, the NaN/Inf contract): $(cat "$tmp/err")"
        [ -e "$tmp/r.json" ] && fail "$opt exited 3 and wrote a report"
      fi
    done
    # issue 60 item 23: a placement constant that overflows is named in the fix, not --init-scale (not given)
    for run in "--placement deepnorm --deepnorm-alpha 1e308" "--placement rezero --rezero-alpha 1e308"; do
      "$gf" analyze $run --layers 2 --d-model 8 --heads 2 --seq-len 2 -q > /dev/null 2> "$tmp/err"
      rc=$?
      [ $rc -eq 3 ] || fail "$run exited $rc (want 3): $(cat "$tmp/err")"
      opt=$(echo "$run" | sed 's/.*\(--[a-z]*-alpha\).*/\1/')
      grep -q -- "lower $opt" "$tmp/err" || fail "$run: the fix does not name $opt: $(cat "$tmp/err")"
      grep -q -- "--init-scale" "$tmp/err" && fail "$run: the fix blames --init-scale, which was not given: $(cat "$tmp/err")"
    done
    echo "ok: an overflow stops with exit 3, or every number is finite; the fix names the option that caused it" ;;
  slurm_long)
    "$gf" compare $model --seeds 1 --plan "$tmp/p" > /dev/null 2>&1 || fail "compare --plan exited $?"
    long=$(head -c 50000 /dev/zero | tr '\0' '1')
    for opt in --time --partition --gres; do
      refused "characters long" "$gf" slurm "$tmp/p" $opt "$long"
    done
    [ -e "$tmp/p/slurm/array.sbatch" ] && fail "a batch script was written"
    echo "ok: 50,000-character Slurm values refused" ;;
  *) fail "unknown case $case_" ;;
esac
