#!/bin/bash
# make_rank_collapse_figure.sh — regenerates docs/img/tutorial-rank-collapse.png (docs/tutorial.md, step 6) and prints
# the numbers the tutorial quotes: the distance to rank one and the mean token cosine of the top block's input
# x_{L-1} over residual scale x depth, Post-LN beside Pre-LN, from one 2-D sweep (gradflow sweep --param ...
# --param2 ...) drawn by --kind phase-diagram.
#   examples/make_rank_collapse_figure.sh [PATH/TO/gradflow]     (from the repository root; about 6 s on 2 busy cores)
# Every run is at initialization with fixed seeds, so the figure and numbers come out the same each time.
set -euo pipefail
gf=${1:-build/gradflow}
source "$(dirname "$0")/figure_check.sh"  # checked_plot: the PNG, and its PDF measured
out=docs/img
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$gf" sweep --placement post,pre --param residual-scale --values 0.125,0.25,0.5,1,2,4 \
  --param2 layers --values2 2,4,8,16,32,64 --d-model 32 --heads 4 --seq-len 8 --init xavier \
  --gradients-only --seeds 3 -q --json "$work/rank.json"
checked_plot "$work/tutorial-rank-collapse.png" "$work/rank.json" --kind phase-diagram --metric top.token_geometry.rank_one_distance \
  --levels 0.5,0.1,1e-3,1e-8 --width 6 --dpi 150
/usr/bin/python3 - "$work/rank.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for g in r["groups"]:
    s = g["scalars"]
    d, c = s["top.token_geometry.rank_one_distance"], s["top.token_geometry.mean_cosine"]
    print(f'{g["placement"]:5s} {r["param"]}={g["value"]:5s} {r["param2"]}={g["value2"]:3s} distance to rank one '
          f'{d["mean"]:.3g} ± {d["std"]:.2g}, token cosine {c["mean"]:.4f} ± {c["std"]:.2g}')
PY
cp "$work/tutorial-rank-collapse.png" "$out"/
ls -1 "$out/tutorial-rank-collapse.png"
