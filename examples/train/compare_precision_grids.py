#!/usr/bin/python3
"""compare_precision_grids.py EXACT.json LOW.json — two train-sweep reports of the same grid, one trained in float64
and one with --precision (docs/findings.md, "Training in bfloat16"): per group the largest stable lr per warmup and
the smallest converging warmup per lr side by side, and per run whether it converged in each, and how far the final
eval losses of the runs that converged in both lie apart.

  gradflow train-sweep ...grid... --json exact.json
  gradflow run examples/claims/train_c6_precision_bf16.json --json bf16.json   (the same grid, --precision bf16)
  /usr/bin/python3 examples/train/compare_precision_grids.py exact.json bf16.json
"""
import json
import math
import statistics
import sys


def key(r):
    return (r["placement"], r["layers"], r["warmup"], r["lr"], r["seed"])


def main(exact_path, low_path):
    exact, low = json.load(open(exact_path)), json.load(open(low_path))
    print(f"precision: {low['config'].get('precision', {}).get('type', 'f64')} vs {exact['config'].get('precision', {}).get('type', 'f64')}")
    groups = {(g["placement"], g["layers"]): g for g in exact["groups"]}
    for g in low["groups"]:
        e = groups[(g["placement"], g["layers"])]
        print(f"\n{g['placement']} L={g['layers']}")
        for what in ("largest_stable_lr", "smallest_converging_warmup"):
            print(f"  {what}:")
            for k in g[what]:
                print(f"    {k:>6}: exact {e[what][k]}  low {g[what][k]}")
    runs = {key(r): r for r in exact["runs"]}
    flips, logs = [], []
    for r in low["runs"]:
        e = runs[key(r)]
        if r["converged"] != e["converged"]:
            flips.append((key(r), e["converged"], r["converged"], e["final_eval_loss"], r["final_eval_loss"]))
        elif r["converged"]:
            logs.append(abs(math.log(r["final_eval_loss"] / e["final_eval_loss"])))
    print(f"\nruns: {len(low['runs'])}; converged in one precision only: {len(flips)}")
    for k, ce, cl, fe, fl in flips:
        print(f"  {k}: exact converged={ce} ({fe:.3g}), low converged={cl} ({fl:.3g})")
    if logs:
        print(f"runs converged in both ({len(logs)}): |log(final_low / final_exact)| median {statistics.median(logs):.3f}, "
              f"max {max(logs):.3f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
