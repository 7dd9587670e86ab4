#!/usr/bin/python3
"""bench_decoder_block.py BUILD — one llama-preset block's explicit Jacobian (Pre-RMSNorm, SwiGLU, RoPE, grouped-query
heads 4:2, no biases, causal; n = 32, d = 64, N = 2048) in gradflow (bench_jacobians 1 R llama, warm, best of R) and in
PyTorch (torch.autograd.functional.jacobian(vectorize=True) of the same block written from its equations,
tests/pytorch/decoder_reference.py, float64, warm, best of 3), 2 threads each, side by side in one run, with the
machine's DGEMM rate of the same run. Prints one Markdown row for docs/benchmarks.md (issue 32's goal: >= 20x)."""
import json, os, subprocess, sys, time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
threads = "2"
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "tests", "pytorch"))
from same_kernels import use_gradflow_kernels
from dgemm_ceiling import DgemmRate
kernels = use_gradflow_kernels(os.path.join(build, "gradflow"))  # before importing torch
env = dict(os.environ, OMP_NUM_THREADS=threads)
import torch
import decoder_reference as dr
torch.set_num_threads(int(threads))
torch.manual_seed(0)

rate = DgemmRate(build, int(threads))
rate.measure()
load0 = os.getloadavg()[0]
out = subprocess.run([os.path.join(build, "bench_jacobians"), "1", "3", "llama"], capture_output=True, text=True,
                     env=env, check=True)
g = json.loads(out.stdout)

spec = dr.Spec("pre", layers=1, d=64, heads=4, d_ff=256, n=32, ffn="swiglu", norm="rmsnorm", bias=False, causal=True,
               kv_heads=2, rope=1.0)
block = dr.Stack(spec).layers[0]
dr.randomize(block, 0)
mask = torch.triu(torch.full((spec.n, spec.n), float("-inf"), dtype=torch.float64), 1)
x = torch.randn(spec.n, spec.d, dtype=torch.float64)
f = lambda v: block(v, mask)
torch.autograd.functional.jacobian(f, x, vectorize=True)  # warm-up
best = 1e300
for _ in range(3):
    t = time.perf_counter()
    J = torch.autograd.functional.jacobian(f, x, vectorize=True)
    best = min(best, time.perf_counter() - t)
rate.measure()
assert J.reshape(g["N"], g["N"]).shape == (g["N"], g["N"])
print(rate.describe())
print(f"load average {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end; torch {torch.__version__}, "
      f"OpenBLAS core {kernels['openblas_core']}")
print(f"| llama-preset block Jacobian (Pre-RMSNorm, SwiGLU, RoPE, GQA 4:2, causal), N = {g['N']} | "
      f"{g['block_jacobian_seconds'] * 1e3:.1f} ms | torch jacobian(vectorize=True) {best * 1e3:.1f} ms | "
      f"**{best / g['block_jacobian_seconds']:.1f}x faster** |")
