#!/bin/bash
# make_over_training_figure.sh — regenerates docs/img/tutorial-over-training.png (docs/tutorial.md, step 7) and
# prints the numbers the tutorial quotes: a SYNTHETIC small Llama-architecture model (gradflow's --arch llama block:
# Pre-RMSNorm, SwiGLU, RoPE, grouped-query heads; not a downloaded model) trained on the copy task with checkpoints
# every 50 steps, each checkpoint exported as a Hugging Face Llama folder (step50/, step100/, ... as a run's
# revisions are published), and the folder of folders analyzed over training by one command.
#   examples/make_over_training_figure.sh [PATH/TO/gradflow]     (from the repository root; about a minute)
# Fixed seeds: the figure and numbers come out the same each time on the same build.
set -euo pipefail
gf=${1:-build/gradflow}
source "$(dirname "$0")/figure_check.sh"  # checked_plot: the PNG, and its PDF measured
out=docs/img
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
M="--arch llama --layers 8 --d-model 32 --heads 4 --kv-heads 2 --d-ff 64"

"$gf" train $M --seq-len 16 --vocab 16 --task copy --steps 400 --batch 16 --lr 3e-3 --warmup 20 --log-every 50 \
  --save-every 50 --checkpoint-dir "$work/ck" -q --json "$work/train.json"
for f in "$work"/ck/step_*.safetensors; do
  s=$(basename "$f" .safetensors); s=$((10#${s#step_}))
  "$gf" export --weights "$f" $M --seq-len 16 --format hf-llama --out "$work/hf/step$s" 2>/dev/null
done
"$gf" analyze --weights "$work/hf" --input "$work/ck/step_000000.input.npy" --mode explicit \
  --json "$work/over.json"
checked_plot "$work/tutorial-over-training.png" "$work/over.json" --kind grad-over-training --width 7 --dpi 150
/usr/bin/python3 - "$work/over.json" "$work/train.json" <<'PY'
import json, sys
r, t = (json.load(open(p)) for p in sys.argv[1:3])
eval_loss = {e["step"]: e["eval_loss"] for e in t["log"]}
for c in r["checkpoints"]:
    L = c["report"]["layers"]
    g = [l["grad_norm"] for l in L]
    b = [l["block_jacobian"]["minus_identity_relative_frobenius"] for l in L]
    cos = [l["token_geometry"]["mean_cosine"] for l in L]
    print(f'step {c["step"]:4d}  eval loss {eval_loss.get(c["step"], float("nan")):.3f}  ||dL/dx_0|| {g[0]:.3g}  '
          f'||dL/dx_7|| {g[-1]:.3g}  bottom/top {g[0] / g[-1]:.3g}  ||B_l - I||_F/sqrt(N) l=0 {b[0]:.3f} l=7 {b[-1]:.3f}  '
          f'token cos x_7 {cos[-1]:.3f}')
PY
cp "$work/tutorial-over-training.png" "$out"/
ls -1 "$out/tutorial-over-training.png"
