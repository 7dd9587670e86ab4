#!/usr/bin/python3
"""test_parametrization_torch.py GRADFLOW — `--parametrization mup|depth-mup|completep` against an independent PyTorch
implementation of the tables (issue 35): the initialized weights and five Adam updates, role by role.

The tables, written here from the sources (not from gradflow's code), with m_N = d/W0, m_L = L/L0 and α = 0, 1/2, 1:
  init      Tensor Programs V, Table 8 / microsoft/mup: hidden matrices' std ∝ fan_in^(-1/2), so a fixed-std draw
            (gpt2's 0.02) × m_N^(-1/2) and a fan-in draw (torch, xavier) as it is; biases and the readout keep the base
            width's std (mup's rescale_linear_bias and MuReadout: a U(±1/√fan_in) draw × m_N^(1/2)); depth-μP and
            CompleteP drop gpt2's 1/√(2L) (nanoGPT-mup, completep branch)
  forward   residual branches × m_L^(-α) (TP VI; Dey et al. 2025, Table 1); attention logits × √e0/e, e0 = e/m_N
            (TP V, §B.1); the readout's input × 1/m_N (MuReadout, Table 8)
  Adam      hidden matrices lr × m_N^(-1)·m_L^(α-1), weight decay × m_N; the blocks' biases and norms lr × m_L^(α-1);
            the blocks' ε × m_N^(-1)·m_L^(-α) (Dey et al., Table 1; none for μP alone, as MuAdam); embeddings,
            readout and final norm at the base values.
Configurations: Pre-LN and Post-LN with the classic mlp block (LayerNorm, GELU, biases; tied and untied) and Pre-LN
with the LLaMA-style block (RMSNorm, SwiGLU with linear3 a hidden matrix, no biases), under each parametrization;
and the LLaMA-style block with RoPE and per-head QK-norm (Qwen3's: RMSNorm of each head's q and k, then the rotation,
then the logits at the table's scale; the norms' gains are the blocks' norms for Adam).
Checked: (1) every initialized tensor equals the same seed's sp tensor times the table's factor, to INIT_REL_TOL
(deterministic: the same draws, one multiplication); (2) PyTorch, from gradflow's step-0 weights, with the table's
forward multipliers and one torch.optim.Adam param group per tensor (lr, eps, weight_decay from the table), trains
the same five saved batches: every train loss and every weight after 5 updates within TRAIN_REL_TOL (the attention
key bias as in test_train_against_torch.py: its gradient is exactly zero, so only its bounded movement is checked).
Exit 1 on any failure, 77 when torch or numpy cannot be imported.
"""
import math
import os
import sys
import tempfile

from preamble import np, torch, gradflow_binary, load_json  # exits 77 (skipped) without numpy/torch
import torch.nn.functional as F
import tolerances as tol
import torch_reference as tr
from decoder_reference import rotate

STEPS = 5
HIDDEN = ("self_attn.in_proj_weight", "self_attn.out_proj.weight", "linear1.weight", "linear2.weight", "linear3.weight")
BIASES = ("self_attn.in_proj_bias", "self_attn.out_proj.bias", "linear1.bias", "linear2.bias")
ALPHA = {"mup": 0.0, "depth-mup": 0.5, "completep": 1.0}

# (placement, parametrization, init, base width, base depth, gradflow train options)
CONFIGS = [
    ("pre", "completep", "gpt2", 4, 2, dict(layers=4, d=8, heads=2, d_ff=16, n=6, tie=False, wd=0.01, lr=1e-2)),
    ("post", "depth-mup", "torch", 2, 1, dict(layers=2, d=8, heads=2, d_ff=32, n=5, tie=True, wd=0.0, lr=3e-3)),
    ("pre", "mup", "xavier", 16, None, dict(layers=3, d=8, heads=2, d_ff=16, n=6, tie=False, wd=0.01, lr=1e-2)),
    # the LLaMA-style block: RMSNorm, SwiGLU (linear3: a hidden matrix), no biases
    ("pre", "depth-mup", "gpt2", 2, 1, dict(layers=3, d=8, heads=2, d_ff=12, n=6, tie=False, wd=0.01, lr=1e-2,
                                            llama=True)),
    # ... with RoPE (every feature of a head, theta 10000) and per-head QK-norm, under CompleteP and muP
    ("pre", "completep", "torch", 4, 2, dict(layers=4, d=8, heads=2, d_ff=12, n=6, tie=False, wd=0.01, lr=1e-2,
                                             llama=True, rope=True, qk_norm=True)),
    ("pre", "mup", "gpt2", 4, None, dict(layers=2, d=16, heads=2, d_ff=24, n=6, tie=True, wd=0.0, lr=3e-3,
                                         llama=True, rope=True, qk_norm=True)),
]


