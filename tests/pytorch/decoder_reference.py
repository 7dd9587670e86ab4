"""decoder_reference.py — the blocks today's decoders are made of, in float64 PyTorch, written from their published
equations (not from any library's modules: `transformers` is not a Debian package), with gradflow's parameter names:

  attention   [Q | K | V] = x W_inᵀ (+ b_in), widths h·e, K·e, K·e (grouped-query: query head j reads key/value head
              j // (h/K), Hugging Face's repeat_kv); QK-norm over the whole q and k (OLMo-2) or per head (Qwen3); RoPE
              on q and k (rotate-half: x1·cos − x2·sin, x2·cos + x1·sin on the first r features, θ_i = theta^(−2i/r));
              S = q kᵀ · scale (scale = S^(−1/2), default e^(−1/2)); soft-cap S ← C·tanh(S/C) (Gemma-2); + mask;
              softmax; O W_outᵀ (+ b_out) with W_out (d, h·e)
  mlp         linear2(act(linear1 x))
  swiglu      linear2(silu(linear1 x) * linear3 x)             (Shazeer 2020; Llama: gate_proj, up_proj, down_proj)
  geglu       linear2(gelu_tanh(linear1 x) * linear3 x)        (Gemma)
  rmsnorm     x / sqrt(mean(x^2) + eps) * w                    (Zhang & Sennrich 2019); * (1 + w) with norm_offset (Gemma)
  parallel    y = x + A(N1(x)) + F(N2(x)), --shared-norm: N2 = N1 (GPT-J, GPT-NeoX/Pythia, PaLM); a final norm
  pre         h = x + A(N1(x)); y = h + F(N2(h)); a final norm
  reorder     h = x + N1(A(x)); y = h + N2(F(h)); a final norm (OLMo-2)
  sandwich    h = x + N3(A(N1(x))); y = h + N4(F(N2(h))); a final norm (Gemma-2, Peri-LN)
--bias off drops every linear layer's bias; --qkv-bias keeps in_proj_bias (Qwen2). The stack's state_dict names are
gradflow's (layers.{l}.self_attn.in_proj_weight, layers.{l}.linear3.weight, norm.weight, ...), so it is written as
the torch-encoder checkpoint gradflow reads with the same options."""

import torch
from torch import nn
from torch.nn import functional as F


class Spec:
    """One configuration, in gradflow's option names."""

    def __init__(self, placement="pre", layers=2, d=8, heads=2, d_ff=12, n=4, ffn="mlp", activation="relu",
                 norm="layernorm", bias=True, qkv_bias=False, shared_norm=False, causal=False, kv_heads=None,
                 head_dim=None, rope=None, rope_theta=10000.0, qk_norm="none", softcap=0.0, attn_scale=None,
                 norm_offset=False):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def label(self):
        b = "" if self.bias else (" qkv-bias" if self.qkv_bias else " no-bias")
        a = (f"{' K=' + str(self.kv_heads) if self.kv_heads else ''}{' e=' + str(self.head_dim) if self.head_dim else ''}"
             f"{' rope ' + str(self.rope) if self.rope else ''}{' qk-norm ' + self.qk_norm if self.qk_norm != 'none' else ''}"
             f"{' cap ' + str(self.softcap) if self.softcap else ''}{' S ' + str(self.attn_scale) if self.attn_scale else ''}"
             f"{' norm-offset' if self.norm_offset else ''}")
        return (f"{self.placement}{' shared-norm' if self.shared_norm else ''} {self.ffn}"
                f"{'/' + self.activation if self.ffn == 'mlp' else ''} {self.norm}{b}{' causal' if self.causal else ''}"
                f" L={self.layers} d={self.d} h={self.heads} d_ff={self.d_ff} n={self.n}{a}")

    def gradflow_options(self):
        o = ["--placement", self.placement, "--heads", str(self.heads), "--ffn", self.ffn, "--norm", self.norm]
        if self.ffn == "mlp":
            o += ["--activation", self.activation]
        if not self.bias:
            o += ["--bias", "off"]
        if self.qkv_bias:
            o.append("--qkv-bias")
        if self.shared_norm:
            o.append("--shared-norm")
        if self.causal:
            o.append("--causal")
        if self.kv_heads:
            o += ["--kv-heads", str(self.kv_heads)]
        if self.head_dim:
            o += ["--head-dim", str(self.head_dim)]
        if self.rope:
            o += ["--rope", "--rotary-fraction", repr(self.rope), "--rope-theta", repr(self.rope_theta)]
        if self.qk_norm != "none":
            o += ["--qk-norm", self.qk_norm]
        if self.softcap:
            o += ["--attn-softcap", repr(self.softcap)]
        if self.attn_scale:
            o += ["--attn-scale", repr(self.attn_scale)]
        if self.norm_offset:
            o.append("--norm-offset")
        return o

    def e(self):
        return self.head_dim or self.d // self.heads

    def K(self):
        return self.kv_heads or self.heads


