#!/bin/sh
# test_precision_cli.sh GRADFLOW — `analyze --precision` on the command line: bad values and meaningless combinations
# exit 2 with a one-line message naming the fix and leave no report; a run prints the error column and the underflow
# marks, and its report holds the per-layer comparison and, with --loss-scale dynamic, a power of two.
gf=${1:?usage: test_precision_cli.sh PATH/TO/gradflow}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; fails=$((fails + 1)); }
small="--placement post --layers 3 --d-model 16 --heads 2 --seq-len 4"
bad() {
  rm -f "$tmp/r.json"
  "$gf" analyze $small "$@" --json "$tmp/r.json" >/dev/null 2>"$tmp/err"
  rc=$?
  lines=$(grep -c . "$tmp/err")
  if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "fix" "$tmp/err" || [ -e "$tmp/r.json" ]; then
    fail "$* -> exit $rc, $lines lines: $(cat "$tmp/err")"
  else
    ok "$* -> $(cat "$tmp/err")"
  fi
}
bad --precision fp16
bad --precision bf16 --mode explicit
bad --precision f16 --loss-scale 0
bad --precision f16 --loss-scale lots
bad --loss-scale 1024
bad --precision bf16 --device cuda
bad --autocast f32
bad --autocast fp16
bad --precision bf16 --autocast bf16
bad --autocast f16 --precision f16
bad --autocast bf16 --mode explicit
# the other commands that take the model options compute no gradients: refused, not ignored
for cmd in jacobian export; do
  rm -f "$tmp/o"
  "$gf" $cmd $small --precision f16 --out "$tmp/o" >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 2 ] || [ "$(grep -c . "$tmp/err")" -ne 1 ] || ! grep -q "fix: drop it" "$tmp/err" || [ -e "$tmp/o" ]; then
    fail "$cmd --precision f16 -> exit $rc: $(cat "$tmp/err")"
  else
    ok "$cmd --precision f16 -> $(cat "$tmp/err")"
  fi
done

# a float16 run with the cotangent 1e-6 * N(0,1): the bars mark the underflowed layers, the column is the error
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/g.npy', 1e-6 * np.random.default_rng(0).standard_normal((4, 16)))" ||
  { echo "SKIPPED: /usr/bin/python3 cannot import numpy"; exit 77; }
if "$gf" analyze $small --cotangent "$tmp/g.npy" --precision f16 --bars --json "$tmp/r.json" >"$tmp/out" 2>"$tmp/err" &&
   grep -q "f16 error" "$tmp/out" && grep -q "\[underflow " "$tmp/out"; then
  ok "f16 table: error column and underflow marks"
else
  fail "f16 table: $(cat "$tmp/out" "$tmp/err")"
fi
if /usr/bin/python3 - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["precision"] == "f16" and r["config"]["mode"] == "gradients-only"
for layer in r["layers"]:
    p = layer["precision"]
    assert 0 <= p["underflow_fraction"] <= p["zero_fraction"] <= 1, p
    assert p["grad_rel_error"] > 0 and set(p["param_grad_rel_errors"]) == set(layer["param_grad_norms"]), p
PY
then ok "f16 report: per-layer fields"; else fail "f16 report"; fi
"$gf" analyze $small --cotangent "$tmp/g.npy" --precision f16 --loss-scale dynamic -q --json "$tmp/d.json" 2>"$tmp/err"
if /usr/bin/python3 - "$tmp/d.json" <<'PY'
import json, math, sys
p = json.load(open(sys.argv[1]))["precision"]
m, e = math.frexp(p["loss_scale"])
assert m == 0.5 and p["loss_scale_dynamic"] and not p["summary"]["overflow"] and not p["summary"]["underflow_layers"], p
PY
then ok "dynamic loss scale: a power of two, no underflow left"; else fail "dynamic loss scale: $(cat "$tmp/err")"; fi
# --autocast f16 with the same tiny cotangent: the stream is float32 (no underflow of dL/dx_l), the weight gradients
# of the matrix products are float16 (some lost to its range); the table says so
if "$gf" analyze $small --cotangent "$tmp/g.npy" --autocast f16 --bars --json "$tmp/a.json" >"$tmp/out" 2>"$tmp/err" &&
   grep -q "autocast to f16, the stream float32" "$tmp/out" && grep -q "\[dL/dW underflow " "$tmp/out" &&
   ! grep -q "\[underflow [0-9]" "$tmp/out" && /usr/bin/python3 - "$tmp/a.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["precision"] == "f16" and r["config"]["precision_regime"] == "autocast", r["config"]
p = r["precision"]
assert p["regime"] == "autocast" and p["summary"]["underflow_layers"] == [] and p["summary"]["param_underflow_layers"], p
assert all(0 < l["precision"]["param_underflow_fraction"] < 1 for l in r["layers"] if l["index"] in p["summary"]["param_underflow_layers"])
PY
then ok "autocast f16: float32 stream, float16 weight gradients underflow, marked"; else fail "autocast f16: $(cat "$tmp/out" "$tmp/err")"; fi
# train --precision: mixed precision from the command line, its report keys, and --loss-scale alone refused
train_small="--placement post --layers 2 --d-model 16 --heads 2 --seq-len 8 --vocab 8 --steps 4 --batch 2 --log-every 2 --eval-size 4"
if "$gf" train $train_small --precision bf16 --loss-scale dynamic -q --json "$tmp/t.json" 2>"$tmp/err" &&
   /usr/bin/python3 - "$tmp/t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["precision"]["type"] == "bf16" and r["config"]["precision"]["loss_scale"]["dynamic"] == "GradScaler", r["config"]
assert all(e["loss_scale"] == 65536.0 and "skipped" in e for e in r["log"]), r["log"]
assert r["final"]["skipped_steps"] == 0 and r["final"]["updates"] == 4, r["final"]
PY
then ok "train --precision bf16 --loss-scale dynamic"; else fail "train --precision: $(cat "$tmp/err")"; fi
if "$gf" train $train_small --autocast f16 --loss-scale dynamic -q --json "$tmp/ta.json" 2>"$tmp/err" &&
   /usr/bin/python3 - "$tmp/ta.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["precision"]["type"] == "f16" and r["config"]["precision"]["regime"].startswith("autocast"), r["config"]
assert r["final"]["updates"] == 4, r["final"]
PY
then ok "train --autocast f16 --loss-scale dynamic"; else fail "train --autocast: $(cat "$tmp/err")"; fi
if "$gf" train $train_small --loss-scale 1024 -q --json "$tmp/t2.json" 2>"$tmp/err"; then
  fail "train --loss-scale without --precision was accepted"
elif grep -q "fix: add --precision" "$tmp/err" && [ ! -e "$tmp/t2.json" ] && [ "$(wc -l < "$tmp/err")" -eq 1 ]; then
  ok "train --loss-scale without --precision: one line naming the fix, no report"
else
  fail "train --loss-scale refusal: $(cat "$tmp/err")"
fi
[ $fails -eq 0 ] || exit 1