class Table:
    """The parametrization's factors for one model, from the papers' tables."""

    def __init__(self, kind, d, W0, L, L0, heads):
        self.kind, self.L = kind, L
        self.depth = kind in ("depth-mup", "completep")
        self.mN = d / W0
        self.mL = L / L0 if self.depth else 1.0
        self.alpha = ALPHA[kind]
        self.branch = self.mL ** -self.alpha
        e = d / heads
        self.logit = math.sqrt(e / self.mN) / e
        self.readout = 1.0 / self.mN

    def init(self, name, scheme):
        role = name.split(".", 2)[-1] if name.startswith("layers.") else name
        if role in HIDDEN:
            f = self.mN ** -0.5 if scheme == "gpt2" else 1.0
            if scheme == "gpt2" and self.depth and role in ("self_attn.out_proj.weight", "linear2.weight"):
                f *= math.sqrt(2.0 * self.L)  # gpt2's own 1/sqrt(2L), dropped
            return f
        if role in BIASES and scheme in ("torch", "xavier"):
            return math.sqrt(self.mN)
        if name == "lm_head.weight":
            return math.sqrt(self.mN)
        return 1.0

    def adam(self, name, lr, eps, wd):
        """(lr, eps, weight_decay) of the tensor's param group."""
        in_block = name.startswith("layers.")
        if not in_block:
            return lr, eps, wd
        depth_lr = self.mL ** (self.alpha - 1.0) if self.depth else 1.0
        block_eps = eps * (self.mL ** -self.alpha / self.mN) if self.depth else eps
        if name.split(".", 2)[-1] in HIDDEN:
            return lr * (depth_lr / self.mN), block_eps, wd * self.mN
        return lr * depth_lr, block_eps, wd


