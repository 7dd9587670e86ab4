#!/bin/bash
# gpu-check-decoder.sh — the short device check of issue 32's blocks on a lent GPU (about 1 minute; run after
# scripts/gpu-build.sh, with carry [".gpu"]): the [cuda] backend tests (their device-chain cases include the parallel
# residual and the gated feed-forwards without biases), a parallel SwiGLU model's streamed norms and a llama-preset
# model's explicit products on GPU and CPU side by side (every norm to kBackendTol), the refusal of the decoder
# attention in streamed mode (exit 2, by name), and compute-sanitizer's memcheck of a tiny parallel GeGLU run.
# Results: $OUT/gpu-check-decoder.txt.
set -u
cd "$(dirname "$0")/.."
CARRY=${1:-.gpu}
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
R="$OUT/gpu-check-decoder.txt"
export LD_LIBRARY_PATH="$(cd "$CARRY/lib" && pwd):/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
G="$CARRY/bin/gradflow"
M="--d-model 256 --heads 4 --d-ff 1024 --seq-len 8 --layers 2"
{
  echo "gpu-check-decoder: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), commit $(cat "$CARRY/commit" 2>/dev/null)"
  nvidia-smi -L 2>&1
  timeout 120 "$CARRY/bin/test_backend" "[cuda]" -d yes; echo "=== test_backend [cuda]: exit $?"
  for dev in cuda cpu; do
    timeout 60 "$G" analyze $M --placement parallel --ffn swiglu --bias off --mode streamed --device $dev -q \
      --json "$OUT/parallel_$dev.json"; echo "=== parallel swiglu streamed N=2048 on $dev: exit $?"
    timeout 60 "$G" analyze $M --arch llama --kv-heads 2 --mode explicit --device $dev -q \
      --json "$OUT/llama_$dev.json"; echo "=== llama (GQA 4:2) explicit N=2048 on $dev: exit $?"
  done
  timeout 30 "$G" analyze $M --arch llama --mode streamed --device cuda -q
  echo "=== llama streamed on cuda (a refusal naming RoPE, exit 2, is expected): exit $?"
  for pair in parallel llama; do
    /usr/bin/python3 - "$OUT/${pair}_cpu.json" "$OUT/${pair}_cuda.json" "$pair" << 'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = 0.0
for la, lb in zip(a["layers"], b["layers"]):
    for part in ("block_jacobian", "product_jacobian"):
        for key in ("spectral_norm", "frobenius_norm", "minus_identity_spectral_norm", "min_singular_value"):
            x, y = la[part].get(key), lb[part].get(key)
            if x is not None and y is not None and x != 0:
                worst = max(worst, abs(x - y) / abs(x))
print(f"=== agreement {sys.argv[3]}: worst relative difference {worst:.2e} (kBackendTol 1e-10): "
      f"{'ok' if worst <= 1e-10 else 'FAIL'}")
PY
  done
  timeout 60 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --print-limit 5 "$G" analyze --layers 2 \
    --d-model 8 --heads 2 --d-ff 16 --seq-len 4 --placement parallel --ffn geglu --bias off --mode streamed \
    --device cuda -q; echo "=== memcheck parallel geglu streamed: exit $?"
} > "$R" 2>&1
cat "$R"
