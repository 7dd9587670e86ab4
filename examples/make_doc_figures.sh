#!/bin/bash
# make_doc_figures.sh — regenerates the figures of README.md and docs/plotting.md ("Figures at real sizes") that
# make_tutorial_figures.sh does not: the README compare (3 placements x 3 depths x 5 seeds), the claims figure of
# every initialization spec at full size, and a 96-cell train-sweep (the C6 grid's shape at a toy size).
#   examples/make_doc_figures.sh [PATH/TO/gradflow] [WORKDIR]     (from the repository root)
# About 15 minutes on 2 busy cores, most of it the compare; WORKDIR keeps the reports (default: a temporary folder).
set -euo pipefail
gf=${1:-build/gradflow}
source "$(dirname "$0")/figure_check.sh"  # checked_plot: the PNG, and its PDF measured
out=docs/img
mkdir -p "$out"
if [ -n "${2:-}" ]; then work=$2; mkdir -p "$work"; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
fig=(--dpi 150)

# 1. The README compare: grad-by-depth (colour: placement, marker and dash: depth) and jacobian-norms (a panel per
#    quantity, at two-column width).
[ -e "$work/cmp.json" ] || "$gf" compare --placements post,pre,sandwich --layers 6,12,24 --seeds 5 -q --json "$work/cmp.json"
checked_plot "$work/compare-grad-by-depth.png" "$work/cmp.json" --kind grad-by-depth "${fig[@]}"
checked_plot "$work/compare-jacobian-norms.png" "$work/cmp.json" --kind jacobian-norms --width 7 "${fig[@]}"

# 2. Every initialization claim spec at full size, then the claims figure (the train specs take about an hour more
#    and have figures of their own: `plot --kind claims` skips them).
mkdir -p "$work/results"
"$gf" run examples/claims/c*.json examples/claims/[pxr]*.json --out-dir "$work/results" -q
checked_plot "$work/claims.png" "$work"/results/*.json --kind claims --dpi 100

# 3. A 96-cell train-sweep (3 placements x 2 depths x 4 warmups x 4 learning rates, the C6 grid's shape) at a toy
#    size: small multiples, a panel per placement and depth, colour by lr, marker and dash by warmup.
[ -e "$work/sweep96.json" ] || "$gf" train-sweep --placements post,pre,sandwich --layers 2,4 --warmup 0,10,25,50 \
  --lr 1e-3,3e-3,1e-2,3e-2 --seeds 1 --d-model 8 --heads 2 --seq-len 8 --task copy --vocab 8 --steps 100 --batch 4 \
  --log-every 10 --eval-size 16 --schedule constant -q --json "$work/sweep96.json"
checked_plot "$work/train-sweep-loss.png" "$work/sweep96.json" --kind loss-curves --width 7 "${fig[@]}"
checked_plot "$work/train-sweep-grad.png" "$work/sweep96.json" --kind grad-over-training --width 7 "${fig[@]}"

cp "$work"/compare-*.png "$work"/claims.png "$work"/train-sweep-*.png "$out"/
ls -1 "$out"/compare-*.png "$out"/claims.png "$out"/train-sweep-*.png