class LM:
    """The trained model in float64 PyTorch, on gradflow's tensor names."""

    def __init__(self, placement, o, table, weights):
        self.placement, self.o, self.t, self.w = placement, o, table, weights
        n = o["n"]
        self.mask = torch.triu(torch.full((n, n), float("-inf"), dtype=torch.float64), diagonal=1)

    def ln(self, x, prefix):
        if self.o.get("llama"):  # RMSNorm: x / sqrt(mean(x^2) + eps) * w (over the last axis: a head's for QK-norm)
            return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * self.w[prefix + ".weight"]
        return F.layer_norm(x, (x.shape[-1],), self.w[prefix + ".weight"], self.w[prefix + ".bias"], eps=1e-5)

    def b(self, name):
        return self.w.get(name, 0.0)  # --bias off: no bias

    def attention(self, x, p):
        B, n, d = x.shape
        h = self.o["heads"]
        e = d // h
        qkv = x @ self.w[p + "self_attn.in_proj_weight"].T + self.b(p + "self_attn.in_proj_bias")
        q, k, v = (t.reshape(B, n, h, e).transpose(1, 2) for t in qkv.split(d, dim=-1))
        if self.o.get("qk_norm"):  # per head, before the rotation
            q, k = self.ln(q, p + "self_attn.q_norm"), self.ln(k, p + "self_attn.k_norm")
        if self.o.get("rope"):
            q, k = rotate(q.reshape(B * h, n, e), e, 10000.0).reshape(B, h, n, e), \
                rotate(k.reshape(B * h, n, e), e, 10000.0).reshape(B, h, n, e)
        S = (q @ k.transpose(-1, -2)) * self.t.logit + self.mask
        O = (torch.softmax(S, dim=-1) @ v).transpose(1, 2).reshape(B, n, d)
        return O @ self.w[p + "self_attn.out_proj.weight"].T + self.b(p + "self_attn.out_proj.bias")

    def ffn(self, x, p):
        if self.o.get("llama"):  # SwiGLU: linear2(silu(linear1 x) * linear3 x)
            a = F.silu(x @ self.w[p + "linear1.weight"].T) * (x @ self.w[p + "linear3.weight"].T)
            return a @ self.w[p + "linear2.weight"].T
        a = F.gelu(x @ self.w[p + "linear1.weight"].T + self.w[p + "linear1.bias"])
        return a @ self.w[p + "linear2.weight"].T + self.w[p + "linear2.bias"]

    def loss(self, tokens, targets):
        c = self.t.branch
        x = self.w["tok_embedding.weight"][tokens[:, :-1]]
        if not self.o.get("rope"):  # a RoPE block has no absolute position embedding
            x = x + self.w["pos_embedding.weight"].unsqueeze(0)
        for l in range(self.o["layers"]):
            p = f"layers.{l}."
            if self.placement == "pre":
                x = x + c * self.attention(self.ln(x, p + "norm1"), p)
                x = x + c * self.ffn(self.ln(x, p + "norm2"), p)
            else:
                x = self.ln(x + c * self.attention(x, p), p + "norm1")
                x = self.ln(x + c * self.ffn(x, p), p + "norm2")
        if self.placement == "pre":
            x = self.ln(x, "norm")
        head = self.w["tok_embedding.weight" if self.o["tie"] else "lm_head.weight"]
        z = (self.t.readout * x) @ head.T
        return F.cross_entropy(z.reshape(-1, z.shape[-1]), targets.reshape(-1), ignore_index=-1, reduction="mean")


def train(gradflow, placement, kind, scheme, W0, L0, o, ck, js, seed):
    cmd = [gradflow, "train", "--placement", placement, "--layers", str(o["layers"]), "--d-model", str(o["d"]),
           "--heads", str(o["heads"]), "--d-ff", str(o["d_ff"]), "--seq-len", str(o["n"]), "--activation", "gelu",
           "--init", scheme, "--task", "copy", "--vocab", "9", "--steps", str(STEPS), "--batch", "3", "--lr",
           repr(o["lr"]), "--warmup", "0", "--schedule", "constant", "--weight-decay", repr(o["wd"]), "--log-every",
           "1", "--save-every", str(STEPS), "--checkpoint-dir", ck, "--save-batches", "--seed", str(seed), "--json",
           js, "-q"]
    if kind != "sp":
        cmd += ["--parametrization", kind, "--base-width", str(W0)]
        if L0:
            cmd += ["--base-depth", str(L0)]
    if o["tie"]:
        cmd.append("--tie-embeddings")
    if o.get("rope"):
        cmd.append("--rope")
    if o.get("qk_norm"):
        cmd += ["--qk-norm", "head"]
    if o.get("llama"):
        cmd += ["--norm", "rmsnorm", "--ffn", "swiglu", "--bias", "off"]
        cmd.remove("--activation")
        cmd.remove("gelu")
    tr.run(cmd)
    return load_json(js)


def rel(a, b):
    return ((a - b).norm() / max(b.norm().item(), tol.ZERO_REL_TOL)).item()


