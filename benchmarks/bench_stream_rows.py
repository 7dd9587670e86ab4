#!/usr/bin/python3
"""bench_stream_rows.py — issue 36 part 2: streamed mode's fraction of DGEMM as a whole command against its chunk size
(`--stream-rows K`), side by side with this run's DGEMM rate (bench_jacobians' (2048, 2048) product, measured before
and after; the better one is the machine's).

  /usr/bin/python3 benchmarks/bench_stream_rows.py BUILD [--rows 32,64,128,256,512,1024] [--repeats 3] [--large]
                                                   [--against OTHER_BUILD]

Default model: the issue's N = 4096 whole command (Post-LN, d = 64, h = 4, n = 64, L = 2, d_ff = 4d,
`--stream-blocks off`: every ‖P_l‖_F). --large: N = 16384 (d = 128, h = 4, n = 128, L = 4), minutes per run.
Each K: the minimum wall time of --repeats runs of `gradflow analyze --mode streamed` (initialization, forward,
backward and the sweep included), its flops N·L·c (c = block_pass_flops: one cotangent through one block) and the
fraction of DGEMM reached. --against: a second build's gradflow timed in the same run, its runs alternating with
BUILD's (what a change bought, side by side). Prints a Markdown table."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dgemm_ceiling import DgemmRate, block_pass_flops  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rows", default="32,64,128,256,512,1024")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--against", help="another build directory whose gradflow runs alternate with BUILD's")
    a = ap.parse_args()
    exes = [os.path.join(a.build, "gradflow")] + ([os.path.join(a.against, "gradflow")] if a.against else [])
    d, h, n, L = (128, 4, 128, 4) if a.large else (64, 4, 64, 2)
    N = n * d
    flops = N * L * block_pass_flops(n, d, 4 * d)  # the P_l sweep: N cotangents through L blocks
    model = ["--placement", "post", "--d-model", str(d), "--heads", str(h), "--seq-len", str(n), "--layers", str(L),
             "--mode", "streamed", "--stream-blocks", "off", "-q"]
    env = dict(os.environ, OMP_NUM_THREADS="2")
    rate = DgemmRate(a.build, 2)
    rate.measure()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in (int(x) for x in a.rows.split(",")):
            best = [float("inf")] * len(exes)
            for _ in range(a.repeats):
                for i, exe in enumerate(exes):
                    t = time.perf_counter()
                    subprocess.run([exe, "analyze", *model, "--stream-rows", str(k), "--json",
                                    os.path.join(tmp, "r.json")], check=True, env=env)
                    best[i] = min(best[i], time.perf_counter() - t)
            rows.append((k, best))
    rate.measure()
    print(f"{rate.describe()}; N = {N} (d = {d}, h = {h}, n = {n}, L = {L}), --stream-blocks off, "
          f"{flops / 1e9:.1f} GFLOP: {rate.ceiling(flops):.2f} s at DGEMM; min of {a.repeats} whole commands")
    heads = [f"{b}: whole command (fraction of DGEMM)" for b in [a.build] + ([a.against] if a.against else [])]
    print("| --stream-rows | " + " | ".join(heads) + " |")
    print("|---" * (1 + len(heads)) + "|")
    for k, best in rows:
        print(f"| {k} | " + " | ".join(f"{w:.2f} s ({rate.fraction(flops, w):.0%})" for w in best) + " |")


if __name__ == "__main__":
    main()
