#!/bin/bash
# make_rank_collapse_figure.sh — regenerates docs/img/tutorial-rank-collapse.png (docs/tutorial.md, step 5) and prints
# the numbers the tutorial quotes: the mean token cosine of the top block's input x_{L-1} over residual scale x depth,
# Post-LN beside Pre-LN, from one 2-D sweep (gradflow sweep --param ... --param2 ...) drawn by --kind phase-diagram.
#   examples/make_rank_collapse_figure.sh [PATH/TO/gradflow]     (from the repository root; SECONDS_NOTE on 2 busy cores)
# Every run is at initialization with fixed seeds, so the figure and numbers come out the same each time.
set -euo pipefail
gf=${1:-build/gradflow}
out=docs/img
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$gf" sweep --placement post,pre PARAMS_HERE --seeds 3 -q --gradients-only --json "$work/rank.json"
"$gf" plot "$work/rank.json" --kind phase-diagram --metric top.token_geometry.mean_cosine --logy off \
  -o "$work/tutorial-rank-collapse.png" --width 6 --dpi 150
/usr/bin/python3 - "$work/rank.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for g in r["groups"]:
    c = g["scalars"]["top.token_geometry.mean_cosine"]
    print(f'{g["placement"]:5s} {r["param"]}={g["value"]:5s} {r["param2"]}={g["value2"]:4s} top token cosine {c["mean"]:.3f} ± {c["std"]:.3f}')
PY
cp "$work/tutorial-rank-collapse.png" "$out"/
ls -1 "$out/tutorial-rank-collapse.png"
