#!/usr/bin/python3
"""pytorch_to_gradflow.py — train a small nn.TransformerEncoder in PyTorch, save it for gradflow, analyze it.

  /usr/bin/python3 examples/pytorch_to_gradflow.py --out-dir /tmp/pt [--gradflow build/gradflow]

Trains a 4-layer Pre-LN encoder (d = 32, 4 heads, GELU, final LayerNorm) for a few hundred steps on a toy
task (each token learns the running mean of the tokens before it, causal mask), then writes
  encoder.safetensors  its state_dict (float32, PyTorch's names: layers.{i}.self_attn.in_proj_weight, ...)
  x.npy                one input sequence, shape (1, n, d)
and prints the gradflow command that analyzes the trained model on that input. With --gradflow it also runs
it. The state_dict is written by a 15-line safetensors writer, so the `safetensors` package is not needed
(safetensors.torch.save_file(encoder.state_dict(), path) writes the same file).
"""
import argparse
import json
import os
import shlex
import struct
import subprocess

import numpy as np
import torch
from torch import nn

D, HEADS, LAYERS, D_FF, N = 32, 4, 4, 64, 12


def save_safetensors(state, path):
    """state_dict -> safetensors: u64 LE header length, JSON header, raw little-endian float32 data."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in state.items():
        raw = t.detach().to(torch.float32).contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=".", help="where to write encoder.safetensors and x.npy")
    ap.add_argument("--steps", type=int, default=200, help="training steps")
    ap.add_argument("--gradflow", help="path of the gradflow binary: run the analysis too")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(0)

    layer = nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=D_FF, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=True)
    encoder = nn.TransformerEncoder(layer, LAYERS, norm=nn.LayerNorm(D), enable_nested_tensor=False)
    mask = torch.triu(torch.full((N, N), float("-inf")), diagonal=1)
    opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    for step in range(args.steps):
        x = torch.randn(16, N, D)
        target = x.cumsum(1) / torch.arange(1, N + 1).view(1, N, 1)  # running mean over the tokens so far
        loss = ((encoder(x, mask=mask) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")

    weights = os.path.join(args.out_dir, "encoder.safetensors")
    inputs = os.path.join(args.out_dir, "x.npy")
    save_safetensors(encoder.state_dict(), weights)
    np.save(inputs, torch.randn(1, N, D).numpy().astype(np.float64))
    # heads, placement, activation and the mask are not in a state_dict: say them; L, d, d_ff, n come from the files
    cmd = ["gradflow", "analyze", "--weights", weights, "--input", inputs, "--heads", str(HEADS),
           "--placement", "pre", "--activation", "gelu", "--causal",
           "--json", os.path.join(args.out_dir, "report.json")]
    print("now run:\n  " + " ".join(shlex.quote(c) for c in cmd))
    if args.gradflow:
        subprocess.run([args.gradflow] + cmd[1:], check=True)


if __name__ == "__main__":
    main()
