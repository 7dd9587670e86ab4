#!/bin/bash
# make_teaching_figures.sh — regenerates docs/img/teaching-*.png, the slide set of docs/teaching.md, and prints the
# numbers the page quotes: a gradient vanishing during training (Post-LN without warmup at a high learning rate,
# beside Pre-LN and Post-LN with warmup: docs/training.md's runs, logged every 10 steps) and a stack without norms
# at initialization with and without the 1/sqrt(2L) scale.
#   examples/make_teaching_figures.sh [PATH/TO/gradflow]     (from the repository root; about 40 s on 2 busy cores)
# Fixed seeds: the figures and numbers come out the same each time on the same build.
set -euo pipefail
gf=${1:-build/gradflow}
source "$(dirname "$0")/figure_check.sh"  # checked_plot: the PNG, and its PDF measured
out=docs/img
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fig=(--dpi 150)

# 1. Training: Post-LN without warmup at lr 1e-2 (its bottom gradient vanishes), Pre-LN, Post-LN with 400 warmup steps
train=(--layers 6 --d-model 32 --heads 2 --seq-len 16 --task copy --steps 500 --lr 1e-2 --schedule constant
       --log-every 10 -q)
"$gf" train --placement post --warmup 0 "${train[@]}" --json "$work/post-lr1e-2-warmup0.json" &
"$gf" train --placement pre --warmup 0 "${train[@]}" --json "$work/pre-lr1e-2-warmup0.json" &
wait
"$gf" train --placement post --warmup 400 "${train[@]}" --json "$work/post-lr1e-2-warmup400.json"
runs=("$work/post-lr1e-2-warmup0.json" "$work/pre-lr1e-2-warmup0.json" "$work/post-lr1e-2-warmup400.json")
checked_plot "$work/teaching-vanishing-ratio.png" "${runs[@]}" --kind grad-over-training \
  --metric bottom_to_top_grad_ratio "${fig[@]}"
checked_plot "$work/teaching-vanishing-layers.png" "${runs[0]}" --kind grad-over-training "${fig[@]}"

# 2. At initialization, 24 blocks without any norm: the residual stream's variance grows with depth, and the
#    gradient with it towards the input; the 1/sqrt(2L) scale of the branches' last weights keeps it level
"$gf" analyze --placement nonorm --layers 24 --gradients-only -q --json "$work/nonorm.json"
"$gf" analyze --placement nonorm --layers 24 --init-scale inv-sqrt-2L --gradients-only -q --json "$work/nonorm-scaled.json"
checked_plot "$work/teaching-nonorm-scale.png" "$work/nonorm.json" "$work/nonorm-scaled.json" --kind grad-by-depth \
  "${fig[@]}"

/usr/bin/python3 - "${runs[@]}" "$work/nonorm.json" "$work/nonorm-scaled.json" <<'PY'
import json, os, sys
for p in sys.argv[1:4]:
    log = json.load(open(p))["log"]
    r = [e["bottom_to_top_grad_ratio"] for e in log]
    print(f"{os.path.basename(p)[:-5]:24s} bottom/top at step 0 {r[0]:.3g}, step 100 {r[10]:.3g}, smallest {min(r):.3g}, "
          f"last {r[-1]:.3g}; eval loss {log[0]['eval_loss']:.3g} -> {log[-1]['eval_loss']:.3g}")
for p in sys.argv[4:]:
    rep = json.load(open(p))
    g = [l["grad_norm"] for l in rep["layers"]]
    print(f"{os.path.basename(p)[:-5]:24s} ||dL/dx_0|| {g[0]:.3g}, ||dL/dx_23|| {g[-1]:.3g}, "
          f"bottom/top {rep['summary']['bottom_to_top_grad_ratio']:.3g}")
PY
cp "$work"/teaching-*.png "$out"/
ls -1 "$out"/teaching-*.png
