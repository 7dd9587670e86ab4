#!/usr/bin/python3
"""curse_of_depth_trained.py GRADFLOW OUT_DIR — "The Curse of Depth" (Sun et al. 2025) before and after training.

Sun et al. report that the deep layers of Pre-LN models are close to the identity (their Jacobian B_l = dx_{l+1}/dx_l
near I), and that LayerNorm Scaling (the norm's output times 1/sqrt(l+1)) makes them do more. This measures it on a
LLaMA-style block (RMSNorm, SwiGLU, RoPE, grouped-query attention 4:2, no biases, causal; d = 32, d_ff = 88, n = 16,
L = 12) for Pre-LN, LayerNorm Scaling (lns) and Peri-LN (sandwich): each is trained on the copy task over a small grid
(peak lr 1e-3 and 3e-3, warmup 100, constant schedule, 500 steps, batch 16, seeds 0 and 1: 4 runs per placement),
its blocks saved at step 0 and at the end, and every saved model analyzed with explicit Jacobians on the first eval
sequence: ||B_l - I||_2 and ||B_l - I||_F/||I||_F per depth (docs/report-schema.md). Prints one Markdown table
(mean +- sample std over the 4 runs at l = 0, L/4, L/2, 3L/4, L-1) and the final eval losses; writes every report
under OUT_DIR. About 2 minutes on 2 cores. Regenerates the "Curse of Depth" rows of docs/findings.md."""
import json
import os
import statistics
import subprocess
import sys

L, D, HEADS, KV, DFF, N, STEPS = 12, 32, 4, 2, 88, 16, 500
PLACEMENTS = ["pre", "lns", "sandwich"]
GRID = [(lr, seed) for lr in ("1e-3", "3e-3") for seed in (0, 1)]
BLOCK = ["--arch", "llama", "--layers", str(L), "--d-model", str(D), "--heads", str(HEADS), "--kv-heads", str(KV),
         "--d-ff", str(DFF), "--seq-len", str(N)]


def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(args)}\n{r.stderr.strip()}")
    return r


def block_numbers(gradflow, placement, ckpt_dir, step, report):
    stem = os.path.join(ckpt_dir, f"step_{step:06d}")
    run([gradflow, "analyze", *BLOCK, "--placement", placement, "--weights", stem + ".safetensors",
         "--input", stem + ".input.npy", "--mode", "explicit", "--json", report, "-q"])
    with open(report) as f:
        layers = json.load(f)["layers"]
    return ([lay["block_jacobian"]["minus_identity_spectral_norm"] for lay in layers],
            [lay["block_jacobian"]["minus_identity_relative_frobenius"] for lay in layers])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gradflow, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    depths = [0, L // 4, L // 2, 3 * L // 4, L - 1]
    rows, losses = [], {}
    for p in PLACEMENTS:
        at = {"init": ([], []), "trained": ([], [])}
        for lr, seed in GRID:
            tag = f"{p}_lr{lr}_s{seed}"
            ck = os.path.join(out, tag)
            train_json = os.path.join(out, tag + ".train.json")
            run([gradflow, "train", *BLOCK, "--placement", p, "--task", "copy", "--vocab", "16", "--steps", str(STEPS),
                 "--batch", "16", "--lr", lr, "--warmup", "100", "--schedule", "constant", "--seed", str(seed),
                 "--log-every", str(STEPS), "--eval-size", "64", "--save-every", str(STEPS), "--checkpoint-dir", ck,
                 "--json", train_json, "-q"])
            with open(train_json) as f:
                log = json.load(f)
            losses.setdefault(p, []).append(log["final"]["eval_loss"])
            for name, step in (("init", 0), ("trained", STEPS)):
                s, fr = block_numbers(gradflow, p, ck, step, os.path.join(out, f"{tag}.step{step}.json"))
                at[name][0].append(s)
                at[name][1].append(fr)
        for name in ("init", "trained"):
            for label, runs in (("‖B_l − I‖₂", at[name][0]), ("‖B_l − I‖_F/‖I‖_F", at[name][1])):
                cells = []
                for l in depths:
                    v = [r[l] for r in runs]
                    cells.append(f"{statistics.mean(v):.3g} ± {statistics.stdev(v):.2g}")
                rows.append(f"| {p} | {name} | {label} | " + " | ".join(cells) + " |")
    print("| placement | when | quantity | " + " | ".join(f"l = {l}" for l in depths) + " |")
    print("|---|---|---|" + "---|" * len(depths))
    print("\n".join(rows))
    for p, v in losses.items():
        print(f"{p}: final eval loss {', '.join(f'{x:.3g}' for x in v)} (runs lr 1e-3 s0, s1, lr 3e-3 s0, s1)")


if __name__ == "__main__":
    main()