def check(gradflow, i, config, tmp):
    placement, kind, scheme, W0, L0, o = config
    label = (f"[{i}] {kind} {placement}{' llama block' if o.get('llama') else ''}{' rope' if o.get('rope') else ''}"
             f"{' qk-norm' if o.get('qk_norm') else ''} init {scheme} W0={W0} L0={L0} "
             f"L={o['layers']} d={o['d']} tie={o['tie']}")
    print(label)
    failures = 0
    table = Table(kind, o["d"], W0, o["layers"], L0 or 1, o["heads"])
    report = train(gradflow, placement, kind, scheme, W0, L0, o, os.path.join(tmp, f"p{i}"), os.path.join(tmp, f"p{i}.json"), 30 + i)
    train(gradflow, placement, "sp", scheme, W0, L0, o, os.path.join(tmp, f"s{i}"), os.path.join(tmp, f"s{i}.json"), 30 + i)
    got = report["config"]["parametrization"]
    for key, want in (("branch_multiplier", table.branch), ("logit_scale", table.logit), ("readout_multiplier", table.readout)):
        ok = abs(got[key] - want) <= tol.INIT_REL_TOL * abs(want)
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} report {key:<28} {got[key]!r} (table {want!r})")
    # (1) the initialization: sp's draw times the factor of each role
    init = tr.read_safetensors(os.path.join(tmp, f"p{i}", "step_000000.safetensors"))
    init_sp = tr.read_safetensors(os.path.join(tmp, f"s{i}", "step_000000.safetensors"))
    for name in sorted(init):
        want = table.init(name, scheme) * init_sp[name]
        r = rel(init[name], want)
        ok = r <= tol.INIT_REL_TOL
        failures += not ok
        if not ok or table.init(name, scheme) != 1.0:
            print(f"  {'ok  ' if ok else 'FAIL'} init {name:<40} x {table.init(name, scheme):.6g}  rel {r:.2e}")
    # (2) five Adam updates from the same weights on the same batches
    w = {k: v.clone().requires_grad_(True) for k, v in init.items()}
    model = LM(placement, o, table, w)
    groups = []
    for name, p in w.items():
        lr, eps, wd = table.adam(name, o["lr"], 1e-9, o["wd"])
        groups.append({"params": [p], "lr": lr, "eps": eps, "weight_decay": wd})
    opt = torch.optim.Adam(groups, betas=(0.9, 0.98))
    ck = os.path.join(tmp, f"p{i}")
    losses = []
    for s in range(STEPS + 1):
        tokens = torch.from_numpy(np.load(os.path.join(ck, f"batch_{s:06d}.tokens.npy"))).long()
        targets = torch.from_numpy(np.load(os.path.join(ck, f"batch_{s:06d}.targets.npy"))).long()
        opt.zero_grad(set_to_none=True)
        loss = model.loss(tokens, targets)
        losses.append(loss.item())
        if s == STEPS:
            break
        loss.backward()
        opt.step()
    for s, (want, got_loss) in enumerate(zip(losses, [e["train_loss"] for e in report["log"]])):
        r = abs(got_loss - want) / abs(want)
        ok = r <= tol.TRAIN_REL_TOL
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} loss at step {s}  torch {want:.17g}  gradflow {got_loss:.17g}  rel {r:.2e}")
    final = tr.read_safetensors(os.path.join(ck, f"step_{STEPS:06d}.safetensors"))
    d = o["d"]
    for name, p in w.items():
        want, got_w = p.detach().reshape(-1), final[name].reshape(-1)
        if name.endswith("in_proj_bias"):  # the key part: an exactly-zero gradient (test_train_against_torch.py)
            lr_b = table.adam(name, o["lr"], 1e-9, o["wd"])[0]
            bound = 3 * STEPS * lr_b
            ok = want[d:2 * d].abs().max().item() <= bound and got_w[d:2 * d].abs().max().item() <= bound
            failures += not ok
            keep = torch.cat([torch.arange(0, d), torch.arange(2 * d, 3 * d)])
            want, got_w = want[keep], got_w[keep]
        r = rel(got_w, want)
        ok = r <= tol.TRAIN_REL_TOL
        failures += not ok
        moved = (p.detach().reshape(-1) - init[name].reshape(-1)).norm().item()
        print(f"  {'ok  ' if ok else 'FAIL'} after {STEPS} updates {name:<40} moved {moved:.3g}  rel {r:.2e}")
    print(f"{'ok  ' if failures == 0 else 'FAIL'} {label}")
    return failures


def main():
    gradflow = os.path.abspath(gradflow_binary())
    torch.set_num_threads(1)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, config in enumerate(CONFIGS):
            failures += check(gradflow, i, config, tmp)
    print(f"{'FAILED' if failures else 'passed'}: {failures} failure(s) over {len(CONFIGS)} configurations")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
