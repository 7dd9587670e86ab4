#!/usr/bin/python3
"""bench_gemm_shapes.py — where a full-scale forward + backward's time goes (issue 14, goal 1): the DGEMM calls it
makes, their shapes, the time inside them and outside, and how fast OpenBLAS runs each of those shapes on its own.

  /usr/bin/python3 benchmarks/bench_gemm_shapes.py build [--repeats 5]

Both sides run one warm forward + backward of the same Post-LN stack (L = 24, d = 512, h = 8, d_ff = 2048, n = 128,
float64, 2 threads) with benchmarks/gemm_trace_shim.c preloaded: gradflow's bench_forward_backward and PyTorch's
nn.TransformerEncoder (as in bench_commands.py). The shim times every dgemm_ call (gradflow's: the blocks its own
dgemm_ cuts each product into, one per thread, src/linalg/blas_threads.cpp); at exit it replays each distinct shape
alone (warm, best of 10, on the process's threads). So a row splits a warm pass into time in products (the main
thread's) and the rest, and gives the fraction of DGEMM its products reached as they ran and the best each call's
shape reaches alone (with the rest of the pass taking no time at all).
Prints Markdown tables.
"""
import json, os, statistics, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from same_kernels import use_gradflow_kernels
from dgemm_ceiling import DgemmRate, forward_backward_flops

args = [x for x in sys.argv[1:] if not x.startswith("--")]
build = args[0] if args else "build"
repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 5
kernels = use_gradflow_kernels(os.path.join(build, "gradflow"))  # re-executes once with gradflow's malloc setting
M = dict(layers=24, d=512, h=8, dff=2048, n=128)
env = dict(os.environ, OMP_NUM_THREADS="2")

TORCH = r"""
import json, sys, time, torch
torch.set_num_threads(2)
torch.manual_seed(0)
L, d, h, dff, n, R = (int(a) for a in sys.argv[1:])
layer = torch.nn.TransformerEncoderLayer(d, h, dff, dropout=0.0, batch_first=True, norm_first=False, dtype=torch.float64)
model = torch.nn.TransformerEncoder(layer, L, enable_nested_tensor=False).train()
x, cot = torch.randn(1, n, d, dtype=torch.float64), torch.randn(1, n, d, dtype=torch.float64)
times = []
for i in range(R + 1):
    model.zero_grad(set_to_none=True)
    t = time.perf_counter()
    (model(x) * cot).sum().backward()
    times.append(time.perf_counter() - t)
print(json.dumps({"first_run": times[0], "runs": times[1:]}))
"""


def traced(cmd, shim, log):
    """Runs cmd with the shim; returns (its JSON line, the calls [(shape, seconds)], {shape: (ta, tb, m, n, k, alone)})."""
    r = subprocess.run(cmd, env=dict(env, LD_PRELOAD=shim, GEMM_TRACE_OUT=log), capture_output=True, text=True,
                       check=True)
    lines = open(log).read().splitlines()
    calls = json.loads(lines[0])["calls"]
    shapes = {}
    for l in lines[1:]:
        s = json.loads(l)
        shapes[s["shape"]] = (s["ta"], s["tb"], s["m"], s["n"], s["k"], s["alone"])
    return json.loads(r.stdout.strip().splitlines()[-1]), calls, shapes


def split(out, calls, shapes):
    """Per warm pass (medians over passes): its time, the main thread's seconds in dgemm_ (gradflow's blocks run
    side by side, one per thread, so the main thread's share is the pass's wall time in products), the GEMM flops of
    every call, and the calls' best-alone seconds."""
    runs = len(out["runs"]) + 1
    if len(calls) % runs:
        raise SystemExit(f"{len(calls)} dgemm calls in {runs} passes: the passes differ; cannot split them")
    per = len(calls) // runs
    flops = lambda s: 2.0 * shapes[s][2] * shapes[s][3] * shapes[s][4]
    warm = [calls[i * per:(i + 1) * per] for i in range(1, runs)]
    one = warm[0]
    by_shape = {}
    for s, _, _ in one:
        by_shape[s] = by_shape.get(s, 0) + 1
    return {"pass": statistics.median(out["runs"]),
            "gemm": statistics.median(sum(t for _, t, main in p if main) for p in warm),
            "flops": sum(flops(s) for s, _, _ in one), "alone": sum(shapes[s][5] for s, _, _ in one), "calls": per,
            "shapes": {s: (by_shape[s], by_shape[s] * flops(s), by_shape[s] * shapes[s][5]) for s in by_shape},
            "shape_names": {s: f"{shapes[s][0]}{shapes[s][1]} {shapes[s][2]}x{shapes[s][3]}x{shapes[s][4]}" for s in by_shape}}


rate = DgemmRate(build)
rate.measure()
with tempfile.TemporaryDirectory() as tmp:
    shim = os.path.join(tmp, "gemm_trace_shim.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(here, "gemm_trace_shim.c"), "-ldl"], check=True)
    dims = [str(M[k]) for k in ("layers", "d", "h", "dff", "n")]
    g = split(*traced([os.path.join(build, "bench_forward_backward"), *dims, str(repeats)], shim, os.path.join(tmp, "g.log")))
    t = split(*traced([sys.executable, "-c", TORCH, str(M["layers"]), str(M["d"]), str(M["h"]), str(M["dff"]),
                       str(M["n"]), str(repeats)], shim, os.path.join(tmp, "t.log")))
rate.measure()

model_flops = forward_backward_flops(M["layers"], M["n"], M["d"], M["dff"])
R = rate.best()
print(f"{rate.describe()}; OpenBLAS core {kernels['openblas_core']}; median of {repeats} warm passes; flop model "
      f"(dgemm_ceiling.forward_backward_flops) {model_flops / 1e9:.1f} GFLOP")
print("| side | warm forward + backward | in dgemm_ (main thread) | rest | dgemm_ calls, GFLOP | fraction of DGEMM: "
      "the pass | its GEMMs as they ran | the same calls each alone, best |")
print("|---|---|---|---|---|---|---|---|")
for name, s in (("gradflow", g), ("PyTorch", t)):
    print(f"| {name} | {s['pass']:.3f} s | {s['gemm']:.3f} s | {s['pass'] - s['gemm']:.3f} s | {s['calls']}, "
          f"{s['flops'] / 1e9:.1f} | {s['flops'] / s['pass'] / R:.0%} | {s['flops'] / s['gemm'] / R:.0%} | "
          f"{s['alone']:.3f} s: {s['flops'] / s['alone'] / R:.0%} |")
print("\ngradflow's calls (column-major dgemm_ arguments: transposes, m x n x k; a product split between threads "
      "appears as its blocks), by flops:")
print("| shape | calls per pass | share of the flops | alone, best: % of DGEMM |")
print("|---|---|---|---|")
for s, (count, fl, alone) in sorted(g["shapes"].items(), key=lambda kv: -kv[1][1]):
    print(f"| {g['shape_names'][s]} | {count} | {fl / g['flops']:.1%} | {fl / alone / R:.0%} |")
