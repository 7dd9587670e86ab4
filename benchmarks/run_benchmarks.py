#!/usr/bin/python3
"""run_benchmarks.py — explicit-mode benchmarks of docs/benchmarks.md, side by side in one run.

  /usr/bin/python3 benchmarks/run_benchmarks.py build      (build = the CMake build directory)

1. One Post-LN block's explicit Jacobian at n = 32, d = 64 (N = 2048): gradflow (bench_jacobians) vs
   torch.autograd.functional.jacobian(vectorize=True), float64, 2 threads, best of 3.
2. The 24-layer products at N = 2048: GFLOP/s of gradflow's P·B GEMMs vs the DGEMM rate measured in the
   same process.
3. `gradflow analyze --placement post --layers 24` end to end (best of 3), beside a naive path on the same
   matrices (bench_headline_svd: the walk + plain dgesdd on each P_l), its SVDs alone, and the flops/DGEMM ceiling.
4. Whole commands against PyTorch with the same run's DGEMM rate (bench_commands.py).
Prints a Markdown table to paste into docs/benchmarks.md.
"""
import json, os, platform, subprocess, sys, time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
load0 = os.getloadavg()[0]  # other work on the machine skews every number: recorded with the results
threads = "2"
env = dict(os.environ, OMP_NUM_THREADS=threads)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_kernels import use_gradflow_kernels
kernels = use_gradflow_kernels(os.path.join(build, "gradflow"))  # before importing torch
env = dict(os.environ, OMP_NUM_THREADS=threads)

import torch
torch.set_num_threads(int(threads))
torch.manual_seed(0)

out = subprocess.run([os.path.join(build, "bench_jacobians"), "24", "3"], capture_output=True, text=True, env=env, check=True)
g = json.loads(out.stdout)

n, d, h = 32, 64, 4
layer = torch.nn.TransformerEncoderLayer(d, h, dim_feedforward=4 * d, dropout=0.0, batch_first=True, norm_first=False)
layer = layer.double().eval()
x = torch.randn(1, n, d, dtype=torch.float64)
f = lambda v: layer(v)
torch.autograd.functional.jacobian(f, x, vectorize=True)  # warm-up
best = 1e300
for _ in range(3):
    t = time.perf_counter()
    J = torch.autograd.functional.jacobian(f, x, vectorize=True)
    best = min(best, time.perf_counter() - t)

headline = 1e300  # best of 3
for _ in range(3):
    t = time.perf_counter()
    subprocess.run([os.path.join(build, "gradflow"), "analyze", "--placement", "post", "--layers", "24", "-q"], env=env, check=True)
    headline = min(headline, time.perf_counter() - t)
# the headline's 24 products: plain dgesdd on them vs the route analyze takes, the same run's DGEMM rate
out = subprocess.run([os.path.join(build, "bench_headline_svd"), "3"], capture_output=True, text=True, env=env, check=True)
hs = json.loads(out.stdout)
naive = hs["walk_seconds"] + hs["naive_dgesdd_seconds"]

cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
print(f"machine: {cpu}, {os.cpu_count()} cores, OMP_NUM_THREADS={threads}, torch {torch.__version__} ({torch.get_num_threads()} threads), load average at start {load0:.2f}, at end {os.getloadavg()[0]:.2f}; both sides on OpenBLAS core {kernels['openblas_core']}, OpenMP waits: {kernels['omp_wait_policy']}")
print("| benchmark | gradflow | reference | ratio |")
print("|---|---|---|---|")
print(f"| Post-LN block Jacobian, N = {g['N']} | {g['block_jacobian_seconds']*1e3:.1f} ms | torch jacobian(vectorize=True) {best*1e3:.1f} ms | {best / g['block_jacobian_seconds']:.1f}x faster |")
print(f"| 24-layer products P_l = P_(l+1) B_l, N = {g['N']}: the GEMMs alone | {g['products_gflops']:.1f} GFLOP/s ({g['products_seconds']:.2f} s; best single product {100*g['best_product_fraction_of_dgemm']:.0f}% of DGEMM) | DGEMM {g['dgemm_gflops']:.1f} GFLOP/s | {100*g['products_fraction_of_dgemm']:.0f}% of DGEMM |")
print(f"| the same walk as `analyze` runs it (builds every B_l, multiplies, checks), N = {g['N']} | {g['walk_seconds']:.2f} s | {g['layers'] - 1} DGEMMs | {100*g['walk_fraction_of_dgemm']:.0f}% of DGEMM |")
print(f"| `gradflow analyze --placement post --layers 24` (N = 1024, all spectra), best of 3 | {headline:.2f} s | naive: the walk + plain dgesdd (all threads) on the same 24 P_l, {naive:.2f} s | {headline / naive:.2f}x the naive time |")
print(f"| its 24 SVDs of P_l alone: two-stage band route, two layers at once | {hs['paired_seconds']:.2f} s (one thread, in turn: {hs['banded_one_thread_seconds']:.2f} s) | dgesdd {hs['naive_dgesdd_seconds']:.2f} s | {hs['paired_seconds'] / hs['naive_dgesdd_seconds']:.2f}x; max abs diff {hs['max_abs_diff_over_sigma_max']:.1e} sigma_max, rank differences {hs['rank_differences']} |")
print(f"| its ceiling: {hs['explicit_flops'] / 1e9:.0f} GFLOP (23 products 2N^3, 24 bidiagonalizations 8N^3/3) at the DGEMM rate | {headline:.2f} s | {hs['ceiling_seconds']:.2f} s at DGEMM {hs['dgemm_gflops']:.1f} GFLOP/s | {100 * hs['ceiling_seconds'] / headline:.0f}% of the ceiling's speed |")

# issue 14: whole commands (full-scale gradients only, one block's Jacobian) against PyTorch, with this run's DGEMM rate
print()
subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_commands.py"), build],
               env=env, check=True)
