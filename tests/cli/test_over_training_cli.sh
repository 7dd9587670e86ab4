#!/bin/sh
# test_over_training_cli.sh GRADFLOW — `gradflow analyze --weights A B C …` over a run's checkpoints: a Llama-block
# model trained briefly with --save-every, its checkpoint folder, a glob in quotes and a list out of order give the
# same report (steps in order, every checkpoint on the first checkpoint's saved x_0); each checkpoint's numbers are
# the plain analyze of it, bit for bit; the same checkpoints exported as Hugging Face Llama folders (step10/, ...)
# read as a folder of folders give the same numbers; a checkpoint of another architecture and a name without a step
# are refused with exit 2 and no report; `plot --kind grad-over-training` draws the report.
set -u
G="$1"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
M="--arch llama --layers 3 --d-model 16 --heads 4 --kv-heads 2 --d-ff 24"
"$G" train $M --seq-len 8 --vocab 8 --batch 4 --eval-size 8 --task copy --steps 20 --lr 1e-2 --log-every 10 \
    --save-every 10 --checkpoint-dir "$T/ck" -q --json "$T/train.json" || fail "train"
ls "$T/ck" | grep -q 'step_000020.safetensors' || fail "train wrote no step_000020.safetensors: $(ls "$T/ck")"
grep -q '"placement": "pre"' "$T/train.json" || fail "train --arch llama did not train the preset's Pre-LN block"
A="--causal --mode explicit -q"
"$G" analyze --weights "$T/ck" $M $A --json "$T/folder.json" 2>"$T/err" || fail "folder: $(cat "$T/err")"
"$G" analyze --weights "$T/ck/step_*.safetensors" $M $A --json "$T/glob.json" || fail "glob"
"$G" analyze --weights "$T/ck/step_000020.safetensors" "$T/ck/step_000010.safetensors" $M $A \
    --input "$T/ck/step_000010.input.npy" --json "$T/list.json" || fail "list"
"$G" analyze --weights "$T/ck/step_000020.safetensors" $M $A --input "$T/ck/step_000010.input.npy" \
    --json "$T/one.json" || fail "one"
# export each checkpoint as a Hugging Face Llama folder named after its step
for s in 10 20; do
  "$G" export --weights "$T/ck/step_0000$s.safetensors" $M --seq-len 8 --format hf-llama --out "$T/hf/step$s" \
      2>/dev/null || fail "export step $s"
done
"$G" analyze --weights "$T/hf" --input "$T/ck/step_000010.input.npy" --mode explicit -q --json "$T/hf.json" \
    || fail "hf folder of folders"
/usr/bin/python3 - "$T" <<'PY' || fail "reports differ"
import json, sys
t = sys.argv[1]
r = {k: json.load(open(f"{t}/{k}.json")) for k in ("folder", "glob", "list", "one", "hf")}
steps = [c["step"] for c in r["folder"]["checkpoints"]]
assert steps[-2:] == [10, 20], steps
assert ".input.npy" in r["folder"]["over_training"]["input"], r["folder"]["over_training"]
def numbers(rep):
    return [(l["grad_norm"], l["block_jacobian"]["minus_identity_relative_frobenius"]) for l in rep["layers"]] + [rep["loss"]]
for k in ("glob",):
    assert [numbers(c["report"]) for c in r[k]["checkpoints"]] == [numbers(c["report"]) for c in r["folder"]["checkpoints"]], k
last = lambda k: r[k]["checkpoints"][-1]
assert [c["step"] for c in r["list"]["checkpoints"]] == [10, 20]
assert numbers(last("list")["report"]) == numbers(r["one"]), "list vs one"
assert [numbers(c["report"]) for c in r["hf"]["checkpoints"]] == [numbers(c["report"]) for c in r["list"]["checkpoints"]], "hf"
assert r["hf"]["checkpoints"][0]["report"]["config"]["weights_format"] == "hf-llama"
PY
bad() {  # exit 2, a one-line "fix:", no report
  "$G" analyze "$@" --json "$T/bad.json" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] || fail "'$*' exited $rc, expected 2: $(cat "$T/err")"
  grep -q "fix:" "$T/err" || fail "'$*' printed no fix: $(cat "$T/err")"
  [ ! -e "$T/bad.json" ] || fail "'$*' left a report"
}
"$G" export --arch llama --layers 2 --d-model 16 --heads 4 --kv-heads 2 --d-ff 24 --seq-len 8 --format hf-llama \
    --out "$T/hf/step30" || fail "export L=2"
bad --weights "$T/hf" --input "$T/ck/step_000010.input.npy" -q
grep -q "is another architecture than" "$T/err" || fail "architecture refusal: $(cat "$T/err")"
cp "$T/ck/step_000010.safetensors" "$T/final.safetensors"
bad --weights "$T/final.safetensors" "$T/ck/step_000020.safetensors" $M $A
grep -q "its name gives no training step" "$T/err" || fail "no-step refusal: $(cat "$T/err")"
bad --weights "$T/nope_*.safetensors" $M $A
if command -v gnuplot >/dev/null 2>&1; then
  "$G" plot "$T/folder.json" --kind grad-over-training -o "$T/over.svg" 2>"$T/err" || fail "plot: $(cat "$T/err")"
  [ -s "$T/over.svg" ] || fail "plot wrote nothing"
  "$G" plot "$T/folder.json" --kind grad-by-depth -o "$T/x.svg" 2>"$T/err" && fail "grad-by-depth accepted it"
  grep -q "plot it with --kind grad-over-training" "$T/err" || fail "kind refusal: $(cat "$T/err")"
fi
echo "over-training: folder, glob, list, Hugging Face folders, refusals and figure ok"
