"""preamble.py — what every tests/pytorch script starts with, written once: numpy and torch imported, or exit 77
(CTest's SKIP_RETURN_CODE) when either is missing, the only reason to skip; the command line (the one argument is
the gradflow binary); reading gradflow's JSON output; float64 random tensors (every compared computation is float64,
so no script changes torch's default dtype). Import it before anything that imports torch:
    from preamble import np, torch, gradflow_binary, load_json, randn64
(run as `/usr/bin/python3 tests/pytorch/test_x.py`, the script's folder is first on sys.path, so the sibling modules,
preamble, tolerances, torch_reference and hf_reference, import by name)."""
import json
import os
import sys

SKIP_RETURN_CODE = 77

try:
    import numpy as np
    import torch
except ImportError as e:  # the only reason to skip
    print(f"SKIPPED: {sys.executable} cannot import torch/numpy ({e}); install python3-torch python3-numpy")
    sys.exit(SKIP_RETURN_CODE)

__all__ = ["np", "torch", "gradflow_binary", "load_json", "randn64"]


def gradflow_binary():
    """The gradflow binary the script checks: its one argument (usage message and exit 1 otherwise)."""
    if len(sys.argv) != 2:
        sys.exit(f"usage: {os.path.basename(sys.argv[0])} PATH/TO/gradflow")
    return sys.argv[1]


def load_json(path):
    """A report gradflow wrote (--json, config.json, ...)."""
    with open(path) as f:
        return json.load(f)


def randn64(*shape):
    """torch.randn in float64 from torch's global generator (seed it with torch.manual_seed first)."""
    return torch.randn(*shape, dtype=torch.float64)
