#!/usr/bin/python3
"""scaling_sweep.py — time and peak memory of `gradflow analyze` in both modes against N = n·d and L, for
docs/scaling.md. Each run: Post-LN, h = d/32 (at least 2), d_ff = 4d, seed 0, 2 OpenMP threads.
  explicit:    --mode explicit (dense B_l, P_l; SVD of every P_l)
  matrix-free: --mode matrix-free --spectral-layers bottom --hutchinson-probes 32
Usage: /usr/bin/python3 benchmarks/scaling_sweep.py build-mf/gradflow [--out sweep.json]"""
import argparse, json, os, subprocess, sys, tempfile, time


def one(exe, mode, L, n, d, tmp):
    h = max(2, d // 32)
    args = ["--placement", "post", "--layers", str(L), "--d-model", str(d), "--heads", str(h), "--seq-len", str(n),
            "--seed", "0", "--max-memory", "64G", "-q"]
    if mode == "explicit":
        args += ["--mode", "explicit"]
    else:
        args += ["--mode", "matrix-free", "--spectral-layers", "bottom", "--hutchinson-probes", "32"]
    out = os.path.join(tmp, "r.json")
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", exe, "analyze", *args, "--json", out], capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS="2"))
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{mode} L={L} n={n} d={d} failed: {r.stderr[-400:]}")
    rss = next(float(l.split(":")[1]) / 1024 for l in r.stderr.splitlines() if "Maximum resident set size" in l)
    rep = json.load(open(out))
    row = {"mode": mode, "L": L, "n": n, "d": d, "N": n * d, "wall_s": round(wall, 3), "peak_rss_mib": round(rss, 1),
           "timing_seconds": rep["timing_seconds"]}
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
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"loadavg": os.getloadavg(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
