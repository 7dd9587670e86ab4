#!/usr/bin/python3
"""bench_commands.py — issue 14's whole-command benchmarks, side by side in one run, each beside the DGEMM rate
measured in the same run (bench_jacobians' (2048, 2048) product) and the fraction of it achieved:

1. Full-scale gradients only (Post-LN, d = 512, h = 8, d_ff = 2048, n = 128, L = 24): the whole command
   `gradflow analyze --mode matrix-free --spectral-layers none --hutchinson-probes 0` (initialization, forward,
   backward, every gradient norm) against PyTorch's warm forward + backward of the same nn.TransformerEncoder
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


def forward_backward_flops(m):
    """GEMM flops of one forward + backward (backward = 2x forward: input and weight gradients)."""
    n, d, dff, L = m["n"], m["d"], m["dff"], m["layers"]
    per_layer = 2 * n * d * 3 * d + 2 * 2 * n * n * d + 2 * n * d * d + 2 * 2 * n * d * dff
    return 3 * L * per_layer


def block_jacobian_flops(m):
    """GEMM flops of gradflow's explicit block Jacobian: the attention Jacobian's slabs (one (n, 2h)(2h, d) product
    per output row), the FFN's token-wise Jacobians, and three token-wise (d, d) times dense (d, N) products (the
    norm after attention, the feed-forward unit, and the product with the identity dx_0/dx_0 the chain starts from)."""
    n, d, h, dff = m["n"], m["d"], m["h"], m["dff"]
    N = n * d
    return N * 2 * n * 2 * h * d + n * 2 * d * dff * d + 3 * n * 2 * d * d * N


def timed(cmd, env):
    """(wall seconds, user+sys CPU seconds of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-800:]}")
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

    # the DGEMM rate of this run: bench_jacobians' (N, N)·(N, N) at N = 2048 (2 layers: one product), measured at the
    # start and again at the end; the better of the two is the machine's rate (other work only lowers it)
    def dgemm_rate():
        r = subprocess.run([os.path.join(a.build, "bench_jacobians"), "2", "3"], capture_output=True, text=True,
                           env=env, check=True)
        return json.loads(r.stdout)["dgemm_gflops"] * 1e9
    rates = [dgemm_rate()]

    import torch
    torch.set_num_threads(2)
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        # 1. full-scale gradients only
        m = FULL
        cmd = [exe, "analyze", *model_args(m), "--mode", "matrix-free", "--spectral-layers", "none",
               "--hutchinson-probes", "0", "-q", "--json", os.path.join(tmp, "g.json")]
        g = [timed(cmd, env) for _ in range(a.repeats)]
        splits = json.load(open(os.path.join(tmp, "g.json")))["timing_seconds"]
        layer = torch.nn.TransformerEncoderLayer(m["d"], m["h"], m["dff"], dropout=0.0, batch_first=True,
                                                 norm_first=False, dtype=torch.float64)
        model = torch.nn.TransformerEncoder(layer, m["layers"], enable_nested_tensor=False).train()
        x = torch.randn(1, m["n"], m["d"], dtype=torch.float64)
        cot = torch.randn(1, m["n"], m["d"], dtype=torch.float64)
        tt = []
        for i in range(4):
            model.zero_grad(set_to_none=True)
            t = time.perf_counter()
            (model(x) * cot).sum().backward()
            if i > 0:
                tt.append(time.perf_counter() - t)
        fl = forward_backward_flops(m)
        gw, gc = min(w for w, _ in g), min(c for _, c in g)
        tw = min(tt)
        res["full_scale"] = {"gradflow_wall": [w for w, _ in g], "gradflow_cpu": [c for _, c in g],
                             "gradflow_last_timing": splits, "torch_warm": tt, "flops": fl}
        # 2. one block's Jacobian as whole commands
        m = BLOCK
        jcmd = [exe, "jacobian", *model_args(m), "--out", os.path.join(tmp, "J.npy")]
        j = [timed(jcmd, env) for _ in range(a.repeats)]
        script = os.path.join(tmp, "torch_jacobian.py")
        open(script, "w").write(TORCH_JACOBIAN_SCRIPT)
        pcmd = [sys.executable, script, str(m["n"]), str(m["d"]), str(m["h"]), str(m["dff"]), os.path.join(tmp, "T.npy")]
        p = [timed(pcmd, dict(os.environ, OMP_NUM_THREADS="2")) for _ in range(max(2, a.repeats // 2))]
        jfl = block_jacobian_flops(m)
        jw, jc, pw = min(w for w, _ in j), min(c for _, c in j), min(w for w, _ in p)
        res["jacobian"] = {"gradflow_wall": [w for w, _ in j], "gradflow_cpu": [c for _, c in j],
                           "torch_script_wall": [w for w, _ in p], "flops": jfl}
    rates.append(dgemm_rate())
    rate = max(rates)
    res["dgemm_gflops"] = [r / 1e9 for r in rates]
    res["loadavg_at_end"] = os.getloadavg()

    print(f"DGEMM {rate / 1e9:.1f} GFLOP/s (same run, the better of {rates[0] / 1e9:.1f} at the start and "
          f"{rates[1] / 1e9:.1f} at the end); load average {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end; "
          f"both sides on OpenBLAS core {kernels['openblas_core']}, OpenMP waits: {kernels['omp_wait_policy']}; "
          f"min of {a.repeats} runs")
    print("| benchmark | gradflow | reference | ratio | ceiling (flops / DGEMM rate) | fraction of DGEMM |")
    print("|---|---|---|---|---|---|")
    fl = res["full_scale"]["flops"]
    print(f"| full-scale gradients only (L = 24, d = 512, n = 128), whole command | {gw:.2f} s (CPU {gc:.2f} s; "
          f"last run: init {splits['model_and_init']:.2f} s, forward+backward {splits['forward_backward']:.2f} s) | "
          f"PyTorch warm forward+backward {tw:.2f} s | {gw / tw:.2f}x PyTorch's time | {fl / 1e9:.1f} GFLOP: "
          f"{fl / rate:.2f} s | whole command {fl / gw / rate:.0%}, forward+backward "
          f"{fl / splits['forward_backward'] / rate:.0%}; PyTorch {fl / tw / rate:.0%} |")
    print(f"| `gradflow jacobian` of one Post-LN block, N = 2048, .npy (32 MiB, fsync), whole command | {jw * 1e3:.0f} ms "
          f"(CPU {jc * 1e3:.0f} ms) | Python + PyTorch script {pw:.2f} s | **{pw / jw:.1f}x faster** | "
          f"{jfl / 1e9:.2f} GFLOP: {jfl / rate * 1e3:.0f} ms | {jfl / jw / rate:.0%} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
