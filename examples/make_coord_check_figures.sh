#!/bin/bash
# make_coord_check_figures.sh — regenerates docs/img/coord-check-sp.png and docs/img/coord-check-mup.png
# (docs/training.md, "Coordinate checks"): microsoft/mup's coordinate check over widths 16..256 of a 2-layer Pre-LN
# model trained 5 Adam steps, under the standard parametrization and under muP, and prints the growth exponents the
# table there quotes (t = 1 and t = 5, seeds' mean ± standard error), for the width and the depth checks.
#   examples/make_coord_check_figures.sh [PATH/TO/gradflow]     (from the repository root; a few seconds)
# Fixed seeds: the figures and numbers come out the same each time on the same build.
set -euo pipefail
gf=${1:-build/gradflow}
source "$(dirname "$0")/figure_check.sh"  # checked_plot: the PNG, and its PDF measured
out=docs/img
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
C="--placement pre --heads 2 --seq-len 8 --task copy --vocab 16 --batch 4 --lr 1e-2 --schedule constant --seeds 3"
"$gf" coord-check $C --layers 2 --d-model 16 --widths 16,32,64,128,256 --json "$work/w_sp.json" -q
"$gf" coord-check $C --layers 2 --d-model 16 --widths 16,32,64,128,256 --parametrization mup --json "$work/w_mup.json" -q
"$gf" coord-check $C --d-model 32 --depths 2,4,8,16,32 --json "$work/d_sp.json" -q
for p in depth-mup completep; do
  "$gf" coord-check $C --d-model 32 --depths 2,4,8,16,32 --parametrization $p --json "$work/d_$p.json" -q
done
checked_plot "$work/coord-check-sp.png" "$work/w_sp.json" --kind coord-check --width 7 --dpi 150 --title "SP (Adam)"
checked_plot "$work/coord-check-mup.png" "$work/w_mup.json" --kind coord-check --width 7 --dpi 150 --title "muP (Adam)"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
for f in ["w_sp", "w_mup", "d_sp", "d_depth-mup", "d_completep"]:
    a = json.load(open(f"{sys.argv[1]}/{f}.json"))["axes"][0]
    cells = []
    for q in ["stream", "attn_branch", "ffn_branch", "attn_logits", "output_logits", "update:linear1_weight"]:
        v = [x for x in a["verdicts"] if x["quantity"] == q]
        cells.append(f"{q} {v[0]['exponent']:+.2f} -> {v[-1]['exponent']:+.2f} ± {v[-1]['stderr']:.2f}")
    print(f"{f}: " + "; ".join(cells))
PY
cp "$work/coord-check-sp.png" "$work/coord-check-mup.png" "$out"/
ls -1 "$out"/coord-check-*.png
