#!/bin/bash
# make_precision_figure.sh — regenerates docs/img/precision-error.png (docs/teaching.md §6): the relative error of
# dL/dx_l at float16 (without and with a dynamic loss scale) and at bfloat16 against float64, Post-LN, L = 24,
# d = 64, with dL/dy = 1e-6 · N(0, 1); the layers where float16 lost entries to 0 ringed.
#   examples/make_precision_figure.sh [PATH/TO/gradflow]     (from the repository root; a few seconds)
# Fixed seeds: the figure comes out the same each time on the same build.
set -euo pipefail
gf=${1:-build/gradflow}
source "$(dirname "$0")/figure_check.sh"  # checked_plot: the PNG, and its PDF measured
out=docs/img
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -c "import numpy as np, sys; np.save(sys.argv[1], 1e-6 * np.random.default_rng(0).standard_normal((16, 64)))" "$work/g.npy"
M="--placement post --layers 24 --cotangent $work/g.npy -q"
"$gf" analyze $M --precision f16 --json "$work/f16.json"
"$gf" analyze $M --precision f16 --loss-scale dynamic --json "$work/f16, loss-scaled.json"
"$gf" analyze $M --precision bf16 --json "$work/bf16.json"
checked_plot "$work/precision-error.png" "$work/f16.json" "$work/f16, loss-scaled.json" \
  "$work/bf16.json" --kind precision-error --width 5 --dpi 150 \
  --title "Post-LN, L = 24: rounding against the exact gradient (dL/dy ~ 1e-6)"
cp "$work/precision-error.png" "$out"/
ls -1 "$out"/precision-error.png
