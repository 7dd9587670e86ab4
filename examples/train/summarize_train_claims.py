#!/usr/bin/python3
"""summarize_train_claims.py C6.json [C4C5.json] — prints the numbers docs/findings.md ("Training claims") quotes,
from the reports of examples/claims/train_c6_warmup_lr.json and examples/claims/train_c4_c5_during_training.json:

  gradflow run examples/claims/train_c6_warmup_lr.json --json c6.json
  gradflow run examples/claims/train_c4_c5_during_training.json --json c45.json
  /usr/bin/python3 examples/train/summarize_train_claims.py c6.json c45.json
"""
import json
import math
import statistics
import sys


def fmt(v):
    return "—" if v is None else (f"{v:g}" if isinstance(v, (int, float)) else str(v))


def c6(rep):
    grid = rep["grid"]
    print(f"grid: placements {grid['placements']}, layers {grid['layers']}, warmup {grid['warmup']}, lr {grid['lr']}, "
          f"seeds {grid['seeds']}, margin {grid['converge_margin']}")
    for g in rep["groups"]:
        conv = sum(c["converged"] == c["runs"] for c in g["cells"])
        runs = sum(c["runs"] for c in g["cells"])
        conv_runs = sum(c["converged"] for c in g["cells"])
        print(f"\n{g['placement']} L={g['layers']}: converging cells {conv}/{len(g['cells'])}, converged runs "
              f"{conv_runs}/{runs}, divergence rate {g['divergence_rate']:.3f}")
        print("  smallest converging warmup per lr:", {k: fmt(v) for k, v in g["smallest_converging_warmup"].items()})
        print("  largest stable lr per warmup:     ", {k: fmt(v) for k, v in g["largest_stable_lr"].items()})
        print("  largest non-diverging lr:         ", {k: fmt(v) for k, v in g["largest_non_diverging_lr"].items()})
        for c in g["cells"]:
            curve = dict((int(s), v) for s, v in c["mean_eval_curve"])
            early = curve.get(100)
            print(f"    lr {c['lr']:<7g} w {c['warmup']:<4d} conv {c['converged']}/{c['runs']} div {c['diverged']}  "
                  f"final {fmt(c['final_eval_loss_mean'])} ± {fmt(c['final_eval_loss_std'])}  eval@100 {fmt(early)}")
    for r in rep["ratios"]:
        print(f"\n{r['pair']} L={r['layers']}: warmup ratio per lr {r['smallest_converging_warmup_ratio']}, "
              f"stable-lr ratio per warmup {r['largest_stable_lr_ratio']}")
    # C2/C3: early speed on the cells where both placements converge
    by = {}
    for run in rep["runs"]:
        by.setdefault((run["placement"], run["layers"], run["lr"], run["warmup"]), []).append(run)
    print("\nearly speed: mean eval loss at step 100 / steps to eval loss < 0.5, cells where every run of both converged")
    places = grid["placements"]
    for L in grid["layers"]:
        for a in places:
            for b in places:
                if a >= b:
                    continue
                wins, n, diffs = 0, 0, []
                for lr in grid["lr"]:
                    for w in grid["warmup"]:
                        ra, rb = by.get((a, L, lr, w), []), by.get((b, L, lr, w), [])
                        if not ra or not rb or not all(x["converged"] for x in ra + rb):
                            continue
                        ea = statistics.mean(step_loss(x, 100) for x in ra)
                        eb = statistics.mean(step_loss(x, 100) for x in rb)
                        n += 1
                        wins += ea < eb
                        diffs.append(ea - eb)
                        fa = statistics.mean(x["final_eval_loss"] for x in ra)
                        fb = statistics.mean(x["final_eval_loss"] for x in rb)
                        print(f"  L={L} lr {lr:g} w {w}: eval@100 {a} {ea:.3f} vs {b} {eb:.3f};  final {a} {fa:.2e} vs {b} {fb:.2e}")
                if n:
                    print(f"  L={L}: {a} lower eval loss at step 100 than {b} in {wins}/{n} common converging cells "
                          f"(median difference {statistics.median(diffs):+.3f})")


def step_loss(run, step):
    for e in run["curve"]:
        if e["step"] == step:
            return e["eval_loss"] if e["eval_loss"] is not None else math.inf
    return math.inf


def c45(rep):
    print("\nper-layer gradient during training: bottom/top = ||dL/dx_0|| / ||dL/dx_{L-1}||")
    runs = {(r["placement"], r["layers"]): r for r in rep["runs"]}
    for (p, L), r in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        pts = {e["step"]: e for e in r["curve"]}
        line = ", ".join(f"step {s}: {pts[s]['bottom_to_top_grad_ratio']:.3g}" for s in (0, 100, 1000) if s in pts)
        print(f"  {p} L={L}: {line}; eval loss {pts[0]['eval_loss']:.3f} -> {r['final_eval_loss']:.4f}")
    for L in sorted({k[1] for k in runs}):
        if ("post", L) in runs and ("pre", L) in runs:
            a = {e["step"]: e for e in runs[("post", L)]["curve"]}
            b = {e["step"]: e for e in runs[("pre", L)]["curve"]}
            line = ", ".join(f"step {s}: {a[s]['grad_norms'][0] / b[s]['grad_norms'][0]:.3g}" for s in (0, 100, 1000)
                             if s in a and s in b)
            print(f"  post/pre ||dL/dx_0|| at L={L}: {line}")


def main():
    c6(json.load(open(sys.argv[1])))
    if len(sys.argv) > 2:
        c45(json.load(open(sys.argv[2])))


if __name__ == "__main__":
    main()
