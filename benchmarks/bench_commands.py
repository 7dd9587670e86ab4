#!/usr/bin/python3
"""bench_commands.py — issue 14's whole-command benchmarks, side by side in one run, each beside the DGEMM rate
measured in the same run (bench_jacobians' (2048, 2048) product) and the fraction of it achieved:

1. Full-scale gradients only (Post-LN, d = 512, h = 8, d_ff = 2048, n = 128, L = 24): the whole command
   `gradflow analyze --gradients-only` (initialization, forward, backward, every gradient norm; its peak resident
   memory from /usr/bin/time) against PyTorch's warm forward + backward of the same nn.TransformerEncoder
   (float64, 2 threads, min of 3 after a warm-up, the model built before the clock starts).
2. `gradflow jacobian` of one Post-LN block at n = 32, d = 64 (N = 2048), written as .npy (atomic write, fsync),
   against a Python script doing the same with PyTorch (start-up and import included: both are whole commands):
   build the layer, torch.autograd.functional.jacobian(vectorize=True), np.save to a temporary file, fsync, rename.

Times are the minimum of --repeats runs (wall clock, and the command's user+sys CPU time for gradflow). The ceiling
of a workload is its floating-point operations at the DGEMM rate: `flops / time / rate` is the fraction of the
machine's limit achieved (1.0 = every flop at DGEMM speed).

  /usr/bin/python3 benchmarks/bench_commands.py build [--repeats 5]
Prints Markdown rows for docs/benchmarks.md; run_benchmarks.py calls it.
"""
import argparse, json, os, resource, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dgemm_ceiling import DgemmRate, block_jacobian_flops, forward_backward_flops

FULL = dict(layers=24, d=512, h=8, dff=2048, n=128)
BLOCK = dict(layers=1, d=64, h=4, dff=256, n=32)

TORCH_JACOBIAN_SCRIPT = r"""
import os, sys, time
import numpy as np, torch
torch.set_num_threads(2)
torch.manual_seed(0)
n, d, h, dff, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
layer = torch.nn.TransformerEncoderLayer(d, h, dim_feedforward=dff, dropout=0.0, batch_first=True, norm_first=False)
layer = layer.double().eval()
x = torch.randn(n, d, dtype=torch.float64)
J = torch.autograd.functional.jacobian(lambda v: layer(v.unsqueeze(0)).squeeze(0), x, vectorize=True)
a = J.reshape(n * d, n * d).numpy()
tmp = out + ".tmp.%d" % os.getpid()
with open(tmp, "wb") as f:
    np.save(f, a)
    f.flush()
    os.fsync(f.fileno())
os.rename(tmp, out)
"""


def model_args(m):
    return ["--placement", "post", "--layers", str(m["layers"]), "--d-model", str(m["d"]), "--heads", str(m["h"]),
            "--d-ff", str(m["dff"]), "--seq-len", str(m["n"])]


