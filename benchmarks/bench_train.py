#!/usr/bin/python3
"""bench_train.py GRADFLOW — training steps per second, gradflow vs PyTorch (float64, 2 threads), side by side.

For each configuration: `gradflow train --threads 2` for --steps updates (its report's updates_per_second: the
training loop without evaluation time), then the same model in PyTorch (nn.TransformerEncoder float64, causal
mask, token + positional embedding, output projection, cross-entropy on the same number of target positions,
torch.optim.Adam(betas=(0.9, 0.98), eps=1e-9)) for the same number of updates with torch.set_num_threads(2),
timed around the loop after 5 warm-up updates; PyTorch runs on the OpenBLAS kernels and OpenMP wait policy
gradflow picks (benchmarks/same_kernels.py). Prints one line per configuration and the ratio
gradflow/PyTorch (> 1: gradflow is faster). Measures; asserts nothing. --threads 1 gives a comparison that a
loaded machine distorts less (PyTorch's OpenMP threads spin and collapse when the cores are oversubscribed).
Beside each rate: this run's DGEMM rate on the same number of threads (measured before and after), the ceiling (the
updates per second if an update's GEMM flops, dgemm_ceiling.train_update_flops, ran at that rate) and the fraction
of it each side reached. These models are small (d = 32-64): their products are far below DGEMM's efficient sizes.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "pytorch"))
from dgemm_ceiling import DgemmRate, train_update_flops  # noqa: E402
torch = tr = LM = None  # imported in main(), after use_gradflow_kernels (same OpenBLAS kernels and OpenMP waits)

CONFIGS = [  # (placement, layers, d, heads, n, vocab, batch)
    ("pre", 6, 32, 2, 16, 16, 16),
    ("post", 12, 32, 2, 16, 16, 16),
    ("pre", 6, 64, 4, 32, 32, 16),
]


def gradflow_rate(gf, cfg, steps, threads):
    p, L, d, h, n, V, B = cfg
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "r.json")
        subprocess.run([gf, "train", "--placement", p, "--layers", str(L), "--d-model", str(d), "--heads", str(h),
                        "--seq-len", str(n), "--vocab", str(V), "--batch", str(B), "--task", "copy", "--steps",
                        str(steps), "--log-every", str(steps), "--eval-size", "1", "--threads", str(threads), "--schedule",
                        "constant", "-q", "--json", js], check=True, env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
        return json.load(open(js))["timing_seconds"]["updates_per_second"]


def torch_rate(cfg, steps, threads):
    p, L, d, h, n, V, B = cfg
    torch.set_num_threads(threads)
    spec = tr.Spec(p, layers=L, d=d, heads=h, d_ff=4 * d, n=n, causal=True, final_norm=(p == "pre"))
    model = LM(spec, V, False)
    with torch.no_grad():
        for prm in model.parameters():
            prm.normal_(0, 0.1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    gen = torch.Generator().manual_seed(0)
    tokens = torch.randint(2, V, (B, n + 1), generator=gen)
    targets = tokens[:, 1:].clone()
    targets[:, : n // 2] = -1  # copy: the answer half is the target

    def step():
        opt.zero_grad(set_to_none=True)
        model.loss(tokens, targets).backward()
        opt.step()

    for _ in range(5):
        step()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gradflow")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2, help="threads of both sides (the issue's setting: 2)")
    a = ap.parse_args()
    global torch, tr, LM
    from same_kernels import use_gradflow_kernels
    kernels = use_gradflow_kernels(os.path.abspath(a.gradflow))
    import torch as _torch
    import torch_reference as _tr
    from test_train_against_torch import LM as _LM
    torch, tr, LM = _torch, _tr, _LM
    print(f"both sides: OpenBLAS core {kernels['openblas_core']}, OpenMP waits: {kernels['omp_wait_policy']}")
    print(f"torch {torch.__version__}, float64, {a.threads} thread(s); {a.steps} Adam updates per measurement; "
          f"load average {os.getloadavg()[0]:.2f}")
    rate = DgemmRate(os.path.dirname(os.path.abspath(a.gradflow)), a.threads)
    rate.measure()
    rows = []
    for cfg in CONFIGS:
        g = gradflow_rate(os.path.abspath(a.gradflow), cfg, a.steps, a.threads)
        t = torch_rate(cfg, a.steps, a.threads)
        p, L, d, h, n, V, B = cfg
        rows.append((cfg, g, t, train_update_flops(L, n, d, 4 * d, V, B)))
        print(f"{p:<5} L={L:<3} d={d:<4} n={n:<4} B={B:<3} gradflow {g:.1f}/s  torch {t:.1f}/s  {g / t:.2f}x", flush=True)
    rate.measure()
    print(f"\n{rate.describe()}; load average {os.getloadavg()[0]:.2f} at the end")
    print(f"| model | gradflow, {a.threads} thread(s) | PyTorch | ratio | ceiling (update flops / DGEMM rate) | "
          f"fraction of DGEMM: gradflow / PyTorch |")
    print("|---|---|---|---|---|---|")
    for (p, L, d, h, n, V, B), g, t, fl in rows:
        name = {"pre": "Pre-LN", "post": "Post-LN"}.get(p, p)
        print(f"| {name}, L = {L}, d = {d}, n = {n}, batch {B} | {g:.1f} /s | {t:.1f} /s | **{g / t:.1f}×** | "
              f"{fl / 1e6:.0f} MFLOP per update: {1 / rate.ceiling(fl):.0f} /s | "
              f"{rate.fraction(fl, 1 / g):.1%} / {rate.fraction(fl, 1 / t):.1%} |")


if __name__ == "__main__":
    main()
