#!/bin/bash
# make_hf_tutorial_figure.sh — docs/img/tutorial-hf-synthetic.png, the figure of docs/tutorial.md section 5, made
# WITHOUT network access: examples/synthetic_hf_checkpoint.py writes RANDOM (untrained) checkpoints with the exact
# layout and shapes of bert-base-uncased and gpt2, and examples/hf_checkpoints.py --offline runs its usual
# commands on them. The figure shows what the script draws, not what the trained models do.
#   examples/make_hf_tutorial_figure.sh [PATH/TO/gradflow]   (from the repository root; ~1 GB of temporary files,
#                                                            about a minute on 2 busy cores)
set -euo pipefail
gf=${1:-build/gradflow}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 examples/synthetic_hf_checkpoint.py --family bert --out "$work/bert-base-uncased"
/usr/bin/python3 examples/synthetic_hf_checkpoint.py --family gpt2 --out "$work/gpt2"
/usr/bin/python3 examples/hf_checkpoints.py --out-dir "$work" --gradflow "$gf" --offline \
  --title "SYNTHETIC random weights (not trained)" --plot-options "--width 5 --dpi 150"
mkdir -p docs/img
cp "$work/grad_by_depth.png" docs/img/tutorial-hf-synthetic.png
/usr/bin/python3 -c "
import json, sys
for name in ['bert-base-uncased', 'bert-base-uncased_init', 'gpt2', 'gpt2_lm', 'gpt2_init']:
    r = json.load(open(f'$work/{name}.json'))
    g = [l['grad_norm'] for l in r['layers']]
    print(f'{name}: ||dL/dx_0|| = {g[0]:.4g}, ||dL/dx_11|| = {g[-1]:.4g}')
"
