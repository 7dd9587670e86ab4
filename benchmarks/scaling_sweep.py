#!/usr/bin/python3
"""scaling_sweep.py — time and peak memory of `gradflow analyze` in both modes against N = n·d and L, for
docs/scaling.md. Each run: Post-LN, h = d/32 (at least 2), d_ff = 4d, seed 0, 2 OpenMP threads.
  explicit:    --mode explicit (dense B_l, P_l; SVD of every P_l)
  matrix-free: --mode matrix-free --spectral-layers bottom --hutchinson-probes 32
Each row also gives its GEMM flops (explicit: the products and the SVDs' bidiagonalizations; matrix-free: the block
passes its report counts; dgemm_ceiling.py), the ceiling at this run's DGEMM rate and the fraction of it reached.
Usage: /usr/bin/python3 benchmarks/scaling_sweep.py build/gradflow [--out sweep.json]
Prints one JSON line per run, then the Markdown table of docs/scaling.md."""
import argparse, json, os, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dgemm_ceiling import DgemmRate, explicit_flops, matrix_free_flops  # noqa: E402
from timed_analyze import timed_analyze  # noqa: E402


def one(exe, mode, L, n, d, tmp):
    h = max(2, d // 32)
    args = ["--placement", "post", "--layers", str(L), "--d-model", str(d), "--heads", str(h), "--seq-len", str(n),
            "--seed", "0", "--max-memory", "64G", "-q"]
    if mode == "explicit":
        args += ["--mode", "explicit"]
    else:
        args += ["--mode", "matrix-free", "--spectral-layers", "bottom", "--hutchinson-probes", "32"]
    wall, rss, rep = timed_analyze(exe, args, os.path.join(tmp, "r.json"))
    row = {"mode": mode, "L": L, "n": n, "d": d, "N": n * d, "wall_s": round(wall, 3), "peak_rss_mib": round(rss, 1),
           "timing_seconds": rep["timing_seconds"]}
    row["flops"] = explicit_flops(n * d, L) if mode == "explicit" else matrix_free_flops(rep)
    if mode == "matrix-free":
        row["lanczos_ops_P0"] = rep["layers"][0]["product_jacobian"]["lanczos"]["operations"]
        row["lanczos_ops_B"] = sum(l["block_jacobian"]["lanczos"]["operations"] for l in rep["layers"])
    print(json.dumps(row), flush=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gradflow")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    exe = os.path.abspath(a.gradflow)
    rate = DgemmRate(os.path.dirname(exe), 2)
    rate.measure()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        # against N = n·d at L = 6
        for n, d in [(8, 32), (16, 32), (16, 64), (32, 64)]:
            rows.append(one(exe, "explicit", 6, n, d, tmp))
        for n, d in [(8, 32), (16, 64), (32, 64), (64, 128), (128, 256), (128, 512)]:
            rows.append(one(exe, "matrix-free", 6, n, d, tmp))
        # against L at N = 1024 (explicit) and N = 8192 (matrix-free)
        for L in [3, 12]:
            rows.append(one(exe, "explicit", L, 16, 64, tmp))
        for L in [3, 12, 24]:
            rows.append(one(exe, "matrix-free", L, 64, 128, tmp))
    rate.measure()
    print(f"\n{rate.describe()}; load average {os.getloadavg()[0]:.2f} at the end")
    print("| mode | L | n | d | N = n·d | wall s | analyses s | peak RSS MiB | explicit estimate 7·N²·8 MiB | "
          "Lanczos ops σ(P_0) / σ(B_l), all l | GFLOP | ceiling s | fraction of DGEMM |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        est = f"{7 * r['N'] ** 2 * 8 / 2**20:.0f}" if r["mode"] == "explicit" else "—"
        ops = f"{r['lanczos_ops_P0']} / {r['lanczos_ops_B']}" if r["mode"] == "matrix-free" else "—"
        print(f"| {r['mode']} | {r['L']} | {r['n']} | {r['d']} | {r['N']} | {r['wall_s']:.2f} | "
              f"{r['timing_seconds']['analyses']:.2f} | {r['peak_rss_mib']:.0f} | {est} | {ops} | {r['flops'] / 1e9:.1f} | "
              f"{rate.ceiling(r['flops']):.2f} | {rate.fraction(r['flops'], r['wall_s']):.0%} |")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"loadavg": os.getloadavg(), "dgemm_gflops": [x / 1e9 for x in rate.rates], "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
