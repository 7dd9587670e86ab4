#!/usr/bin/python3
"""bench_streamed.py — issue 12's CPU benchmark: exact Frobenius norms of every P_l and B_l by streamed identity rows
(`--mode streamed`) against what explicit mode would need, side by side in one run with this run's DGEMM rate.

  /usr/bin/python3 benchmarks/bench_streamed.py BUILD [--large-only | --small-only] [--p-only]

--p-only: `--stream-blocks off`, the ‖P_l‖_F alone (half the work), the like-for-like comparison with the explicit
products' bound (which does not count building the B_l either).

1. N = 16384 (d = 128, h = 4, n = 128, L = 4, d_ff = 4d): `gradflow analyze --mode streamed` end to end (wall time, peak
   memory of the process) against the explicit products' DGEMM bound, 2·N³·L flops at this run's DGEMM rate (a lower
   bound on explicit mode's time: it leaves out building the B_l and every SVD, which take hours at that N), and against
   explicit mode's memory (its own estimate: 7 (N, N) matrices; the products alone hold three).
2. The headline size (d = 64, h = 4, n = 16, L = 24, N = 1024): streamed against explicit mode itself (`--mode
   explicit`, every P_l's SVD included) and against the explicit products' DGEMM bound.
The DGEMM rate: bench_jacobians' (2048, 2048) product, before and after; the better one is the machine's. Each row
also gives streamed mode's own ceiling, its flops (N·L·c per stream of rows, c = block_pass_flops: the N rows of P_l
and, unless --p-only, the N rows of B_l) at that rate, and the fraction of DGEMM it reached.
Prints JSON, then the Markdown rows of docs/benchmarks.md.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dgemm_ceiling import DgemmRate, block_pass_flops  # noqa: E402

build = sys.argv[1] if len(sys.argv) > 1 else "build"
exe = os.path.join(build, "gradflow")
env = dict(os.environ, OMP_NUM_THREADS="2")
LARGE = {"d-model": 128, "heads": 4, "seq-len": 128, "layers": 4}
HEADLINE = {"d-model": 64, "heads": 4, "seq-len": 16, "layers": 24}


def args(m):
    return [f"--{k}={v}" for k, v in m.items()] + ["--placement", "post"]


def run(cmd):
    """Wall seconds and the child's peak resident memory (bytes) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB; the largest child so far
    return wall, peak * 1024, peak > before


def main():
    which = next((a for a in sys.argv[2:] if a in ("--large-only", "--small-only")), "")
    p_only = "--p-only" in sys.argv[2:]
    res = {"loadavg_at_start": os.getloadavg()}
    rate = DgemmRate(build, 2)
    rate.measure()
    with tempfile.TemporaryDirectory() as tmp:
        cases = [] if which == "--large-only" else [("headline", HEADLINE)]
        if which != "--small-only":
            cases.append(("large", LARGE))
        for name, m in cases:  # the small case first: RUSAGE_CHILDREN's peak only grows
            n, d, L = m["seq-len"], m["d-model"], m["layers"]
            N = n * d
            rep = os.path.join(tmp, name + ".json")
            blocks = ["--stream-blocks", "off"] if p_only else []
            wall, peak, _ = run([exe, "analyze", *args(m), "--mode", "streamed", *blocks, "--max-memory", "20G", "-q",
                                 "--json", rep])
            with open(rep) as f:
                r = json.load(f)
            p0 = r["layers"][0]["product_jacobian"]["frobenius_norm"]
            row = {"N": N, "streamed_seconds": wall, "streamed_analyses_seconds": r["timing_seconds"]["analyses"],
                   "streamed_peak_bytes": peak, "explicit_product_flops": 2.0 * N ** 3 * L,
                   "streamed_flops": (1 if p_only else 2) * N * L * block_pass_flops(n, d, 4 * d),
                   "explicit_products_bytes": 3 * N * N * 8, "explicit_estimate_bytes": 7 * N * N * 8,
                   "P0_frobenius": p0, "stream_rows": r["summary"].get("stream_rows")}
            row["stream_blocks"] = not p_only
            if name == "headline":
                ew, epeak, grew = run([exe, "analyze", *args(m), "--mode", "explicit", "-q",
                                       "--json", os.path.join(tmp, "e.json")])
                with open(os.path.join(tmp, "e.json")) as f:
                    e = json.load(f)
                row["explicit_seconds"] = ew
                row["explicit_P0_frobenius"] = e["layers"][0]["product_jacobian"]["frobenius_norm"]
            res[name] = row
    rate.measure()
    res["dgemm_gflops"] = rate.best() / 1e9
    res["dgemm_rates_gflops"] = [x / 1e9 for x in rate.rates]
    res["loadavg_at_end"] = os.getloadavg()
    for name in ("headline", "large"):
        if name in res:
            res[name]["explicit_bound_seconds"] = rate.ceiling(res[name]["explicit_product_flops"])
    print(json.dumps(res, indent=1))
    print(f"\n{rate.describe()}, load average {res['loadavg_at_start'][0]:.2f} at the start")
    print("| model | N | streamed (whole command) | explicit products' DGEMM bound (2N³L) | speed-up | streamed peak memory | explicit's memory | streamed ceiling (its flops / DGEMM rate) | fraction of DGEMM |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, m in (("large", LARGE), ("headline", HEADLINE)):
        if name not in res:
            continue
        r = res[name]
        model = " ".join(f"--{k} {v}" for k, v in m.items()) + (" --stream-blocks off" if p_only else "")
        extra = f"; explicit mode itself {r['explicit_seconds']:.2f} s" if "explicit_seconds" in r else ""
        print(f"| `{model}` | {r['N']} | {r['streamed_seconds']:.1f} s | {r['explicit_bound_seconds']:.1f} s{extra} | "
              f"{r['explicit_bound_seconds'] / r['streamed_seconds']:.2f}× | {r['streamed_peak_bytes'] / 2**20:.0f} MiB | "
              f"{r['explicit_products_bytes'] / 2**20:.0f} MiB (3 N² products; estimate 7 N²: "
              f"{r['explicit_estimate_bytes'] / 2**20:.0f} MiB) | "
              f"{r['streamed_flops'] / 1e12:.2f} TFLOP: {rate.ceiling(r['streamed_flops']):.1f} s | "
              f"{rate.fraction(r['streamed_flops'], r['streamed_seconds']):.0%} |")


if __name__ == "__main__":
    main()
