#!/usr/bin/python3
"""run_benchmarks.py — every benchmark of docs/benchmarks.md (and the scaling table of docs/scaling.md), side by
side in one run; each table beside the DGEMM rate measured in its own run and the fraction of it reached.

  /usr/bin/python3 benchmarks/run_benchmarks.py build            every row (about 20 minutes on 2 cores)
  /usr/bin/python3 benchmarks/run_benchmarks.py build --quick    the tables that take seconds (about 3 minutes)

1. One Post-LN block's explicit Jacobian at n = 32, d = 64 (N = 2048): gradflow (bench_jacobians) vs
   torch.autograd.functional.jacobian(vectorize=True), float64, 2 threads, best of 3.
2. The 24-layer products at N = 2048: GFLOP/s of gradflow's P·B GEMMs vs the DGEMM rate measured in the
   same process.
3. `gradflow analyze --placement post --layers 24` end to end (best of 3), beside a naive path on the same
   matrices (bench_headline_svd: the walk + plain dgesdd on each P_l), its SVDs alone, and the flops/DGEMM ceiling.
4. Whole commands against PyTorch (bench_commands.py), and where the full-scale forward + backward's time goes: its
   DGEMM calls, timed in the pass and each shape alone, on both sides (bench_gemm_shapes.py).
5. Matrix-free mode at full scale (bench_matrix_free.py; --quick: the gradients only).
6. Training updates per second against PyTorch, 2 threads and 1 (bench_train.py; --quick: 2 threads only).
7. Streamed exact norms (bench_streamed.py; --quick: the headline size only).
8. The scaling sweep of docs/scaling.md (scaling_sweep.py; not with --quick).
Prints Markdown tables to paste into the docs.
"""
import json, os, platform, subprocess, sys, time

args = [x for x in sys.argv[1:] if not x.startswith("--")]
build = args[0] if args else "build"
quick = "--quick" in sys.argv[1:]
load0 = os.getloadavg()[0]  # other work on the machine skews every number: recorded with the results
threads = "2"
env = dict(os.environ, OMP_NUM_THREADS=threads)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_kernels import use_gradflow_kernels
from dgemm_ceiling import DgemmRate, block_jacobian_flops
kernels = use_gradflow_kernels(os.path.join(build, "gradflow"))  # before importing torch
env = dict(os.environ, OMP_NUM_THREADS=threads)

import torch
torch.set_num_threads(int(threads))
torch.manual_seed(0)

rate = DgemmRate(build, int(threads))  # measured at the start and the end: the better one is this run's
rate.measure()
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

rate.measure()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
print(f"machine: {cpu}, {os.cpu_count()} cores, OMP_NUM_THREADS={threads}, torch {torch.__version__} ({torch.get_num_threads()} threads), load average at start {load0:.2f}, at end {os.getloadavg()[0]:.2f}; both sides on OpenBLAS core {kernels['openblas_core']}, OpenMP waits: {kernels['omp_wait_policy']}")
print(rate.describe())
N, L = g["N"], g["layers"]
jfl = block_jacobian_flops(n, d, h, 4 * d)
pfl = 2.0 * N ** 3 * (L - 1)
sfl = hs["layers"] * 8.0 / 3.0 * hs["N"] ** 3
print("| benchmark | gradflow | reference | ratio | ceiling (flops / DGEMM rate) | fraction of DGEMM |")
print("|---|---|---|---|---|---|")
print(f"| Post-LN block Jacobian, N = {N} | {g['block_jacobian_seconds']*1e3:.1f} ms | torch jacobian(vectorize=True) {best*1e3:.1f} ms | **{best / g['block_jacobian_seconds']:.1f}x faster** | {jfl / 1e9:.2f} GFLOP: {rate.ceiling(jfl) * 1e3:.1f} ms | {rate.fraction(jfl, g['block_jacobian_seconds']):.0%} |")
print(f"| {L}-layer products P_l = P_(l+1) B_l, N = {N}: the GEMMs alone | {g['products_gflops']:.1f} GFLOP/s ({g['products_seconds']:.2f} s; best single product {100*g['best_product_fraction_of_dgemm']:.0f}% of bench_jacobians' own DGEMM) | DGEMM {g['dgemm_gflops']:.1f} GFLOP/s in the same process | {100*g['products_fraction_of_dgemm']:.0f}% of that DGEMM | {pfl / 1e9:.0f} GFLOP: {rate.ceiling(pfl):.2f} s | {rate.fraction(pfl, g['products_seconds']):.0%} |")
print(f"| the same walk as `analyze` runs it (builds every B_l, multiplies, checks), N = {N} | {g['walk_seconds']:.2f} s | {L - 1} DGEMMs | {100*g['walk_fraction_of_dgemm']:.0f}% of that DGEMM | {pfl / 1e9:.0f} GFLOP: {rate.ceiling(pfl):.2f} s | {rate.fraction(pfl, g['walk_seconds']):.0%} |")
print(f"| `gradflow analyze --placement post --layers 24` (N = {hs['N']}, all spectra), best of 3 | {headline:.2f} s | naive: the walk + plain dgesdd (all threads) on the same 24 P_l, {naive:.2f} s | {headline / naive:.2f}x the naive time | {hs['explicit_flops'] / 1e9:.0f} GFLOP (23 products 2N^3, 24 bidiagonalizations 8N^3/3): {rate.ceiling(hs['explicit_flops']):.2f} s | {rate.fraction(hs['explicit_flops'], headline):.0%} (naive {rate.fraction(hs['explicit_flops'], naive):.0%}) |")
print(f"| its 24 SVDs of P_l alone: two-stage band route, two layers at once | {hs['paired_seconds']:.2f} s (one thread, in turn: {hs['banded_one_thread_seconds']:.2f} s) | dgesdd {hs['naive_dgesdd_seconds']:.2f} s | {hs['paired_seconds'] / hs['naive_dgesdd_seconds']:.2f}x; max abs diff {hs['max_abs_diff_over_sigma_max']:.1e} sigma_max, rank differences {hs['rank_differences']} | {sfl / 1e9:.0f} GFLOP: {rate.ceiling(sfl):.2f} s | {rate.fraction(sfl, hs['paired_seconds']):.0%} (dgesdd {rate.fraction(sfl, hs['naive_dgesdd_seconds']):.0%}) |")

here = os.path.dirname(os.path.abspath(__file__))
exe = os.path.join(build, "gradflow")


def part(title, script, *extra):
    print(f"\n### {title}", flush=True)
    subprocess.run([sys.executable, os.path.join(here, script), *extra], env=env, check=True)


part("Whole commands against PyTorch (issue 14)", "bench_commands.py", build)
part("Where a full-scale forward + backward's time goes: its DGEMM calls (issue 14, goal 1)", "bench_gemm_shapes.py",
     build, "--repeats", "5")
part("Matrix-free mode at full scale (issue 5)", "bench_matrix_free.py", exe,
     *(["--gradients-only"] if quick else ["--default-run"]))
part("Training, 2 threads (issue 8)", "bench_train.py", exe, "--steps", "50" if quick else "100", "--threads", "2")
if not quick:
    part("Training, 1 thread (issue 8)", "bench_train.py", exe, "--steps", "100", "--threads", "1")
part("Streamed exact norms (issue 12)", "bench_streamed.py", build, *(["--small-only"] if quick else []))
if not quick:
    part("Streamed exact norms, the P_l alone (issue 12)", "bench_streamed.py", build, "--large-only", "--p-only")
    part("Scaling against N and L (docs/scaling.md)", "scaling_sweep.py", exe)