def timed(cmd, env, rss=None):
    """(wall seconds, user+sys CPU seconds of the child) of one run; with a list `rss`, the run is under
    /usr/bin/time and its peak resident memory (MiB) is appended to it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rss is not None:
        cmd = ["/usr/bin/time", "-f", "peak-rss-kib %M", *cmd]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-800:]}")
    if rss is not None:
        rss.append(next(int(l.split()[1]) for l in r.stderr.splitlines() if l.startswith("peak-rss-kib")) / 1024)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    exe = os.path.abspath(os.path.join(a.build, "gradflow"))
    from same_kernels import use_gradflow_kernels
    kernels = use_gradflow_kernels(exe)  # before torch is imported
    env = dict(os.environ, OMP_NUM_THREADS="2")
    load0 = os.getloadavg()[0]
    res = {"kernels": kernels, "loadavg_at_start": os.getloadavg()}

    rate = DgemmRate(a.build, 2)  # measured at the start and at the end of the run: the better one is the machine's
    rate.measure()

    import torch
    torch.set_num_threads(2)
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        # 1. full-scale gradients only
        m = FULL
        cmd = [exe, "analyze", *model_args(m), "--gradients-only", "-q", "--json", os.path.join(tmp, "g.json")]
        g, inits, all_splits, rss = [], [], [], []
        for _ in range(a.repeats):
            g.append(timed(cmd, env, rss))
            all_splits.append(json.load(open(os.path.join(tmp, "g.json")))["timing_seconds"])
            inits.append(all_splits[-1]["model_and_init"])
        splits = all_splits[min(range(a.repeats), key=lambda i: g[i][0])]  # the fastest run's own split

        def torch_model():  # what PyTorch's side pays to build and initialize the same model
            layer = torch.nn.TransformerEncoderLayer(m["d"], m["h"], m["dff"], dropout=0.0, batch_first=True,
                                                     norm_first=False, dtype=torch.float64)
            return torch.nn.TransformerEncoder(layer, m["layers"], enable_nested_tensor=False).train()
        builds = []
        for _ in range(3):
            t = time.perf_counter()
            model = torch_model()
            builds.append(time.perf_counter() - t)
        x = torch.randn(1, m["n"], m["d"], dtype=torch.float64)
        cot = torch.randn(1, m["n"], m["d"], dtype=torch.float64)
        tt = []
        for i in range(4):
            model.zero_grad(set_to_none=True)
            t = time.perf_counter()
            (model(x) * cot).sum().backward()
            if i > 0:
                tt.append(time.perf_counter() - t)
        fl = forward_backward_flops(m["layers"], m["n"], m["d"], m["dff"])
        gw, gc = min(w for w, _ in g), min(c for _, c in g)
        tw = min(tt)
        res["full_scale"] = {"gradflow_wall": [w for w, _ in g], "gradflow_cpu": [c for _, c in g],
                             "gradflow_timing": all_splits, "gradflow_model_and_init": inits, "gradflow_peak_rss_mib": rss,
                             "torch_build": builds, "torch_warm": tt, "flops": fl}
        # 2. one block's Jacobian as whole commands
        m = BLOCK
        jcmd = [exe, "jacobian", *model_args(m), "--out", os.path.join(tmp, "J.npy")]
        j = [timed(jcmd, env) for _ in range(a.repeats)]
        script = os.path.join(tmp, "torch_jacobian.py")
        open(script, "w").write(TORCH_JACOBIAN_SCRIPT)
        pcmd = [sys.executable, script, str(m["n"]), str(m["d"]), str(m["h"]), str(m["dff"]), os.path.join(tmp, "T.npy")]
        p = [timed(pcmd, dict(os.environ, OMP_NUM_THREADS="2")) for _ in range(max(2, a.repeats // 2))]
        jfl = block_jacobian_flops(m["n"], m["d"], m["h"], m["dff"])
        jw, jc, pw = min(w for w, _ in j), min(c for _, c in j), min(w for w, _ in p)
        res["jacobian"] = {"gradflow_wall": [w for w, _ in j], "gradflow_cpu": [c for _, c in j],
                           "torch_script_wall": [w for w, _ in p], "flops": jfl}
    rate.measure()
    res["dgemm_gflops"] = [r / 1e9 for r in rate.rates]
    res["loadavg_at_end"] = os.getloadavg()

    print(f"{rate.describe()}; load average {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end; "
          f"both sides on OpenBLAS core {kernels['openblas_core']}, OpenMP waits: {kernels['omp_wait_policy']}; "
          f"min of {a.repeats} runs")
    print("| benchmark | gradflow | reference | ratio | ceiling (flops / DGEMM rate) | fraction of DGEMM |")
    print("|---|---|---|---|---|---|")
    fl = res["full_scale"]["flops"]
    print(f"| full-scale gradients only (L = 24, d = 512, n = 128), whole command | {gw:.2f} s (CPU {gc:.2f} s; "
          f"its split: init {splits['model_and_init']:.2f} s, forward+backward {splits['forward_backward']:.2f} s) | "
          f"PyTorch warm forward+backward {tw:.2f} s | {gw / tw:.2f}x PyTorch's time | {fl / 1e9:.1f} GFLOP: "
          f"{rate.ceiling(fl):.2f} s | whole command {rate.fraction(fl, gw):.0%}, forward+backward "
          f"{rate.fraction(fl, splits['forward_backward']):.0%}; PyTorch {rate.fraction(fl, tw):.0%} |")
    print(f"| its peak resident memory | {max(rss):.0f} MiB (largest of {a.repeats}) | | | | |")
    print(f"| the same model's construction and initialization (full scale, 75.6 M parameters) | {min(inits):.2f} s "
          f"(the report's model_and_init, min of {a.repeats}; the weight matrices are drawn block by block inside "
          f"the pass, twice) | PyTorch builds nn.TransformerEncoder {min(builds):.2f} s "
          f"(min of 3) | {min(inits) / min(builds):.2f}x PyTorch's time | — (no GEMMs: 604 MB written once) | — |")
    print(f"| `gradflow jacobian` of one Post-LN block, N = 2048, .npy (32 MiB, fsync), whole command | {jw * 1e3:.0f} ms "
          f"(CPU {jc * 1e3:.0f} ms) | Python + PyTorch script {pw:.2f} s | **{pw / jw:.1f}x faster** | "
          f"{jfl / 1e9:.2f} GFLOP: {rate.ceiling(jfl) * 1e3:.0f} ms | {rate.fraction(jfl, jw):.0%} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
