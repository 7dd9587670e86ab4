"""torch_reference.py — PyTorch side of the gradflow cross-checks (test_against_torch.py, test_export_roundtrip.py).

An nn.TransformerEncoder in float64 (train mode, dropout 0, so the plain-math path runs, never the fused
fast path), the same forward split into its layers so every x_l keeps its gradient, the loss L = sum(g * y),
and small file writers/readers: safetensors by hand (8-byte LE header length, JSON header, raw LE data;
no safetensors package needed) and .npy through numpy. Placements PyTorch's layer cannot express by a flag
(residual scale lambda, DeepNorm's alpha, B2T, Mix-LN) use the layer's own submodules in a small forward.
"""
import json
import math
import struct
import subprocess

import numpy as np
import torch
from torch import nn

from tolerances import REL_TOL, ZERO_REL_TOL

SKIP_RETURN_CODE = 77


# --- files ------------------------------------------------------------------------------------------
_DTYPES = {"F64": (torch.float64, 8), "F32": (torch.float32, 4), "F16": (torch.float16, 2), "BF16": (torch.bfloat16, 2),
           "U8": (torch.uint8, 1)}


def write_safetensors(path, state, dtype="F64", own_dtypes=None):
    """state: name -> tensor. Writes every tensor as `dtype` (those `own_dtypes` names in their own: the buffers a
    real checkpoint stores as U8 or F32), contiguous, header padded to 8 bytes."""
    own_dtypes = own_dtypes or {}
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in state.items():
        dt = own_dtypes.get(name, dtype)
        t = t.detach().to(_DTYPES[dt][0]).contiguous().cpu()
        # bytes of the raw little-endian values (bfloat16 has no numpy dtype: go through int16)
        raw = t.view(torch.int16).numpy().tobytes() if dt == "BF16" else t.numpy().tobytes()
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """name -> float64 tensor (F64 and F32 only: what gradflow export writes and a little more)."""
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base, out = 8 + n, {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        np_dtype = {"F64": "<f8", "F32": "<f4"}[e["dtype"]]
        b, end = e["data_offsets"]
        a = np.frombuffer(data[base + b:base + end], dtype=np_dtype).astype(np.float64)
        out[name] = torch.from_numpy(a.reshape(e["shape"]).copy())
    return out


def rounded(state, dtype):
    """The values a reader of `dtype` will see (so torch and gradflow use the very same weights)."""
    torch_dtype, _ = _DTYPES[dtype]
    return {k: v.detach().to(torch_dtype).to(torch.float64) for k, v in state.items()}


# --- the model ----------------------------------------------------------------------------------------
class Spec:
    """One configuration, in gradflow's option names."""

    def __init__(self, placement="post", layers=2, d=8, heads=2, d_ff=16, n=4, activation="relu", causal=False,
                 final_norm=False, residual_scale=1.0, deepnorm_alpha=None, mix_post_layers=None, dtype="F64",
                 batch_dim=False, seed=0):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def label(self):
        s = (f"{self.placement} {self.activation}{' causal' if self.causal else ''}"
             f"{' final-norm' if self.final_norm else ''} L={self.layers} d={self.d} h={self.heads} "
             f"d_ff={self.d_ff} n={self.n} {self.dtype}")
        if self.residual_scale != 1.0:
            s += f" lambda={self.residual_scale}"
        if self.deepnorm_alpha is not None:
            s += f" alpha={self.deepnorm_alpha}"
        if self.mix_post_layers is not None:
            s += f" K={self.mix_post_layers}"
        return s

    def gradflow_options(self):
        o = ["--placement", self.placement, "--heads", str(self.heads), "--activation", self.activation]
        if self.causal:
            o.append("--causal")
        if self.residual_scale != 1.0:
            o += ["--residual-scale", repr(self.residual_scale)]
        if self.deepnorm_alpha is not None:
            o += ["--deepnorm-alpha", repr(self.deepnorm_alpha)]
        if self.mix_post_layers is not None:
            o += ["--mix-post-layers", str(self.mix_post_layers)]
        return o

    def layer_is_post(self, l):
        if self.placement == "mix":
            return l < self.mix_post_layers  # --mix-order post-first: the bottom K layers are Post-LN
        return self.placement in ("post", "deepnorm", "b2t", "resi-dual")


def build_encoder(spec):
    """nn.TransformerEncoder in float64 and train mode with dropout 0 (the plain-math path)."""
    layer = nn.TransformerEncoderLayer(spec.d, spec.heads, dim_feedforward=spec.d_ff, dropout=0.0,
                                       activation=spec.activation, batch_first=True,
                                       norm_first=not spec.layer_is_post(0), dtype=torch.float64)
    norm = nn.LayerNorm(spec.d, dtype=torch.float64) if spec.final_norm else None
    enc = nn.TransformerEncoder(layer, spec.layers, norm=norm, enable_nested_tensor=False)
    for l, lay in enumerate(enc.layers):
        lay.norm_first = not spec.layer_is_post(l)
        if spec.placement.startswith("hybridnorm"):
            # HybridNorm's per-head norms of Q, K, V (width d/h), named as gradflow (and the reference code) name
            # them; no attention input norm except in block 0 of HybridNorm*
            e = spec.d // spec.heads
            for nm in ("q_norm", "k_norm", "v_norm"):
                lay.self_attn.add_module(nm, nn.LayerNorm(e, dtype=torch.float64))
            if not (spec.placement == "hybridnorm-star" and l == 0):
                lay.norm1 = None
    enc.train()
    return enc


def randomize(enc, seed):
    """Independent weights per layer (TransformerEncoder deep-copies one layer), LayerNorm gains and biases
    moved away from 1 and 0, Linear biases nonzero."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in enc.named_parameters():
            r = torch.randn(p.shape, generator=gen, dtype=torch.float64)
            if "norm" in name:
                p.copy_(1.0 + 0.3 * r if name.endswith("weight") else 0.2 * r)
            elif p.dim() == 2:
                p.copy_(r / math.sqrt(p.shape[1]))
            else:
                p.copy_(0.1 * r)


def causal_mask(n):
    return torch.triu(torch.full((n, n), float("-inf"), dtype=torch.float64), diagonal=1)


def qkv_norm_attention(spec, sa, x, mask):
    """HybridNorm's attention, written out: [Q | K | V] = x W_inᵀ + b_in; each of Q, K, V LayerNorm-ed per head;
    softmax(Q Kᵀ/sqrt(e) + mask) V per head; out_proj."""
    b, n, d = x.shape
    H, e = spec.heads, d // spec.heads
    q, k, v = torch.nn.functional.linear(x, sa.in_proj_weight, sa.in_proj_bias).split(d, dim=-1)
    q, k, v = (norm(t.reshape(b, n, H, e)).transpose(1, 2) for norm, t in ((sa.q_norm, q), (sa.k_norm, k), (sa.v_norm, v)))
    S = q @ k.transpose(-1, -2) / math.sqrt(e)
    if mask is not None:
        S = S + mask
    O = (torch.softmax(S, dim=-1) @ v).transpose(1, 2).reshape(b, n, d)
    return sa.out_proj(O)


def layer_forward(spec, l, lay, x, mask):
    """Block l. lambda = 1 and no alpha/B2T: PyTorch's own TransformerEncoderLayer.forward; otherwise its
    submodules (_sa_block, _ff_block, norm1, norm2) composed as docs/placements.md says."""
    lam = spec.residual_scale
    if lam == 1.0 and spec.placement in ("post", "pre", "mix"):
        return lay(x, src_mask=mask)
    if spec.placement == "lns":  # LayerNorm Scaling: each norm's output times 1/sqrt(l), l = block index + 1
        k = 1.0 / math.sqrt(l + 1)
        x = x + lam * lay._sa_block(k * lay.norm1(x), mask, None)
        return x + lam * lay._ff_block(k * lay.norm2(x))
    if spec.placement.startswith("hybridnorm"):
        if spec.placement == "hybridnorm-star" and l == 0:  # HybridNorm*: block 0 Pre-Norm (QKV norms kept)
            x = x + lam * qkv_norm_attention(spec, lay.self_attn, lay.norm1(x), mask)
            return x + lam * lay._ff_block(lay.norm2(x))
        h = lay.norm2(x + lam * qkv_norm_attention(spec, lay.self_attn, x, mask))  # the FFN's residual starts
        return h + lam * lay._ff_block(h)                                            # from the normalized stream
    if spec.placement == "reorder":  # OLMo 2: the norm on the branch output, no input norm
        x = x + lam * lay.norm1(lay._sa_block(x, mask, None))
        return x + lam * lay.norm2(lay._ff_block(x))
    if not spec.layer_is_post(l):
        x = x + lam * lay._sa_block(lay.norm1(x), mask, None)
        return x + lam * lay._ff_block(lay.norm2(x))
    alpha = spec.deepnorm_alpha if spec.placement == "deepnorm" else 1.0
    h = lay.norm1(alpha * x + lam * lay._sa_block(x, mask, None))
    out = alpha * h + lam * lay._ff_block(h)
    if spec.placement == "b2t":
        out = out + x  # B2T: the block input skips to the last norm
    return lay.norm2(out)


def resi_dual_network(spec, enc, xa, xd, mask, keep=None):
    """ResiDual (Xie et al. 2023, microsoft/ResiDual): per sublayer f, x_d <- x_d + f(x_a), x_a <- LN(x_a + f(x_a));
    y = x_a + LN_f(x_d) (enc.norm). Appends the pairs (x_a,l, x_d,l), each retaining its grad, to `keep`."""
    lam = spec.residual_scale
    for l, lay in enumerate(enc.layers):
        if keep is not None:
            xa.retain_grad()
            xd.retain_grad()
            keep.append((xa, xd))
        f = lam * lay._sa_block(xa, mask, None)
        xa, xd = lay.norm1(xa + f), xd + f
        f = lam * lay._ff_block(xa)
        xa, xd = lay.norm2(xa + f), xd + f
    return xa + enc.norm(xd)


def network(spec, enc, x, mask, keep=None):
    """x: (1, n, d) -> y: (1, n, d); appends x_0 .. x_{L-1} (each retaining its grad) to `keep`."""
    if spec.placement == "resi-dual":  # both streams start from x (two copies, so each keeps its own gradient)
        return resi_dual_network(spec, enc, x.clone(), x.clone(), mask, keep)
    h = x
    for l, lay in enumerate(enc.layers):
        if keep is not None:
            h.retain_grad()
            keep.append(h)
        h = layer_forward(spec, l, lay, h, mask)
    return enc.norm(h) if enc.norm is not None else h


def reference(spec, enc, x0, g):
    """Every quantity gradflow reports, from autograd: loss, ||dL/dx_l||, every ||dL/dtheta||, ||dL/dy||,
    and the network Jacobian dy/dx_0 as an (n*d, n*d) matrix (row-major flattening, like gradflow)."""
    mask = causal_mask(spec.n) if spec.causal else None
    enc.zero_grad(set_to_none=True)
    x = x0.detach().clone().unsqueeze(0).requires_grad_(True)
    xs = []
    y = network(spec, enc, x, mask, xs)
    if spec.placement in ("post", "pre") and spec.residual_scale == 1.0:
        whole = enc(x, mask=mask)  # the unsplit module must give the same y
        assert torch.equal(whole, y), f"split forward differs from nn.TransformerEncoder by {(whole - y).abs().max()}"
    loss = (y * g.unsqueeze(0)).sum()
    loss.backward()
    ref = {"loss": loss.item(), "output_grad_norm": g.norm().item()}
    for l, xl in enumerate(xs):
        if isinstance(xl, tuple):  # two streams: the pair's gradient and each stream's
            ga, gd = xl[0].grad.norm().item(), xl[1].grad.norm().item()
            ref[f"layers.{l}.grad_norm"] = math.hypot(ga, gd)
            ref[f"layers.{l}.grad_norm_x_a"], ref[f"layers.{l}.grad_norm_x_d"] = ga, gd
        else:
            ref[f"layers.{l}.grad_norm"] = xl.grad.norm().item()
    if spec.placement == "resi-dual":
        ref["input_grad_norm"] = x.grad.norm().item()
    for name, p in enc.named_parameters():
        ref[f"param {name}"] = p.grad.norm().item()
    n, d = spec.n, spec.d
    if spec.placement == "resi-dual":  # dy/d[x_a,0 | x_d,0]: (n*d, n*2d), columns token*2d + stream*d + feature
        J = torch.autograd.functional.jacobian(
            lambda s: resi_dual_network(spec, enc, s[:, :d].unsqueeze(0), s[:, d:].unsqueeze(0), mask)[0],
            torch.cat([x0, x0], dim=1).detach())
        return ref, J.reshape(n * d, n * 2 * d)
    J = torch.autograd.functional.jacobian(lambda v: network(spec, enc, v.unsqueeze(0), mask)[0], x0.detach())
    return ref, J.reshape(n * d, n * d)


# --- gradflow ---------------------------------------------------------------------------------------------
_M64 = (1 << 64) - 1


def _splitmix64(state):
    """One SplitMix64 step: (new state, output), as src/core/rng.cpp."""
    state = (state + 0x9E3779B97F4A7C15) & _M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return state, z ^ (z >> 31)


def gradflow_random_normal(seed, stream, rows, cols):
    """gradflow's random_normal(seed, stream, rows, cols) (src/model/init.cpp, src/core/rng.cpp) re-implemented:
    the stream's state is SplitMix64 of seed ^ FNV-1a(stream); uniforms are the top 53 bits; normals Box-Muller
    (cos first, the sin value kept as the spare), filled row by row. Lets a test rebuild gradflow's random probes."""
    h = 0xcbf29ce484222325
    for c in stream.encode():
        h = ((h ^ c) * 0x100000001b3) & _M64
    _, state = _splitmix64((seed ^ h) & _M64)
    out, spare = [], None
    while len(out) < rows * cols:
        if spare is not None:
            out.append(spare)
            spare = None
            continue
        u1 = 0.0
        while u1 <= 0.0:
            state, z = _splitmix64(state)
            u1 = (z >> 11) * 2.0 ** -53
        state, z = _splitmix64(state)
        u2 = (z >> 11) * 2.0 ** -53
        r, t = math.sqrt(-2.0 * math.log(u1)), 2.0 * math.pi * u2
        spare = r * math.sin(t)
        out.append(r * math.cos(t))
    return np.array(out, dtype=np.float64).reshape(rows, cols)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return p


def gradflow_quantities(report):
    """The report's numbers under the names reference() uses."""
    got = {"loss": report["loss"], "output_grad_norm": report["output_grad_norm"]}
    for l, layer in enumerate(report["layers"]):
        got[f"layers.{l}.grad_norm"] = layer["grad_norm"]
        for k in ("grad_norm_x_a", "grad_norm_x_d"):  # two-stream schemes (resi-dual)
            if k in layer:
                got[f"layers.{l}.{k}"] = layer[k]
        for k, v in layer["param_grad_norms"].items():
            got[f"param layers.{l}.{k}"] = v
    if "input_grad_norm" in report.get("summary", {}):
        got["input_grad_norm"] = report["summary"]["input_grad_norm"]
    for k, v in report.get("head_param_grad_norms", {}).items():
        got[f"param {k}"] = v
    return got


def exactly_zero(spec, key):
    """Quantities whose exact value is 0, so both sides hold rounding only: with Q, K normalized (hybridnorm),
    the k-norm's bias β_k adds q_i·β_k/sqrt(e) to every score of query i alike, which the softmax cancels, so
    dL/dβ_k = 0 exactly."""
    return spec.placement.startswith("hybridnorm") and key.endswith("self_attn.k_norm.bias")


def run_configs(configs, check, prefix):
    """Runs check(gradflow, spec, i, tmp) for every configuration in a temporary folder; a crash of either side fails
    that configuration, not the script. Prints the count and exits 1 on any failure."""
    import sys  # noqa: PLC0415
    import tempfile  # noqa: PLC0415
    from preamble import gradflow_binary  # noqa: PLC0415
    gradflow = gradflow_binary()
    print(f"torch {torch.__version__}, numpy {np.__version__}; tolerance: relative error <= {REL_TOL:g}")
    failed = []
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        for i, spec in enumerate(configs):
            try:
                if check(gradflow, spec, i, tmp):
                    failed.append(spec.label())
            except Exception as e:  # a crash of either side is a failure of this configuration, not of the test
                print(f"FAIL [{i}] {spec.label()}: {type(e).__name__}: {e}")
                failed.append(spec.label())
    print(f"{len(configs) - len(failed)}/{len(configs)} configurations agree with PyTorch")
    for f in failed:
        print(f"  failed: {f}")
    sys.exit(1 if failed else 0)


def compare(label, ref, got, J_ref, J_got, zero=lambda key: False):
    """Prints one line per quantity; returns the number of failures (relative error > REL_TOL, or missing).
    A quantity `zero(key)` says is exactly 0 must be rounding on both sides: |value| <= ZERO_REL_TOL * the largest."""
    failures = 0
    scale = max(abs(v) for v in ref.values())
    for key, want in ref.items():
        if key not in got:
            print(f"  FAIL {key}: missing from gradflow's report")
            failures += 1
            continue
        if zero(key):
            ok = max(abs(want), abs(got[key])) <= ZERO_REL_TOL * scale
            failures += not ok
            print(f"  {'ok  ' if ok else 'FAIL'} {key:<40} torch {want:.3g}  gradflow {got[key]:.3g}  (exactly 0: "
                  f"both <= {ZERO_REL_TOL:g} * {scale:.3g})")
            continue
        # relative error; the floor only matters for an exactly-zero gradient (e.g. q, k biases when n = 1)
        rel = abs(got[key] - want) / max(abs(want), ZERO_REL_TOL * scale)
        ok = rel <= REL_TOL
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} {key:<40} torch {want:.17g}  gradflow {got[key]:.17g}  rel {rel:.2e}")
    extra = sorted(set(got) - set(ref))
    if extra:
        print(f"  FAIL gradflow reports quantities torch does not have: {extra}")
        failures += 1
    if J_got.shape != tuple(J_ref.shape):
        print(f"  FAIL Jacobian dy/dx_0: shape {J_got.shape} vs torch {tuple(J_ref.shape)}")
        return failures + 1
    rel = np.linalg.norm(J_got - J_ref.numpy()) / np.linalg.norm(J_ref.numpy())
    ok = rel <= REL_TOL
    print(f"  {'ok  ' if ok else 'FAIL'} {'Jacobian dy/dx_0 ' + str(J_got.shape):<40} ||J||_F {np.linalg.norm(J_got):.6g}"
          f"  rel Frobenius error {rel:.2e}")
    print(f"{'ok  ' if failures + (not ok) == 0 else 'FAIL'} {label}")
    return failures + (not ok)
