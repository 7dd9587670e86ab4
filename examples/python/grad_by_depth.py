"""grad_by_depth.py — `import gradflow` in a notebook's style (docs/python.md): a small PyTorch encoder analyzed
as it is, two placements compared, the gradient norm per depth drawn with matplotlib.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/grad_by_depth.py --out grad_by_depth.png

Needs NumPy and matplotlib (python3-numpy, python3-matplotlib); the PyTorch part needs python3-torch (skipped, with
a line saying so, without it). Exit 77 when NumPy or matplotlib is missing.
"""
import argparse
import sys

try:
    import numpy as np
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:
    print(f"SKIPPED: {e}; install python3-numpy python3-matplotlib")
    sys.exit(77)

import gradflow

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--out", default="grad_by_depth.png", help="the figure (.png, .pdf, .svg)")
args = parser.parse_args()

# 1. Two placements at the same depth, from the same seed: ||dL/dx_l|| per layer l.
common = dict(layers=12, d_model=32, heads=4, seq_len=8, init="xavier", seed=0)
reports = {p: gradflow.analyze(gradflow.Model(placement=p, **common), gradients_only=True) for p in ("post", "pre")}
for p, r in reports.items():
    g = r.grad_norm
    print(f"{p:5s} ||dL/dx_0|| / ||dL/dx_11|| = {g[0] / g[-1]:.3f}")

# 2. The same comparison over seeds, as `gradflow compare` reports it (mean and std over seeds).
c = gradflow.compare(placements="post,pre", layers=12, seeds=3, d_model=32, heads=4, seq_len=8, init="xavier",
                     gradients_only=True)
for group in c["groups"]:
    s = group["scalars"]["summary.bottom_to_top_grad_ratio"]
    print(f"{group['placement']:5s} bottom/top over {s['n']} seeds: {s['mean']:.3f} +- {s['std']:.3f}")

# 3. A PyTorch encoder as it is: its state_dict goes straight in (no file of yours), read as --weights reads one.
torch_report = None
try:
    import torch
except ImportError:
    print("(no PyTorch: python3-torch; the encoder part is skipped)")
else:
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True,
                                             dtype=torch.float64)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False)
    model = gradflow.Model.from_weights(encoder.state_dict(), placement="post", heads=4, seq_len=8)
    torch_report = gradflow.analyze(model, gradients_only=True)
    print(f"torch encoder bottom/top = {torch_report.grad_norm[0] / torch_report.grad_norm[-1]:.3f}")

# 4. The figure: gradflow.plot draws what `gradflow plot --kind grad-by-depth` draws, into your axes.
fig, ax = plt.subplots(figsize=(3.5, 2.6))
gradflow.plot(list(reports.values()), kind="grad-by-depth", ax=ax)
if torch_report is not None:
    ax.plot(np.arange(12), torch_report.grad_norm, marker="^", color="#009E73", label="post L=12 (PyTorch's init)")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(args.out, dpi=150)
print(f"wrote {args.out}")
