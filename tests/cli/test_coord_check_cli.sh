#!/bin/sh
# test_coord_check_cli.sh GRADFLOW — `gradflow coord-check` and the parametrization options on the command line:
# bad input exits 2 with a one-line message naming the fix and leaves no report; a small check writes its report,
# whose verdicts are SP's growth and muP's flat lines, and prints one summary block per axis.
gf=${1:?usage: test_coord_check_cli.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
small="--placement pre --layers 2 --d-model 16 --heads 2 --seq-len 8 --task copy --vocab 16 --batch 4 --lr 1e-2 --schedule constant --seeds 2"
bad() {
  cmd=$1
  shift
  rm -f "$tmp/r.json"
  "$gf" $cmd "$@" --json "$tmp/r.json" >/dev/null 2>"$tmp/err"
  rc=$?
  lines=$(grep -c . "$tmp/err")
  if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "fix" "$tmp/err" || [ -e "$tmp/r.json" ]; then
    fail "$cmd $* -> exit $rc, $lines lines: $(cat "$tmp/err")"
  else
    ok "$cmd $* -> $(cat "$tmp/err")"
  fi
}
bad coord-check $small
bad coord-check $small --widths 32
bad coord-check $small --widths 16,32 --weights "$tmp"
bad analyze --parametrization mup
bad analyze --parametrization depth-mup --base-width 16
bad analyze --base-width 16
bad analyze --parametrization completep --base-width 16 --base-depth 2 --residual-scale 0.5
bad train --parametrization completep --base-width 16 --base-depth 2 --init-scale inv-sqrt-2L --steps 1
for p in sp mup; do
  extra=""
  [ $p = mup ] && extra="--parametrization mup"
  if "$gf" coord-check $small --widths 16,32,64,128 $extra --json "$tmp/$p.json" > "$tmp/$p.out" 2>"$tmp/err"; then
    ok "coord-check $p ran"
  else
    fail "coord-check $p: $(cat "$tmp/err")"
  fi
  grep -q "coord-check over width \[16,32,64,128\]" "$tmp/$p.out" || fail "coord-check $p printed no summary"
done
/usr/bin/python3 - "$tmp" <<'PY' || fails=$((fails + 1))
import json, sys
d = sys.argv[1]
sp = json.load(open(f"{d}/sp.json"))["axes"][0]["summary"]
mup = json.load(open(f"{d}/mup.json"))["axes"][0]["summary"]
bad = [q for q in ("stream", "output_logits") if sp[q]["verdict"] != "grows"]
bad += [q for q in ("stream", "attn_branch", "ffn_branch", "attn_logits", "output_logits") if mup[q]["verdict"] != "stable or shrinks"]
print("ok: sp grows, mup flat" if not bad else f"FAIL: verdicts {bad}")
sys.exit(1 if bad else 0)
PY
exit $fails
