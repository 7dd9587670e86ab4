#!/bin/sh
# test_messages.sh GRADFLOW CASE — refusals that name the real problem and the fix that fits it (issue 39 item 13):
# a Hugging Face config.json is blamed, not options never given; numbers are refused as such, not after a memory
# estimate or as a saturated count; a swept option given beside its sweep, a number listed twice under two
# spellings, a plan edited after it was written, a figure of too many lines. Exit 0 pass, 1 fail.
gf=${1:?usage: test_messages.sh GRADFLOW CASE}
case_=${2:?usage: test_messages.sh GRADFLOW CASE}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py() { /usr/bin/python3 -c "$@"; }
# refused WORDS... [-not WORD] -- ARGS: exit 2, one error line holding every word (and not the -not word), a fix
refused() {
  words="" not=""
  while [ "$1" != "--" ]; do
    if [ "$1" = "-not" ]; then not=$2; shift 2; else words="$words $1"; shift; fi
  done
  shift
  "$gf" "$@" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  [ $rc -eq 2 ] || fail "$* exited $rc (want 2): $(tail -c 300 "$tmp/err")"
  [ "$(grep -c 'error' "$tmp/err")" -eq 1 ] || fail "not one error line: $(cat "$tmp/err")"
  for w in $words fix:; do grep -q -- "$w" "$tmp/err" || fail "the message lacks '$w': $(cat "$tmp/err")"; done
  [ -n "$not" ] && grep -q -- "$not" "$tmp/err" && fail "the message names '$not': $(cat "$tmp/err")"
  echo "ok: $(grep error "$tmp/err")"
}
small="--layers 1 --d-model 8 --heads 2"
case $case_ in
  hf_config)  # the config.json's own numbers are blamed on it
    "$gf" export --format hf-gpt2 --placement pre --causal --layers 1 --d-model 16 --heads 2 --out "$tmp/gpt2" || fail "export"
    py "
import json; p = '$tmp/gpt2/config.json'; c = json.load(open(p)); c['n_head'] = 3; json.dump(c, open(p, 'w'))"
    refused "n_head = 3" "config.json" -not "--d-model" -- analyze --weights "$tmp/gpt2" -q
    py "
import json; p = '$tmp/gpt2/config.json'; c = json.load(open(p)); del c['n_head']; json.dump(c, open(p, 'w'))"
    refused "has no \"n_head\"" -not "has no config.json" -- analyze --weights "$tmp/gpt2" -q
    py "
p = '$tmp/gpt2/config.json'; open(p, 'w').write('{\"model_type\": \"gpt2\", \"x\": ' + '[' * 200000 + ']' * 200000 + '}')"
    refused "nests deeper than" -not "has no config.json" -- analyze --weights "$tmp/gpt2" -q ;;
  numbers)  # numbers the parsers accepted: a saturated count, a hexadecimal duration
    refused "sensitivity-probes" "more than 100000" -- analyze $small --sensitivity-probes 99999999999999999999 -q
    refused "hutchinson-probes" "more than 100000" -- analyze $small --mode matrix-free --hutchinson-probes 1000000 -q
    refused "max-time '0x10' is not a duration" -- analyze $small --max-time 0x10 -q
    refused "max-time" -- analyze $small --max-time inf -q ;;
  sweeps)  # an option given beside its sweep; one number under two spellings
    refused "--seq-len is given and swept" -not "CLI" -- sweep $small --param seq-len --values 2,4 --seq-len 4 -q
    refused "one number twice, as '1' and '1.0'" -- sweep $small --param init-scale --values 1,1.0 -q
    refused "one number twice" -- compare --d-model 8 --heads 2 --placements pre,post --layers 2,02 --seeds 1 -q ;;
  edited_plan)  # a plan edited after gradflow wrote it is blamed on the edit, not on the gradflow version
    "$gf" compare --placements pre,post $small --seeds 1 --plan "$tmp/p" -q 2> /dev/null || fail "compare --plan"
    sed -i 's/"d-model": "8"/"d-model": "16"/' "$tmp/p/plan.json"
    grep -q '"d-model": "16"' "$tmp/p/plan.json" || fail "test setup: the plan's spec does not hold d-model 8"
    refused "edited since" "write the plan again" -not "run the plan with the gradflow that wrote it" -- task "$tmp/p" 0 ;;
  many_groups)  # a report of 300 groups: refused at once, naming the groups, never the --width nobody gave
    "$gf" compare --placements pre,post --layers 1,2 --d-model 8 --heads 2 --seeds 1 --json "$tmp/c.json" -q ||
      fail "compare"
    py "
import json, copy
r = json.load(open('$tmp/c.json'))
g = r['groups']
r['groups'] = [dict(copy.deepcopy(g[i % len(g)]), layers=i // 2 + 1) for i in range(300)]
r['ratios'] = []; r['fits'] = []
json.dump(r, open('$tmp/c300.json', 'w'))"
    for kind in grad-by-depth jacobian-norms; do
      start=$(date +%s)
      refused "300 lines" "fewer groups" -not "--width" -- plot "$tmp/c300.json" --kind $kind -o "$tmp/f.pdf"
      [ $(($(date +%s) - start)) -lt 20 ] || fail "the refusal took $(($(date +%s) - start)) s"
    done ;;
  gemma_options)  # the gemma2 preset's own options: a bad scale, and an export whose layout stores gamma, not w
    refused "--embed-scale 'foo' is not a number" -- analyze $small --embed-scale foo -q
    refused "--embed-scale must be a positive number or sqrt-d" -- analyze $small --embed-scale 0 -q
    refused "--norm-offset" "torch-encoder" -- export --format hf-bert --placement post $small --norm-offset --out "$tmp/b"
    [ ! -e "$tmp/b" ] || fail "a refused export left $tmp/b behind" ;;
  list_items)  # issue 60 item 23: a list's item is named as the item, and its fix suits the list
    refused "--widths item 17" -- coord-check --widths 16,17 --heads 2 --steps 1 -q
    refused "--d-model item '0'" "16,32" -not "0,100" -- train-sweep --d-model 0,16 --steps 1 -q ;;
  *) fail "unknown case $case_" ;;
esac
