#!/bin/sh
# precision_underflow_depth.sh GRADFLOW OUT_DIR [SCALE] — float16 underflow against depth: Post-LN, Pre-LN, DeepNorm and
# Peri-LN (d = 64, h = 4, n = 16) with the torch and xavier inits and torch with the 1/sqrt(2L) scale, at L = 6, 12,
# 24, 48, the output cotangent SCALE · N(0, 1) (default 1e-4), without loss scaling and with --loss-scale dynamic.
# One line per configuration: the bottom layer's fraction of entries underflowed to 0 and its relative error at
# float16, the layers with underflow, and the dynamic loss scale with the bottom error it leaves
# (docs/findings.md, "How much of it is rounding?").
set -eu
gradflow=$1
out=$2
scale=${3:-1e-4}
mkdir -p "$out"
/usr/bin/python3 - "$out/g.npy" "$scale" <<'PY'
import sys
import numpy as np
np.save(sys.argv[1], float(sys.argv[2]) * np.random.default_rng(0).standard_normal((16, 64)))
PY
for placement in post pre deepnorm peri; do
  for init in torch xavier torch-inv; do
    for L in 6 12 24 48; do
      case $init in
        torch-inv) opts="--init torch --init-scale inv-sqrt-2L" ;;
        *) opts="--init $init" ;;
      esac
      base="$out/$placement-$init-$L"
      "$gradflow" analyze --placement "$placement" --layers "$L" $opts --cotangent "$out/g.npy" --precision f16 \
        -q --json "$base.json" 2>/dev/null
      "$gradflow" analyze --placement "$placement" --layers "$L" $opts --cotangent "$out/g.npy" --precision f16 \
        --loss-scale dynamic -q --json "$base.dyn.json" 2>/dev/null
      /usr/bin/python3 - "$base.json" "$base.dyn.json" "$init" <<'PY'
import json, math, sys
r, d = (json.load(open(p)) for p in sys.argv[1:3])
c, b, bd = r["config"], r["layers"][0]["precision"], d["layers"][0]["precision"]
u = r["precision"]["summary"]["underflow_layers"]
print(f"{c['placement']:8} {sys.argv[3]:9} L={c['layers']:<3} bottom underflow {b['underflow_fraction']:.3f} "
      f"error {b['grad_rel_error']:.3f}; layers with underflow {len(u):2}/{c['layers']}; "
      f"dynamic S = 2^{int(math.log2(d['precision']['loss_scale']))}: bottom error {bd['grad_rel_error']:.4f}")
PY
    done
  done
done
