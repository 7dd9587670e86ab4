#!/usr/bin/python3
"""test_train_precision_torch.py GRADFLOW — `gradflow train --precision bf16` (mixed precision) against the same
regime written in PyTorch: float32 master weights and torch.optim.Adam in float32, each step's forward and backward
by a bfloat16 copy of the model (Debian's torch 1.13 on the CPU), the cross-entropy computed in float32 from the
bfloat16 logits (its gradient reaches the logits rounded to bfloat16), the bfloat16 gradients copied into the
float32 master gradients. The same initial weights (gradflow's float32 master copy, step_000000.safetensors) and
batches (--save-batches) as test_train_against_torch.py's configurations, STEPS Adam updates.

The two emulations round the same operations to bfloat16 but sum in other orders (OpenBLAS's SGEMM vs oneDNN's, a
fused LayerNorm vs two rounded steps), so their bits differ and their errors are two draws of one rounding process:
compared as statistics against the float32 run (torch's, the same weights and batches): the root-mean-square over
the steps of |loss − loss_f32|, and the total norm over every tensor of (weights after STEPS − the float32 run's),
gradflow's and PyTorch's within a factor BF16_ERROR_RATIO of each other (the analyze cross-check's,
test_precision_torch.py). Rounding a class of values to the wrong type moves a ratio by orders of magnitude (float32
instead of bfloat16: 2^16 in unit roundoff; no rounding at all: the error vanishes).
Exit 1 on any failure, 77 (CTest SKIP_RETURN_CODE) when torch or numpy cannot be imported.
"""
import copy
import math
import os
import sys
import tempfile

from preamble import np, torch, gradflow_binary, load_json  # exits 77 (skipped) without numpy/torch
import torch.nn.functional as F
import torch_reference as tr
from test_train_against_torch import CONFIGS, LM, scheduled_lr

STEPS = 8
BF16_ERROR_RATIO = 3.0


def gradflow_run(gradflow, spec, o, i, tmp):
    ck = os.path.join(tmp, f"ck{i}")
    js = os.path.join(tmp, f"{i}.json")
    cmd = [gradflow, "train", "--placement", spec.placement, "--layers", str(spec.layers), "--d-model", str(spec.d),
           "--heads", str(spec.heads), "--d-ff", str(spec.d_ff), "--seq-len", str(spec.n), "--activation",
           spec.activation, "--task", o["task"], "--vocab", str(o["vocab"]), "--steps", str(STEPS), "--batch",
           str(o["batch"]), "--lr", repr(o["lr"]), "--warmup", str(o["warmup"]), "--schedule", o["schedule"],
           "--clip", repr(o["clip"]), "--weight-decay", repr(o["wd"]), "--log-every", "1", "--save-every", str(STEPS),
           "--checkpoint-dir", ck, "--save-batches", "--seed", str(40 + i), "--json", js, "-q", "--precision", "bf16"]
    if o["tie"]:
        cmd.append("--tie-embeddings")
    if not spec.final_norm and spec.placement != "post":
        cmd.append("--no-final-norm")
    tr.run(cmd)
    return ck, load_json(js)


def torch_run(spec, o, ck, dtype):
    """Losses before each update (and after the last) and the final float32 weights: the float32 run (dtype float32)
    or the mixed one (dtype bfloat16: the passes by a copy cast to it)."""
    master = LM(spec, o["vocab"], o["tie"])
    init = tr.read_safetensors(os.path.join(ck, "step_000000.safetensors"))
    with torch.no_grad():
        for name, p in master.named_weights().items():
            p.copy_(init[name].reshape(p.shape))
    master.float()
    master.mask = master.mask.float()
    cast = copy.deepcopy(master).to(dtype)
    cast.mask = master.mask.to(dtype)
    params, cast_params = list(master.parameters()), list(cast.parameters())
    opt = torch.optim.Adam(params, lr=o["lr"], betas=(0.9, 0.98), eps=1e-9, weight_decay=o["wd"])
    losses = []
    for s in range(STEPS + 1):
        tokens = torch.from_numpy(np.load(os.path.join(ck, f"batch_{s:06d}.tokens.npy"))).long()
        targets = torch.from_numpy(np.load(os.path.join(ck, f"batch_{s:06d}.targets.npy"))).long()
        with torch.no_grad():
            for c, p in zip(cast_params, params):
                c.copy_(p)
                c.grad = None
        x = cast.tok[tokens[:, :-1]] + cast.pos.unsqueeze(0)
        y = cast.encoder(x, mask=cast.mask)
        z = y @ (cast.tok if cast.head is None else cast.head).T
        loss = F.cross_entropy(z.float().reshape(-1, z.shape[-1]), targets.reshape(-1), ignore_index=-1)
        losses.append(loss.item())
        if s == STEPS:
            break
        loss.backward()
        for c, p in zip(cast_params, params):
            p.grad = c.grad.float()
        if o["clip"] > 0:
            torch.nn.utils.clip_grad_norm_(params, o["clip"])
        for g in opt.param_groups:
            g["lr"] = scheduled_lr(o["schedule"], o["lr"], o["warmup"], STEPS, s + 1)
        opt.step()
    return losses, {k: v.detach().double().reshape(-1) for k, v in master.named_weights().items()}


def main():
    gradflow = os.path.abspath(gradflow_binary())
    torch.set_num_threads(1)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (spec, o) in enumerate(CONFIGS):
            ck, report = gradflow_run(gradflow, spec, o, i, tmp)
            ref_loss, ref_w = torch_run(spec, o, ck, torch.float32)
            t_loss, t_w = torch_run(spec, o, ck, torch.bfloat16)
            g_loss = [e["train_loss"] for e in report["log"]]
            final = tr.read_safetensors(os.path.join(ck, f"step_{STEPS:06d}.safetensors"))
            g_w = {k: v.double().reshape(-1) for k, v in final.items()}
            rms = lambda a: math.sqrt(sum((x - r) ** 2 for x, r in zip(a, ref_loss)) / len(ref_loss))  # noqa: E731
            wnorm = lambda w: math.sqrt(sum(((w[k] - ref_w[k]).norm() ** 2).item() for k in ref_w))  # noqa: E731
            print(f"[{i}] {spec.label()} task={o['task']}")
            for what, g, t in (("loss rms error", rms(g_loss), rms(t_loss)), ("weights error", wnorm(g_w), wnorm(t_w))):
                ratio = g / t if t > 0 else math.inf
                ok = 1 / BF16_ERROR_RATIO <= ratio <= BF16_ERROR_RATIO
                failures += not ok
                print(f"  {'ok  ' if ok else 'FAIL'} {what:<16} gradflow {g:.3e}  torch {t:.3e}  ratio {ratio:.2f}")
    print(f"{'FAILED' if failures else 'passed'}: {failures} failure(s) over {len(CONFIGS)} configurations")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
