#!/usr/bin/python3
"""bench_matrix_free.py — issue 5's full-scale benchmarks, measured side by side in one run:
  1. PyTorch (float64, 2 threads): one forward + backward of the same Post-LN encoder (d=512, h=8, d_ff=2048,
     n=128, L=24), median of 3 after a warm-up;
  2. gradflow analyze --gradients-only (gradient norm per depth + every parameter-gradient norm), one-shot; and
     bench_forward_backward (built next to gradflow): the same forward + backward repeated in one process;
  3. gradflow analyze --mode matrix-free --hutchinson-probes 32 --spectral-layers bottom
     (Frobenius estimates of every P_l and B_l, spectral norms of P_0 and every B_l).
  4. (--default-run) the issue's "done when" command with every default: auto mode (matrix-free at this size),
     --spectral-layers all (sigma_max of every P_l): about 5 minutes.
Each beside the DGEMM rate of the same run (measured at the start and the end; dgemm_ceiling.py) and the fraction of
it reached: the forward + backward's GEMM flops, and for the matrix-free runs the block passes their reports count
(every Lanczos operation and Hutchinson probe) at gradflow's cost model per pass.
Usage: /usr/bin/python3 benchmarks/bench_matrix_free.py build/gradflow [--layers 24] [--default-run] [--out results.json]
Prints one line per measurement (seconds, peak RSS), then the Markdown rows of docs/benchmarks.md, and writes them as
JSON."""
import argparse, json, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dgemm_ceiling import DgemmRate, explicit_flops, forward_backward_flops, matrix_free_flops  # noqa: E402
from timed_analyze import timed_analyze  # noqa: E402


def gradflow(exe, args, tmp, name):
    """gradflow analyze ARGS under /usr/bin/time -v: (wall s, peak RSS MiB, report)."""
    return timed_analyze(exe, [*args, "-q"], os.path.join(tmp, name + ".json"))


