"""test_figure_layout.py GRADFLOW REPO_ROOT [KEEP_DIR] — every plot kind, in PDF, SVG and PNG, from small and from large
reports, checked by machine (figure_check.py): no text under 7 pt, nothing outside the canvas, no two labels
overlapping, no two series of a panel drawn alike, one legend title one style (issue 38, part 2).

The reports are made here with the gradflow under test at tiny widths (d = 8), so "large" means many series and
panels (8 placements x 3 depths, a 4 x 4 two-parameter sweep, a 24-layer train-sweep), not long runs: about a
minute on 2 cores. PNG is checked as rendered (its text cannot be measured); its layout is the PDF's at --dpi.
Exit 1 with every problem listed, one per line.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import figure_check

TINY = ["--d-model", "8", "--heads", "2", "--d-ff", "16", "--seq-len", "4"]
PLACEMENTS8 = "post,pre,sandwich,deepnorm,rezero,hybridnorm,b2t,peri"
# a title longer than a column is wide: wrapped, never cut off, above the panels of a multi-panel figure
LONG_TITLE = "Gradient norm at every layer, Post-LN against Pre-LN at 2 and 4 layers, two seeds, d = 8 (tiny)"


def main():
    gradflow, root = sys.argv[1], Path(sys.argv[2])
    keep = sys.argv[3] if len(sys.argv) > 3 else None  # a folder to keep the reports and figures in (to look at)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(keep or tmp)
        d.mkdir(parents=True, exist_ok=True)

        def gf(*args):
            r = subprocess.run([gradflow, *map(str, args)], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"gradflow {' '.join(map(str, args))} failed: {r.stderr.strip()}")
            return r.stdout

        # ---- reports ------------------------------------------------------------------------------------------
        for p in ("post", "pre"):
            gf("analyze", "--placement", p, "--layers", 6, *TINY, "--spectrum", "-q", "--json", d / f"{p}.json")
        gf("jacobian", "--placement", "post", "--layers", 2, *TINY, "--out", d / "J.npy")
        for t in ("bf16", "f16"):
            gf("analyze", "--placement", "post", "--layers", 6, *TINY, "--precision", t, "-q", "--json",
               d / f"post-{t}.json")
        gf("compare", "--placements", "post,pre", "--layers", "2,4", *TINY, "--seeds", 2, "-q", "--json", d / "cmp.json")
        gf("compare", "--placements", PLACEMENTS8, "--layers", "2,4,8", *TINY, "--seeds", 2, "-q",
           "--json", d / "cmp8.json")
        gf("sweep", "--placement", "post,pre", "--layers", 4, *TINY, "--param", "init-scale", "--values",
           "0.25,0.5,1,2", "--seeds", 2, "--gradients-only", "-q", "--json", d / "sweep.json")
        gf("sweep", "--placement", "post,pre", "--layers", 4, *TINY, "--param", "init-scale", "--values",
           "0.5,1,inv-sqrt-2L", "--seeds", 2, "--gradients-only", "-q", "--json", d / "sweep_inv.json")
        gf("sweep", "--placement", "post", *TINY, "--param", "init-scale", "--values", "0.25,0.5,1,2",
           "--param2", "layers", "--values2", "2,4,8,16", "--gradients-only", "-q", "--json", d / "sweep2d.json")
        train = [*TINY, "--steps", 20, "--log-every", 5, "--batch", 4, "--eval-size", 8, "-q"]
        gf("train", "--placement", "post", "--layers", 4, *train, "--json", d / "train.json")
        gf("train-sweep", "--placements", "post,pre", "--layers", 2, "--warmup", "0,5", "--lr", "1e-3,1e-2",
           "--seeds", 1, *train, "--json", d / "tsweep.json")
        gf("train-sweep", "--placements", "post,pre", "--layers", 24, "--warmup", "0,5", "--lr", "1e-3",
           "--seeds", 1, *train, "--json", d / "tsweep24.json")
        specs = sorted(p for p in (root / "examples" / "claims").glob("*.json") if not p.name.startswith("train_"))
        (d / "claims").mkdir(exist_ok=True)
        gf("run", "--reduced", "-q", "--out-dir", d / "claims", *specs)
        claims = sorted(str(p) for p in (d / "claims").glob("*.json"))

        # ---- cases: (name, kind, inputs, options) --------------------------------------------------------------
        a = [d / "post.json", d / "pre.json"]
        cases = [
            ("analyze", "grad-by-depth", a, []), ("analyze", "jacobian-norms", a, []),
            ("analyze", "token-geometry", a, []), ("analyze", "attention-entropy", [a[0]], []),
            ("analyze", "spectrum", [a[0]], []),
            ("precision", "precision-error", [d / "post-bf16.json", d / "post-f16.json"], []), ("npy", "heatmap", [d / "J.npy"], ["--tokens", 4]),
            ("compare", "grad-by-depth", [d / "cmp.json"], []), ("compare", "jacobian-norms", [d / "cmp.json"], []),
            ("compare", "token-geometry", [d / "cmp.json"], []),
            ("compare", "attention-entropy", [d / "cmp.json"], []),
            ("compare", "sensitivity", [d / "cmp.json"], []),
            ("compare8", "grad-by-depth", [d / "cmp8.json"], []),
            ("compare8", "jacobian-norms", [d / "cmp8.json"], []),
            ("compare8", "token-geometry", [d / "cmp8.json"], []),
            ("compare8", "attention-entropy", [d / "cmp8.json"], []),
            ("compare8", "sensitivity", [d / "cmp8.json"], []),
            ("sweep", "sensitivity", [d / "sweep.json"], []),
            ("sweep_inv", "sensitivity", [d / "sweep_inv.json"], []),
            ("sweep2d", "phase-diagram", [d / "sweep2d.json"], []),
            ("train", "loss-curves", [d / "train.json"], []), ("train", "grad-over-training", [d / "train.json"], []),
            ("tsweep", "loss-curves", [d / "tsweep.json"], []),
            ("tsweep", "grad-over-training", [d / "tsweep.json"], []),
            ("tsweep", "phase-diagram", [d / "tsweep.json"], []),
            ("tsweep24", "loss-curves", [d / "tsweep24.json"], []),
            ("tsweep24", "grad-over-training", [d / "tsweep24.json"], []),
            ("claims", "claims", claims, []),
            ("title", "grad-by-depth", [d / "cmp.json"], ["--title", LONG_TITLE]),
            ("title", "jacobian-norms", [d / "cmp.json"], ["--title", LONG_TITLE]),
        ]
        out = d / "fig"
        out.mkdir(exist_ok=True)
        for name, kind, inputs, opts in cases:
            for ext in ("pdf", "svg", "png"):
                fig = out / f"{name}-{kind}.{ext}"
                r = subprocess.run([gradflow, "plot", *map(str, inputs), "--kind", kind, "-o", str(fig),
                                    *map(str, opts)], capture_output=True, text=True)
                where = f"{name} --kind {kind} .{ext}"
                if r.returncode != 0:
                    failures.append(f"{where}: plot failed: {r.stderr.strip()}")
                    continue
                if ext == "png":
                    continue
                for p in figure_check.problems(fig, Path(str(fig) + ".gp")):
                    failures.append(f"{where}: {p}")
    for f in failures:
        print(f)
    print(f"test_figure_layout: {len(failures)} problem(s) in {len(cases)} figures x 3 formats")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
