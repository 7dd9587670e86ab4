#!/usr/bin/python3
"""bench_old_new.py — two builds of gradflow side by side, interleaved in one sitting: the full-scale forward +
backward (bench_forward_backward, warm runs in one process) and the full-scale `analyze --gradients-only` command.
Issue 31's rule for a refactor of the passes: the new within 3 % of the old, minimum of at least 5 runs each.

Usage: bench_old_new.py OLD_DIR NEW_DIR [ROUNDS]   (each dir holds gradflow and bench_forward_backward; ROUNDS 5)
Prints one JSON object: every run's time per side, the minima and the ratios new/old.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

DIMS = ["24", "512", "8", "2048", "128"]  # layers, d_model, heads, d_ff, seq_len: the full-scale stack


def forward_backward(d):
    out = subprocess.run([os.path.join(d, "bench_forward_backward"), *DIMS, "3"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["runs"]  # warm runs only


def command(d, tmp):
    args = [os.path.join(d, "gradflow"), "analyze", "--placement", "post", "--layers", DIMS[0], "--d-model", DIMS[1],
            "--heads", DIMS[2], "--d-ff", DIMS[3], "--seq-len", DIMS[4], "--gradients-only", "--json",
            os.path.join(tmp, "r.json")]
    t = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - t


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) == 4 else 5
    runs = {"old": {"forward_backward": [], "command": []}, "new": {"forward_backward": [], "command": []}}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for side, d in (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old)):
                runs[side]["forward_backward"] += forward_backward(d)
                runs[side]["command"].append(command(d, tmp))
    mins = {s: {k: min(v) for k, v in runs[s].items()} for s in runs}
    ratio = {k: mins["new"][k] / mins["old"][k] for k in mins["new"]}
    print(json.dumps({"dims": DIMS, "rounds": rounds, "runs": runs, "min": mins, "ratio_new_over_old": ratio}, indent=1))


if __name__ == "__main__":
    main()