class Norm(nn.Module):
    def __init__(self, d, kind, offset=False, eps=1e-5):
        super().__init__()
        self.kind, self.eps, self.offset = kind, eps, offset
        self.weight = nn.Parameter(torch.ones(d, dtype=torch.float64))
        if kind == "layernorm":
            self.bias = nn.Parameter(torch.zeros(d, dtype=torch.float64))

    def forward(self, x):
        gamma = 1.0 + self.weight if self.offset else self.weight  # Gemma's RMSNorm: x̂ · (1 + w)
        if self.kind == "layernorm":
            mu = x.mean(-1, keepdim=True)
            var = ((x - mu) ** 2).mean(-1, keepdim=True)
            return (x - mu) / torch.sqrt(var + self.eps) * gamma + self.bias
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + self.eps) * gamma


def _param(*shape):
    return nn.Parameter(torch.zeros(*shape, dtype=torch.float64))


def rotate(x, rotary_dim, theta):
    """RoPE on (heads, n, e): the first rotary_dim features of every head, rotate-half pairing, positions 0..n-1."""
    n, r = x.shape[1], rotary_dim
    inv_freq = theta ** (-torch.arange(0, r, 2, dtype=torch.float64) / r)
    ang = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq[None, :]  # (n, r/2)
    cos, sin = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)  # (a no-op in float64; a cast model's dtype)
    x1, x2, rest = x[..., :r // 2], x[..., r // 2:r], x[..., r:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], dim=-1)


class Attention(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        d, e, H, K = spec.d, spec.e(), spec.heads, spec.K()
        w = (H + 2 * K) * e
        self.in_proj_weight = _param(w, d)
        if spec.bias or spec.qkv_bias:
            self.in_proj_bias = _param(w)
        else:
            self.in_proj_bias = None
        self.out_proj = nn.Linear(H * e, d, bias=spec.bias, dtype=torch.float64)
        if spec.qk_norm == "head":
            self.q_norm, self.k_norm = Norm(e, spec.norm, spec.norm_offset), Norm(e, spec.norm, spec.norm_offset)
        elif spec.qk_norm == "proj":
            self.q_norm = Norm(H * e, spec.norm, spec.norm_offset)
            self.k_norm = Norm(K * e, spec.norm, spec.norm_offset)

    def forward(self, x, mask):
        s = self.spec
        n = x.shape[0]
        e, H, K = s.e(), s.heads, s.K()
        q, k, v = F.linear(x, self.in_proj_weight, self.in_proj_bias).split([H * e, K * e, K * e], dim=-1)
        if s.qk_norm == "proj":  # OLMo-2: over the whole projection, before the head split
            q, k = self.q_norm(q), self.k_norm(k)
        q, k, v = q.reshape(n, H, e).transpose(0, 1), k.reshape(n, K, e).transpose(0, 1), v.reshape(n, K, e).transpose(0, 1)
        if s.qk_norm == "head":  # Qwen3: per head
            q, k = self.q_norm(q), self.k_norm(k)
        if s.rope:
            r = int(e * s.rope)
            q, k = rotate(q, r, s.rope_theta), rotate(k, r, s.rope_theta)
        k, v = k.repeat_interleave(H // K, dim=0), v.repeat_interleave(H // K, dim=0)  # repeat_kv
        scale = (s.attn_scale or e) ** -0.5
        S = q @ k.transpose(-1, -2) * scale
        if s.softcap:
            S = s.softcap * torch.tanh(S / s.softcap)
        if mask is not None:
            S = S + mask
        O = (torch.softmax(S, dim=-1) @ v).transpose(0, 1).reshape(n, H * e)
        return self.out_proj(O)


class Block(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        d, ff = spec.d, spec.d_ff
        self.self_attn = Attention(spec)
        self.linear1 = nn.Linear(d, ff, bias=spec.bias, dtype=torch.float64)
        self.linear2 = nn.Linear(ff, d, bias=spec.bias, dtype=torch.float64)
        if spec.ffn != "mlp":
            self.linear3 = nn.Linear(d, ff, bias=spec.bias, dtype=torch.float64)
        self.norm1 = Norm(d, spec.norm, spec.norm_offset)
        if not spec.shared_norm:
            self.norm2 = Norm(d, spec.norm, spec.norm_offset)
        if spec.placement == "sandwich":  # Gemma-2: norms before and after each branch
            self.norm3, self.norm4 = Norm(d, spec.norm, spec.norm_offset), Norm(d, spec.norm, spec.norm_offset)

    def ffn(self, x):
        s = self.spec
        if s.ffn == "swiglu":
            return self.linear2(F.silu(self.linear1(x)) * self.linear3(x))
        if s.ffn == "geglu":
            return self.linear2(F.gelu(self.linear1(x), approximate="tanh") * self.linear3(x))
        act = {"relu": F.relu, "gelu": F.gelu, "gelu-tanh": lambda z: F.gelu(z, approximate="tanh"), "silu": F.silu}
        return self.linear2(act[s.activation](self.linear1(x)))

    def forward(self, x, mask):
        if self.spec.placement == "parallel":
            n2 = self.norm1 if self.spec.shared_norm else self.norm2
            return x + self.self_attn(self.norm1(x), mask) + self.ffn(n2(x))
        if self.spec.placement == "pre":
            h = x + self.self_attn(self.norm1(x), mask)
            return h + self.ffn(self.norm2(h))
        if self.spec.placement == "reorder":  # OLMo-2: the norm on each branch's output
            h = x + self.norm1(self.self_attn(x, mask))
            return h + self.norm2(self.ffn(h))
        if self.spec.placement == "sandwich":  # Gemma-2 (Peri-LN)
            h = x + self.norm3(self.self_attn(self.norm1(x), mask))
            return h + self.norm4(self.ffn(self.norm2(h)))
        raise ValueError(f"decoder_reference: placement {self.spec.placement} is not written here")


class Stack(nn.Module):
    """L blocks and the final norm; x (n, d) -> y (n, d)."""

    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        self.layers = nn.ModuleList(Block(spec) for _ in range(spec.layers))
        self.norm = Norm(spec.d, spec.norm, spec.norm_offset)

    def forward(self, x, keep=None):
        n = x.shape[0]
        mask = torch.triu(torch.full((n, n), float("-inf"), dtype=x.dtype), 1) if self.spec.causal else None
        for lay in self.layers:
            if keep is not None:
                x.retain_grad()
                keep.append(x)
            x = lay(x, mask)
        return self.norm(x)


def randomize(stack, seed):
    """Every parameter drawn as torch_reference.randomize draws an encoder's (norm gains around 1, biases small,
    matrices ~ 1/sqrt(fan_in))."""
    import torch_reference  # noqa: PLC0415
    torch_reference.randomize(stack, seed)


def reference(stack, x0, g):
    """loss = sum(g * y), every ||dL/dx_l||, every ||dL/dtheta||, ||g||, and dy/dx_0 as (n*d, n*d)."""
    stack.zero_grad(set_to_none=True)
    x = x0.detach().clone().requires_grad_(True)
    xs = []
    y = stack(x, xs)
    loss = (y * g).sum()
    loss.backward()
    ref = {"loss": loss.item(), "output_grad_norm": g.norm().item()}
    for l, xl in enumerate(xs):
        ref[f"layers.{l}.grad_norm"] = xl.grad.norm().item()
    for name, p in stack.named_parameters():
        ref[f"param {name}"] = p.grad.norm().item()
    n, d = x0.shape
    J = torch.autograd.functional.jacobian(lambda v: stack(v), x0.detach())
    return ref, J.reshape(n * d, n * d)
