#!/bin/sh
# precision_underflow.sh GRADFLOW OUT_DIR [precision|autocast] — the numbers of docs/findings.md's "How much of it is rounding?" section:
# float16 and bfloat16 gradients of Post-LN and Pre-LN (d = 64, h = 4, n = 16, torch init) at L = 6 and 24, with the
# output cotangent g ~ N(0, 1) scaled by 1e-6 (the size a mean-reduced loss over ~10^6 outputs gives dL/dy), without
# and with a dynamic loss scale. Prints one line per run: placement, L, precision, loss scale, the bottom layer's
# relative error and underflow fraction, the layers with underflow. The third argument picks the regime: the model
# cast to the type (--precision, the default) or autocast's (--autocast: the stream float32; the bottom block's weight
# gradients' underflow printed too).
set -eu
gradflow=$1
out=$2
regime=${3:-precision}
case "$regime" in precision | autocast) ;; *) echo "precision_underflow.sh: regime '$regime': use precision or autocast" >&2; exit 2 ;; esac
mkdir -p "$out"
/usr/bin/python3 - "$out/g.npy" <<'PY'
import sys
import numpy as np
np.save(sys.argv[1], 1e-6 * np.random.default_rng(0).standard_normal((16, 64)))
PY
for placement in post pre; do
  for L in 6 24; do
    for p in bf16 f16; do
      for scale in 1 dynamic; do
        [ "$p" = bf16 ] && [ "$scale" = dynamic ] && continue
        r="$out/$regime-$placement-$L-$p-$scale.json"
        "$gradflow" analyze --placement "$placement" --layers "$L" --cotangent "$out/g.npy" --"$regime" "$p" \
          --loss-scale "$scale" -q --json "$r"
        /usr/bin/python3 - "$r" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c, p = r["config"], r["precision"]
b = r["layers"][0]["precision"]
under = p["summary"]["underflow_layers"]
print(f"{c['placement']:5} L={c['layers']:<3} {p['regime']:8} {p['type']:5} S={p['loss_scale']:<10g} bottom: rel.err "
      f"{b['grad_rel_error']:.3g}, underflow {b['underflow_fraction']:.3g}, subnormal {b['subnormal_fraction']:.3g}, "
      f"weight gradients underflowed {b['param_underflow_fraction']:.3g}; layers with underflow {len(under)}/{c['layers']} "
      f"(in weight gradients {len(p['summary']['param_underflow_layers'])}); max rel.err {p['summary']['max_grad_rel_error']:.3g}")
PY
      done
    done
  done
done