def torch_forward_backward(L, d, h, dff, n, repeats=3):
    import torch
    torch.set_num_threads(2)
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d, h, dff, dropout=0.0, batch_first=True, norm_first=False,
                                             dtype=torch.float64)
    model = torch.nn.TransformerEncoder(layer, L, enable_nested_tensor=False).train()
    x = torch.randn(1, n, d, dtype=torch.float64)
    g = torch.randn(1, n, d, dtype=torch.float64)
    times, cold = [], None
    for i in range(repeats + 1):
        model.zero_grad(set_to_none=True)
        t = time.perf_counter()
        y = model(x)
        (y * g).sum().backward()
        dt = time.perf_counter() - t
        if i > 0:  # the first one warms up allocators and threads
            times.append(dt)
        else:
            cold = dt  # what a one-shot run pays (gradflow analyze is one)
    times.sort()
    return times[len(times) // 2], times, cold


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gradflow")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--d-model", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--d-ff", type=int, default=2048)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--probes", type=int, default=32)
    ap.add_argument("--out", default="")
    ap.add_argument("--gradients-only", action="store_true", help="skip the matrix-free runs (parts 3 and 4)")
    ap.add_argument("--default-run", action="store_true", help="also part 4: every default (about 5 minutes)")
    a = ap.parse_args()
    exe = os.path.abspath(a.gradflow)
    from same_kernels import use_gradflow_kernels
    kernels = use_gradflow_kernels(exe)  # PyTorch on the same OpenBLAS kernels; torch is imported later
    model = ["--placement", "post", "--layers", str(a.layers), "--d-model", str(a.d_model), "--heads", str(a.heads),
             "--d-ff", str(a.d_ff), "--seq-len", str(a.seq_len)]
    res = {"model": model, "nproc": os.cpu_count(), "loadavg_at_start": os.getloadavg(), "kernels": kernels}
    print(f"both sides: OpenBLAS core {kernels['openblas_core']}, OpenMP waits: {kernels['omp_wait_policy']}")
    rate = DgemmRate(os.path.dirname(exe), 2)
    rate.measure()
    fb_flops = forward_backward_flops(a.layers, a.seq_len, a.d_model, a.d_ff)
    rows = []  # (what, measured, flops, seconds): printed with the run's DGEMM rate, measured again at the end
    torch_med, torch_all, torch_cold = torch_forward_backward(a.layers, a.d_model, a.heads, a.d_ff, a.seq_len)
    res["torch_forward_backward_s"] = {"median": torch_med, "runs": torch_all, "first_run": torch_cold}
    print(f"pytorch float64 2 threads, one forward+backward: median {torch_med:.2f}s of {['%.2f' % t for t in torch_all]}"
          f" after a first (cold) run of {torch_cold:.2f}s")
    rows.append(("PyTorch one forward + backward, median of 3 warm runs (first, cold run)",
                         f"{torch_med:.2f} s ({torch_cold:.2f} s)", fb_flops, torch_med))
    with tempfile.TemporaryDirectory() as tmp:
        # three one-shot runs, the median by forward+backward+norms (one run can land on a page-reclaim stall)
        runs = sorted((gradflow(exe, model + ["--gradients-only"], tmp, "grad") for _ in range(3)),
                      key=lambda r: r[2]["timing_seconds"]["forward_backward"] + r[2]["timing_seconds"]["analyses"])
        dt, rss, rep = runs[1]
        tm = rep["timing_seconds"]
        res["gradflow_gradients_only"] = {"wall_s": dt, "peak_rss_mib": rss, "timing_seconds": tm,
                                          "all_forward_backward_plus_norms": [r[2]["timing_seconds"]["forward_backward"] +
                                                                              r[2]["timing_seconds"]["analyses"] for r in runs]}
        print(f"gradflow --gradients-only (median of 3 one-shot runs: "
              f"{['%.2f' % v for v in res['gradflow_gradients_only']['all_forward_backward_plus_norms']]}): wall {dt:.2f}s (model+init {tm['model_and_init']:.2f}s, forward+backward "
              f"{tm['forward_backward']:.2f}s, norms {tm['analyses']:.2f}s), peak RSS {rss:.0f} MiB; "
              f"forward+backward+norms / pytorch = {(tm['forward_backward'] + tm['analyses']) / torch_med:.2f} (warm), "
              f"{(tm['forward_backward'] + tm['analyses']) / torch_cold:.2f} (pytorch's first run)")
        rows.append((
            "gradflow `--gradients-only`, one-shot (median of 3): forward + backward + every norm",
            f"{tm['forward_backward'] + tm['analyses']:.2f} s ({(tm['forward_backward'] + tm['analyses']) / torch_med:.2f}x "
            f"PyTorch's warm median); whole command {dt:.2f} s, of which model + init {tm['model_and_init']:.2f} s; "
            f"peak RSS {rss:.0f} MiB", fb_flops, tm['forward_backward'] + tm['analyses']))
        # the same forward + backward repeated in one process (bench_forward_backward, next to gradflow): warm vs warm
        fb = os.path.join(os.path.dirname(exe), "bench_forward_backward")
        if os.path.exists(fb):
            r = subprocess.run([fb, str(a.layers), str(a.d_model), str(a.heads), str(a.d_ff), str(a.seq_len), "3"],
                               capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="2"), check=True)
            w = json.loads(r.stdout)
            wmed = sorted(w["runs"])[len(w["runs"]) // 2]
            res["gradflow_forward_backward_repeated"] = w
            print(f"gradflow forward+backward repeated in one process: median {wmed:.2f}s of "
                  f"{['%.2f' % t for t in w['runs']]} after a first run of {w['first_run']:.2f}s; "
                  f"warm / pytorch warm = {wmed / torch_med:.2f}, first / pytorch first = {w['first_run'] / torch_cold:.2f}")
            rows.append((
                "gradflow forward + backward repeated in one process (bench_forward_backward), median of 3 warm runs",
                f"{wmed:.2f} s ({wmed / torch_med:.2f}x PyTorch's warm median); first run {w['first_run']:.2f} s",
                fb_flops, wmed))
        if not a.gradients_only:
            matrix_free_runs(a, exe, model, tmp, res, rows)
    rate.measure()
    res["dgemm_gflops"] = [r / 1e9 for r in rate.rates]
    print(f"\n{rate.describe()}; load average {res['loadavg_at_start'][0]:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end")
    print("| what | measured | ceiling (flops / DGEMM rate) | fraction of DGEMM |")
    print("|---|---|---|---|")
    for row in rows:
        what, measured, flops, seconds = row
        print(f"| {what} | {measured} | {flops / 1e9:.1f} GFLOP: {rate.ceiling(flops):.2f} s | "
              f"{rate.fraction(flops, seconds):.0%} |")
    res["loadavg_at_end"] = os.getloadavg()
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=2)


