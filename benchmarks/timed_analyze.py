"""timed_analyze.py — one `gradflow analyze` run as the benchmarks time it: wall seconds, peak resident memory
(/usr/bin/time -v) and the report, on 2 OpenMP threads. Shared by bench_matrix_free.py and scaling_sweep.py."""
import json
import os
import subprocess
import sys
import time


def timed_analyze(exe, args, out):
    """Runs `exe analyze ARGS --json OUT` under /usr/bin/time -v; returns (wall s, peak RSS MiB, report).
    A failed run ends the benchmark with its command and the end of its error output."""
    cmd = ["/usr/bin/time", "-v", exe, "analyze", *args, "--json", out]
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="2"))
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-500:]}")
    rss = next(float(l.split(":")[1]) / 1024 for l in r.stderr.splitlines() if "Maximum resident set size" in l)
    return wall, rss, json.load(open(out))
