#!/bin/bash
# lr_transfer_grid.sh — does the best Adam learning rate move with width or depth? (issue 35, docs/findings.md)
# Train-sweeps of Post-LN and Pre-LN on the markov task over lr = 2^-11 .. 2^-4, 2 seeds, 300 steps each:
#   width: d = 32, 64, 128 (L = 2), sp and mup (base width 32)
#   depth: L = 2, 4, 8 (d = 64), sp, depth-mup and completep (base width 64, base depth 2)
# and prints, per placement, parametrization and size, the fitted optimum log2 lr* (mean ± standard error over
# seeds; train-sweep's optimal_lr) and the lowest mean final eval loss. About 15 minutes on 2 cores.
#   examples/lr_transfer_grid.sh [PATH/TO/gradflow] [OUT_DIR]
set -euo pipefail
gf=${1:-build/gradflow}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
LR=$(/usr/bin/python3 -c "print(','.join(repr(2.0**k) for k in range(-11, -3)))")
C="--placements post,pre --warmup 0 --lr $LR --seeds 2 --seq-len 16 --task markov --vocab 16 --batch 8 --steps 300 --schedule constant -q"
# the width axis in one train-sweep each (--d-model 32,64,128: the same runs as one sweep per width, bit for bit)
"$gf" train-sweep $C --layers 2 --d-model 32,64,128 --heads 4 --json "$out/width_sp.json"
"$gf" train-sweep $C --layers 2 --d-model 32,64,128 --heads 4 --parametrization mup --base-width 32 --json "$out/width_mup.json"
"$gf" train-sweep $C --layers 2,4,8 --d-model 64 --heads 4 --json "$out/depth_sp.json"
for p in depth-mup completep; do
  "$gf" train-sweep $C --layers 2,4,8 --d-model 64 --heads 4 --parametrization $p --base-width 64 --base-depth 2 \
    --json "$out/depth_$p.json"
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, sys
print("file                      placement  d    L  log2 lr*         best mean final eval loss")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(f))
    for g in r["groups"]:
        o = g["optimal_lr"]["0"]
        lo = min((c["final_eval_loss_mean"] for c in g["cells"] if c["final_eval_loss_mean"] is not None), default=None)
        m = f"{o['log2_lr_mean']:+.2f} ± {o['log2_lr_stderr']:.2f}" if o["log2_lr_stderr"] is not None else \
            (f"{o['log2_lr_mean']:+.2f}" if o["log2_lr_mean"] is not None else "edge")
        d = g.get("d_model", r["config"].get("d_model"))  # a group's own width on a width axis
        print(f"{os.path.basename(f):<26}{g['placement']:<11}{d:<5}{g['layers']:<3}{m:<17}"
              f"{lo if lo is None else round(lo, 4)}")
PY