def matrix_free_runs(a, exe, model, tmp, res, rows):
    """Part 3 (and with --default-run part 4): matrix-free runs, their flops counted from their own reports."""
    args = model + ["--mode", "matrix-free", "--hutchinson-probes", str(a.probes), "--spectral-layers", "bottom"]
    dt, rss, rep = gradflow(exe, args, tmp, "mf")
    tm = rep["timing_seconds"]
    lz = [l["block_jacobian"]["lanczos"]["operations"] for l in rep["layers"]]
    p0 = rep["layers"][0]["product_jacobian"]
    res["gradflow_matrix_free"] = {"wall_s": dt, "peak_rss_mib": rss, "timing_seconds": tm,
                                   "P0_spectral_norm": p0["spectral_norm"], "P0_lanczos": p0["lanczos"],
                                   "P0_frobenius": [p0["frobenius_norm"], p0["frobenius_std_error"]],
                                   "block_lanczos_operations": lz, "flops": matrix_free_flops(rep)}
    print(f"gradflow matrix-free, {a.probes} probes, sigma_max of P_0 and every B_l: wall {dt:.1f}s "
          f"(forward+backward {tm['forward_backward']:.1f}s, matrix-free {tm['analyses']:.1f}s), peak RSS {rss:.0f} MiB; "
          f"P_0: sigma_max {p0['spectral_norm']:.6g} ({p0['lanczos']['operations']} Lanczos operations), "
          f"||P_0||_F {p0['frobenius_norm']:.6g} +- {p0['frobenius_std_error']:.2g}; "
          f"B_l Lanczos operations {min(lz)}..{max(lz)}")
    rows.append((
        f"gradflow matrix-free, {a.probes} probes, sigma_max of P_0, every B_l and every B_l - I (whole command)",
        f"**{dt:.1f} s** (forward + backward {tm['forward_backward']:.1f} s, matrix-free {tm['analyses']:.1f} s); "
        f"peak RSS {rss:.0f} MiB; sigma_max(P_0) = {p0['spectral_norm']:.6g} in {p0['lanczos']['operations']} "
        f"Lanczos operations, B_l {min(lz)}-{max(lz)}", matrix_free_flops(rep), dt))
    if not a.default_run:
        return
    dt, rss, rep = gradflow(exe, model, tmp, "default")
    c = rep["config"]
    mode = c["mode"] + (f", --spectral-layers {c['spectral_layers']}" if "spectral_layers" in c else "")
    flops = matrix_free_flops(rep) if c["mode"] == "matrix-free" else \
        explicit_flops(c["seq_len"] * c["d_model"], c["layers"])
    res["gradflow_default"] = {"wall_s": dt, "peak_rss_mib": rss, "timing_seconds": rep["timing_seconds"],
                               "mode": mode, "flops": flops}
    print(f"gradflow with every default (auto: {mode}): wall {dt:.1f}s, peak RSS {rss:.0f} MiB")
    rows.append((f"the issue's command with every default (auto: {mode})",
                 f"**{int(dt // 60)} min {dt % 60:.1f} s**; peak RSS {rss / 1024:.2f} GiB", flops, dt))


if __name__ == "__main__":
    main()
