"""hf_decoder_reference.py — Hugging Face decoder layers (Llama, Mistral, Qwen2, Qwen3, OLMo-2, Gemma-2, GPT-NeoX)
in plain PyTorch (float64), written from the equations transformers' modeling code computes (modeling_llama.py,
modeling_mistral.py, modeling_qwen2.py, modeling_qwen3.py, modeling_olmo2.py, modeling_gemma2.py,
modeling_gpt_neox.py), with Hugging Face's tensor names and layouts (no `transformers` package needed, and
independent of decoder_reference.py, which is written in gradflow's names); and writers of checkpoints in their
layout (config.json, model.safetensors or a sharded index, the buffers real files carry). Used by
test_hf_decoder_checkpoints.py.

Llama / Mistral / Qwen2 / Qwen3 (LlamaDecoderLayer):   h = x + Attn(input_layernorm(x));
                                                        y = h + MLP(post_attention_layernorm(h))
OLMo-2 (Olmo2DecoderLayer, no input norms):            h = x + post_attention_layernorm(Attn(x));
                                                        y = h + post_feedforward_layernorm(MLP(h))
Gemma-2 (Gemma2DecoderLayer):   h = x + post_attention_layernorm(Attn(input_layernorm(x)));
                                y = h + post_feedforward_layernorm(MLP(pre_feedforward_layernorm(h)))
GPT-NeoX (GPTNeoXLayer):   use_parallel_residual: y = x + Attn(input_layernorm(x)) + MLP(post_attention_layernorm(x))
                           else:  h = x + Attn(input_layernorm(x)); y = h + MLP(post_attention_layernorm(h))
then model.norm / gpt_neox.final_layer_norm after the last layer.

  RMSNorm        x / sqrt(mean(x^2) + eps) * w;  Gemma: * (1 + w)
  Attn           q, k, v = q_proj(x), k_proj(x), v_proj(x)  (nn.Linear, weight (out, in); biases: Qwen2's q, k, v only)
                 OLMo-2: q_norm over the whole q (width h*e), k_norm over the whole k (K*e), before the head split;
                 Qwen3: q_norm, k_norm per head (width e) after the split; both before RoPE;
                 RoPE rotate-half: x*cos + rotate_half(x)*sin, rotate_half(x) = cat(-x2, x1), cos/sin of
                 cat(freqs, freqs), freqs = position * inv_freq, inv_freq = 1/theta^(arange(0, r, 2)/r), positions
                 0..n-1 (GPT-NeoX: on the first r = int(e*rotary_pct) features of each head);
                 repeat_kv: query head j reads key/value head j // (h/K);
                 scores = q kᵀ * scaling (head_dim^-1/2; Gemma-2 query_pre_attn_scalar^-1/2); Gemma-2:
                 C*tanh(scores/C) (attn_logit_softcapping) before the causal mask; softmax; o_proj(heads concatenated)
                 GPT-NeoX: one fused query_key_value (3*h*e, d) whose output is viewed as (n, h, 3*e): head j's rows
                 are [q_j; k_j; v_j]; attention.dense; every linear with a bias.
  MLP            down_proj(act(gate_proj(x)) * up_proj(x)), act silu (Gemma-2: gelu, tanh approximation);
                 GPT-NeoX: dense_4h_to_h(gelu(dense_h_to_4h(x))) with biases.
  embeddings     x_0 = embed_tokens[ids] (Gemma-2: * sqrt(hidden_size)); GPT-NeoX: embed_in[ids].
  LM head        logits = y W_headᵀ, W_head = lm_head / embed_out, or embed_tokens when tie_word_embeddings;
                 Gemma-2: logits = C*tanh(logits/C) (final_logit_softcapping); loss = mean cross-entropy of
                 logits[:-1] against ids[1:].

Options of a Decoder used by the test: `hf_float32 = True` computes what Hugging Face computes even for a float64
model (RMSNorm in float32: `hidden_states.to(torch.float32)`; RoPE's inv_freq, angles, cos and sin in float32, cast
to the model's dtype; softmax(..., dtype=torch.float32)); `mutation = NAME` computes one plausible loader mistake
(MUTATIONS), so a test can show that the correct numbers are far from it.
"""
import json
import math
import os

import torch

import torch_reference as tr

FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "olmo2", "gemma2", "gpt_neox")

# loader mistakes the test must be able to tell from the right numbers
MUTATIONS = {
    "interleaved_rope": "RoPE on interleaved pairs (x0, x1), (x2, x3), ... instead of rotate-half (i, i + r/2)",
    "gqa_modulo": "grouped-query heads: query head j reads kv head j % K instead of j // (h/K)",
    "gemma_no_offset": "Gemma's RMSNorm scale w instead of 1 + w",
    "neox_consecutive_qkv": "GPT-NeoX's fused query_key_value read as [all q; all k; all v] instead of per head "
                            "[q_j|k_j|v_j]",
    "residual_swap": "GPT-NeoX's use_parallel_residual ignored (parallel computed as sequential and vice versa)",
    "qwen2_no_bias": "Qwen2's q, k, v biases dropped",
    "gemma_no_embed_scale": "Gemma's embeddings not multiplied by sqrt(hidden_size)",
    "gemma_no_final_softcap": "Gemma-2's final_logit_softcapping ignored",
}

_ARCHITECTURES = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
                  "qwen3": "Qwen3ForCausalLM", "olmo2": "Olmo2ForCausalLM", "gemma2": "Gemma2ForCausalLM",
                  "gpt_neox": "GPTNeoXForCausalLM"}
_ROPE_THETA = {"llama": 10000.0, "mistral": 10000.0, "qwen2": 1e6, "qwen3": 1e6, "olmo2": 5e5, "gemma2": 10000.0,
               "gpt_neox": 10000.0}
_EPS = {"llama": 1e-5, "mistral": 1e-5, "qwen2": 1e-6, "qwen3": 1e-6, "olmo2": 1e-6, "gemma2": 1e-6, "gpt_neox": 1e-5}
# transformers' config classes' defaults of tie_word_embeddings (what a config.json without the key means)
_TIED_DEFAULT = {"llama": False, "mistral": False, "qwen2": False, "qwen3": False, "olmo2": False, "gemma2": True,
                 "gpt_neox": False}
_TORCH_DTYPE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64"}


# --- the pieces, as Hugging Face writes them ------------------------------------------------------------------
def rms_norm(x, w, eps, offset=False, hf_float32=False):
    """LlamaRMSNorm (Qwen2/3, Mistral, OLMo-2 alike): x / sqrt(mean(x^2) + eps) * w; Gemma2RMSNorm: * (1 + w).
    hf_float32: the normalization in float32 as HF's code does for any input dtype (`.to(torch.float32)`;
    Gemma: `self._norm(x.float()) * (1.0 + self.weight.float())`, then `.type_as(x)`)."""
    if hf_float32:
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
        if offset:
            return (h * (1.0 + w.float())).to(x.dtype)
        return w * h.to(x.dtype)
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return h * (1.0 + w) if offset else h * w


def layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def rope_tables(n, dim, theta, dtype=torch.float64, hf_float32=False):
    """LlamaRotaryEmbedding / GPTNeoXRotaryEmbedding for positions 0..n-1: cos, sin of shape (n, dim), each
    cat(freqs, freqs) with freqs[t, i] = t * inv_freq[i], inv_freq = 1 / theta^(arange(0, dim, 2) / dim).
    hf_float32: inv_freq, the angles and cos/sin in float32 (HF's code), then cast to `dtype`."""
    if hf_float32:
        inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        freqs = torch.arange(n, dtype=torch.int64).float()[:, None] @ inv_freq[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    freqs = torch.arange(n, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x):
    x1, x2 = x[..., :x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x, cos, sin, interleaved=False):
    """x (heads, n, dim): x*cos + rotate_half(x)*sin (apply_rotary_pos_emb). interleaved (a loader's mistake: the
    pairing of Meta's original and GPT-J code): pairs (2i, 2i+1) rotated by angle i."""
    if not interleaved:
        return x * cos + rotate_half(x) * sin
    half = x.shape[-1] // 2
    c, s = cos[..., :half], sin[..., :half]
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * c - b * s, b * c + a * s], dim=-1).flatten(-2)


def repeat_kv(t, n_rep, modulo=False):
    """(K, n, e) -> (K*n_rep, n, e), transformers' repeat_kv: t[:, None].expand(K, n_rep, n, e).reshape(...), so
    query head j reads kv head j // n_rep. modulo (a loader's mistake): head j reads kv head j % K."""
    if n_rep == 1:
        return t
    if modulo:
        return t.repeat(n_rep, 1, 1)
    K, n, e = t.shape
    return t[:, None, :, :].expand(K, n_rep, n, e).reshape(K * n_rep, n, e)


def neox_split(qkv, heads, e, consecutive=False):
    """GPTNeoXAttention: the fused projection's output (n, 3*h*e) viewed as (n, h, 3*e); q, k, v = the thirds of each
    head's 3*e features, each returned as (h, n, e). consecutive (a loader's mistake): [all q | all k | all v]."""
    n = qkv.shape[0]
    if consecutive:
        q, k, v = qkv.split(heads * e, dim=-1)
        return tuple(t.reshape(n, heads, e).transpose(0, 1) for t in (q, k, v))
    t = qkv.view(n, heads, 3 * e).transpose(0, 1)
    return t[..., :e], t[..., e:2 * e], t[..., 2 * e:]


def causal_softmax(scores, hf_float32=False):
    """The causal mask (masked scores set to the dtype's most negative value, as HF's mask does) and the softmax
    (hf_float32: softmax(..., dtype=torch.float32).to(dtype), eager_attention_forward)."""
    n = scores.shape[-1]
    keep = torch.tril(torch.ones(n, n, dtype=torch.bool))
    scores = torch.where(keep, scores, torch.full([], torch.finfo(scores.dtype).min, dtype=scores.dtype))
    if hf_float32:
        return torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)
    return torch.softmax(scores, dim=-1)


# --- the model ----------------------------------------------------------------------------------------------------
class Decoder:
    """One decoder stack in Hugging Face's names (full names, prefixes included): `p` holds what gradflow analyzes
    (the layers and the final norm), `extra` the rest of the file (embeddings, untied head, buffers), and
    `extra_dtype` the buffers' own file dtypes (U8 causal mask, F32 scalars and inv_freq)."""

    def __init__(self, family, layers, d, heads, d_ff, kv_heads=None, head_dim=None, vocab=40, tied=None,
                 rope_theta=None, eps=None, rotary_pct=0.25, parallel=True, neox_rope_keys="rotary_emb_base",
                 query_pre_attn_scalar=None, attn_softcap=50.0, final_softcap=30.0, sliding_window=None,
                 inv_freq_buffers=False, head_dim_key=None, max_positions=16, seed=0, init=True):
        assert family in FAMILIES, family
        self.family, self.layers, self.d, self.heads, self.d_ff = family, layers, d, heads, d_ff
        self.kv_heads = kv_heads or heads
        self.e = head_dim or d // heads
        if family in ("gpt_neox", "olmo2"):  # their attention takes head_dim = hidden_size // heads
            assert self.e * heads == d, f"{family}: head_dim must be hidden_size / heads"
        if family == "gpt_neox":
            assert self.kv_heads == heads, "GPT-NeoX has no grouped-query attention"
        self.vocab = vocab
        self.tied = _TIED_DEFAULT[family] if tied is None else tied
        self.rope_theta = _ROPE_THETA[family] if rope_theta is None else rope_theta
        self.eps = _EPS[family] if eps is None else eps
        self.rotary_pct = rotary_pct if family == "gpt_neox" else 1.0
        self.parallel = parallel
        self.neox_rope_keys = neox_rope_keys  # "rotary_emb_base" (rotary_pct) or "rope_theta" (partial_rotary_factor)
        self.query_pre_attn_scalar = query_pre_attn_scalar or self.e
        self.attn_softcap, self.final_softcap = attn_softcap, final_softcap
        self.sliding_window = sliding_window
        self.inv_freq_buffers = inv_freq_buffers
        if head_dim_key is None:  # config.json's head_dim: where it is not hidden/heads, and always for Qwen3, Gemma-2
            head_dim_key = self.e * heads != d or family in ("qwen3", "gemma2")
        self.head_dim_key = head_dim_key
        self.max_positions = max_positions
        self.hf_float32 = False
        self.mutation = None
        self.p, self.extra, self.extra_dtype = {}, {}, {}
        if init:
            self._init(seed)

    # -- construction
    def prefix(self):
        return "gpt_neox." if self.family == "gpt_neox" else "model."

    def rotary_dim(self):
        return int(self.e * self.rotary_pct)

    def _init(self, seed):
        g = torch.Generator().manual_seed(seed)
        r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
        D, F, H, K, e, V = self.d, self.d_ff, self.heads, self.kv_heads, self.e, self.vocab
        lin = lambda o, i: r(o, i) / math.sqrt(i)
        gain = (lambda m: 0.3 * r(m)) if self.family == "gemma2" else (lambda m: 1.0 + 0.3 * r(m))  # Gemma: 1 + w
        P, E = self.p, self.extra
        if self.family == "gpt_neox":
            for i in range(self.layers):
                s = f"gpt_neox.layers.{i}."
                for nm in ("input_layernorm", "post_attention_layernorm"):
                    P[s + nm + ".weight"], P[s + nm + ".bias"] = 1.0 + 0.3 * r(D), 0.2 * r(D)
                P[s + "attention.query_key_value.weight"] = lin(3 * H * e, D)
                P[s + "attention.query_key_value.bias"] = 0.3 * r(3 * H * e)
                P[s + "attention.dense.weight"], P[s + "attention.dense.bias"] = lin(D, H * e), 0.1 * r(D)
                P[s + "mlp.dense_h_to_4h.weight"], P[s + "mlp.dense_h_to_4h.bias"] = lin(F, D), 0.1 * r(F)
                P[s + "mlp.dense_4h_to_h.weight"], P[s + "mlp.dense_4h_to_h.bias"] = lin(D, F), 0.1 * r(D)
                # the buffers Pythia's files carry (GPTNeoXAttention's registered buffers)
                M = self.max_positions
                E[s + "attention.bias"] = torch.tril(torch.ones(M, M, dtype=torch.float64)).view(1, 1, M, M)
                E[s + "attention.masked_bias"] = torch.tensor(-1e9, dtype=torch.float64)
                rd = self.rotary_dim()
                E[s + "attention.rotary_emb.inv_freq"] = self.inv_freq(rd)
                self.extra_dtype.update({s + "attention.bias": "U8", s + "attention.masked_bias": "F32",
                                         s + "attention.rotary_emb.inv_freq": "F32"})
            P["gpt_neox.final_layer_norm.weight"], P["gpt_neox.final_layer_norm.bias"] = 1.0 + 0.3 * r(D), 0.2 * r(D)
            E["gpt_neox.embed_in.weight"] = r(V, D)
            if not self.tied:
                E["embed_out.weight"] = r(V, D)
            return
        for i in range(self.layers):
            s = f"model.layers.{i}."
            P[s + "self_attn.q_proj.weight"] = lin(H * e, D)
            P[s + "self_attn.k_proj.weight"] = lin(K * e, D)
            P[s + "self_attn.v_proj.weight"] = lin(K * e, D)
            if self.family == "qwen2":
                for m, w in (("q", H), ("k", K), ("v", K)):
                    P[s + f"self_attn.{m}_proj.bias"] = 0.5 * r(w * e)
            P[s + "self_attn.o_proj.weight"] = lin(D, H * e)
            if self.family == "qwen3":
                P[s + "self_attn.q_norm.weight"], P[s + "self_attn.k_norm.weight"] = gain(e), gain(e)
            if self.family == "olmo2":
                P[s + "self_attn.q_norm.weight"], P[s + "self_attn.k_norm.weight"] = gain(H * e), gain(K * e)
            P[s + "mlp.gate_proj.weight"] = lin(F, D)
            P[s + "mlp.up_proj.weight"] = lin(F, D)
            P[s + "mlp.down_proj.weight"] = lin(D, F)
            for nm in self.norm_names():
                P[s + nm + ".weight"] = gain(D)
            if self.inv_freq_buffers:  # older Llama checkpoints carry the rotary buffer per layer
                E[s + "self_attn.rotary_emb.inv_freq"] = self.inv_freq(e)
                self.extra_dtype[s + "self_attn.rotary_emb.inv_freq"] = "F32"
        P["model.norm.weight"] = gain(D)
        E["model.embed_tokens.weight"] = r(V, D)
        if not self.tied:
            E["lm_head.weight"] = r(V, D)

    def inv_freq(self, dim):
        return 1.0 / (self.rope_theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))

    def norm_names(self):
        """The decoder layer's RMSNorms, in the order gradflow numbers them norm1, norm2, (norm3, norm4)."""
        if self.family == "olmo2":
            return ("post_attention_layernorm", "post_feedforward_layernorm")
        if self.family == "gemma2":
            return ("input_layernorm", "pre_feedforward_layernorm", "post_attention_layernorm",
                    "post_feedforward_layernorm")
        return ("input_layernorm", "post_attention_layernorm")

    # -- the forward
    def _rms(self, x, name):
        offset = self.family == "gemma2" and self.mutation != "gemma_no_offset"
        return rms_norm(x, self.p[name], self.eps, offset=offset, hf_float32=self.hf_float32)

    def _rope(self, q, k, dim):
        cos, sin = rope_tables(q.shape[1], dim, self.rope_theta, q.dtype, self.hf_float32)
        inter = self.mutation == "interleaved_rope"
        return apply_rope(q, cos, sin, inter), apply_rope(k, cos, sin, inter)

    def _attention(self, i, x):
        P, s = self.p, f"model.layers.{i}.self_attn."
        n, H, K, e = x.shape[0], self.heads, self.kv_heads, self.e

        def proj(m):
            out = x @ P[s + f"{m}_proj.weight"].T
            if s + f"{m}_proj.bias" in P and self.mutation != "qwen2_no_bias":
                out = out + P[s + f"{m}_proj.bias"]
            return out

        q, k, v = proj("q"), proj("k"), proj("v")
        if self.family == "olmo2":  # Olmo2Attention: q_norm(q_proj(x)), k_norm(k_proj(x)) over the full widths
            q, k = self._rms(q, s + "q_norm.weight"), self._rms(k, s + "k_norm.weight")
        q = q.view(n, H, e).transpose(0, 1)
        k = k.view(n, K, e).transpose(0, 1)
        v = v.view(n, K, e).transpose(0, 1)
        if self.family == "qwen3":  # Qwen3Attention: q_norm, k_norm on (.., head_dim), before RoPE
            q, k = self._rms(q, s + "q_norm.weight"), self._rms(k, s + "k_norm.weight")
        q, k = self._rope(q, k, e)
        modulo = self.mutation == "gqa_modulo"
        k, v = repeat_kv(k, H // K, modulo), repeat_kv(v, H // K, modulo)
        scores = q @ k.transpose(-1, -2) * (self.query_pre_attn_scalar if self.family == "gemma2" else e) ** -0.5
        if self.family == "gemma2" and self.attn_softcap:
            scores = torch.tanh(scores / self.attn_softcap) * self.attn_softcap
        o = (causal_softmax(scores, self.hf_float32) @ v).transpose(0, 1).reshape(n, H * e)
        return o @ P[s + "o_proj.weight"].T

    def _mlp(self, i, x):
        P, s = self.p, f"model.layers.{i}.mlp."
        gate = x @ P[s + "gate_proj.weight"].T
        act = (lambda z: torch.nn.functional.gelu(z, approximate="tanh")) if self.family == "gemma2" \
            else torch.nn.functional.silu
        return (act(gate) * (x @ P[s + "up_proj.weight"].T)) @ P[s + "down_proj.weight"].T

    def _neox_attention(self, i, x):
        P, s = self.p, f"gpt_neox.layers.{i}.attention."
        n, H, e = x.shape[0], self.heads, self.e
        qkv = x @ P[s + "query_key_value.weight"].T + P[s + "query_key_value.bias"]
        q, k, v = neox_split(qkv, H, e, consecutive=self.mutation == "neox_consecutive_qkv")
        r = self.rotary_dim()
        qr, kr = self._rope(q[..., :r], k[..., :r], r)
        q, k = torch.cat([qr, q[..., r:]], dim=-1), torch.cat([kr, k[..., r:]], dim=-1)
        scores = q @ k.transpose(-1, -2) * e ** -0.5
        o = (causal_softmax(scores, self.hf_float32) @ v).transpose(0, 1).reshape(n, H * e)
        return o @ P[s + "dense.weight"].T + P[s + "dense.bias"]

    def _neox_mlp(self, i, x):
        P, s = self.p, f"gpt_neox.layers.{i}.mlp."
        h = torch.nn.functional.gelu(x @ P[s + "dense_h_to_4h.weight"].T + P[s + "dense_h_to_4h.bias"])
        return h @ P[s + "dense_4h_to_h.weight"].T + P[s + "dense_4h_to_h.bias"]

    def layer(self, i, x):
        P = self.p
        if self.family == "gpt_neox":
            s = f"gpt_neox.layers.{i}."
            ln = lambda t, nm: layer_norm(t, P[s + nm + ".weight"], P[s + nm + ".bias"], self.eps)
            a = self._neox_attention(i, ln(x, "input_layernorm"))
            if self.parallel != (self.mutation == "residual_swap"):
                return x + a + self._neox_mlp(i, ln(x, "post_attention_layernorm"))
            h = x + a
            return h + self._neox_mlp(i, ln(h, "post_attention_layernorm"))
        s = f"model.layers.{i}."
        if self.family == "olmo2":
            h = x + self._rms(self._attention(i, x), s + "post_attention_layernorm.weight")
            return h + self._rms(self._mlp(i, h), s + "post_feedforward_layernorm.weight")
        if self.family == "gemma2":
            h = x + self._rms(self._attention(i, self._rms(x, s + "input_layernorm.weight")),
                              s + "post_attention_layernorm.weight")
            return h + self._rms(self._mlp(i, self._rms(h, s + "pre_feedforward_layernorm.weight")),
                                 s + "post_feedforward_layernorm.weight")
        h = x + self._attention(i, self._rms(x, s + "input_layernorm.weight"))
        return h + self._mlp(i, self._rms(h, s + "post_attention_layernorm.weight"))

    def final(self, x):
        if self.family == "gpt_neox":
            return layer_norm(x, self.p["gpt_neox.final_layer_norm.weight"], self.p["gpt_neox.final_layer_norm.bias"],
                              self.eps)
        return self._rms(x, "model.norm.weight")

    def embed_weight(self):
        return self.extra["gpt_neox.embed_in.weight" if self.family == "gpt_neox" else "model.embed_tokens.weight"]

    def head_weight(self):
        if self.tied:
            return self.embed_weight()
        return self.extra["embed_out.weight" if self.family == "gpt_neox" else "lm_head.weight"]

    def embed(self, ids):
        """x_0: the embedding rows of `ids` (Gemma2Model: times sqrt(hidden_size), here in float64)."""
        x = self.embed_weight()[torch.tensor(ids)]
        return x * math.sqrt(self.d) if self.family == "gemma2" and self.mutation != "gemma_no_embed_scale" else x

    def lm_loss(self, ids):
        """*ForCausalLM's loss on y: logits = y W_headᵀ (Gemma-2: final soft-cap), mean cross-entropy of
        logits[:-1] against ids[1:]."""
        W = self.head_weight()

        def loss(y):
            logits = y @ W.T
            if self.family == "gemma2" and self.final_softcap and self.mutation != "gemma_no_final_softcap":
                logits = torch.tanh(logits / self.final_softcap) * self.final_softcap
            return torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]))
        return loss

    # -- what gradflow names
    def gradflow_sources(self, i):
        """gradflow's parameter name (without layers.{i}.) -> the HF tensors behind it (full names)."""
        if self.family == "gpt_neox":
            s = f"gpt_neox.layers.{i}."
            out = {"self_attn.in_proj_weight": [s + "attention.query_key_value.weight"],
                   "self_attn.in_proj_bias": [s + "attention.query_key_value.bias"]}
            for g, h in (("self_attn.out_proj", "attention.dense"), ("linear1", "mlp.dense_h_to_4h"),
                         ("linear2", "mlp.dense_4h_to_h"), ("norm1", "input_layernorm"),
                         ("norm2", "post_attention_layernorm")):
                out[g + ".weight"], out[g + ".bias"] = [s + h + ".weight"], [s + h + ".bias"]
            return out
        s = f"model.layers.{i}."
        out = {"self_attn.in_proj_weight": [s + f"self_attn.{m}_proj.weight" for m in "qkv"]}
        if self.family == "qwen2":
            out["self_attn.in_proj_bias"] = [s + f"self_attn.{m}_proj.bias" for m in "qkv"]
        out["self_attn.out_proj.weight"] = [s + "self_attn.o_proj.weight"]
        out["linear1.weight"] = [s + "mlp.gate_proj.weight"]
        out["linear2.weight"] = [s + "mlp.down_proj.weight"]
        out["linear3.weight"] = [s + "mlp.up_proj.weight"]
        if self.family in ("qwen3", "olmo2"):
            out["self_attn.q_norm.weight"] = [s + "self_attn.q_norm.weight"]
            out["self_attn.k_norm.weight"] = [s + "self_attn.k_norm.weight"]
        for k, nm in enumerate(self.norm_names()):
            out[f"norm{k + 1}.weight"] = [s + nm + ".weight"]
        return out

    @property
    def final_sources(self):
        if self.family == "gpt_neox":
            return {"norm.weight": ["gpt_neox.final_layer_norm.weight"],
                    "norm.bias": ["gpt_neox.final_layer_norm.bias"]}
        return {"norm.weight": ["model.norm.weight"]}

    def source_text(self, gname, srcs):
        """What gradflow's config.weights_tensor_names must record for `gname`."""
        text = " + ".join(srcs)
        if self.family == "gpt_neox" and "in_proj" in gname:
            text += " (per head [q|k|v], regrouped)"
        return text

    def weights_format(self):
        return "hf-neox" if self.family == "gpt_neox" else "hf-" + self.family

    # -- config.json
    def config(self, dtype="F32"):
        """config.json with the keys the released models' files have (transformers' names)."""
        c = {"model_type": self.family, "architectures": [_ARCHITECTURES[self.family]], "hidden_size": self.d,
             "num_attention_heads": self.heads, "num_hidden_layers": self.layers, "intermediate_size": self.d_ff,
             "vocab_size": self.vocab, "max_position_embeddings": self.max_positions,
             "tie_word_embeddings": self.tied, "torch_dtype": _TORCH_DTYPE[dtype], "bos_token_id": 0,
             "eos_token_id": 1, "initializer_range": 0.02, "use_cache": True}
        if self.family == "gpt_neox":
            c.update({"hidden_act": "gelu", "layer_norm_eps": self.eps, "use_parallel_residual": self.parallel,
                      "attention_bias": True, "attention_dropout": 0.0, "hidden_dropout": 0.0,
                      "rope_scaling": None, "classifier_dropout": 0.1})
            if self.neox_rope_keys == "rotary_emb_base":
                c.update({"rotary_pct": self.rotary_pct, "rotary_emb_base": self.rope_theta})
            else:
                c.update({"rope_theta": self.rope_theta, "partial_rotary_factor": self.rotary_pct})
            return c
        c.update({"num_key_value_heads": self.kv_heads, "rms_norm_eps": self.eps, "rope_theta": self.rope_theta,
                  "rope_scaling": None, "attention_dropout": 0.0})
        if self.head_dim_key:
            c["head_dim"] = self.e
        if self.family == "gemma2":
            c.update({"hidden_activation": "gelu_pytorch_tanh", "hidden_act": "gelu_pytorch_tanh",
                      "query_pre_attn_scalar": self.query_pre_attn_scalar,
                      "attn_logit_softcapping": self.attn_softcap, "final_logit_softcapping": self.final_softcap,
                      "sliding_window": 4096 if self.sliding_window is None else self.sliding_window,
                      "cache_implementation": "hybrid", "attention_bias": False, "pad_token_id": 0})
            return c
        c["hidden_act"] = "silu"
        if self.family in ("llama", "olmo2", "qwen3"):
            c.update({"attention_bias": False})
        if self.family == "llama":
            c.update({"mlp_bias": False, "pretraining_tp": 1})
        if self.family == "mistral":
            c["sliding_window"] = self.sliding_window
        if self.family in ("qwen2", "qwen3"):
            c.update({"use_sliding_window": False, "sliding_window": self.sliding_window or 4096,
                      "max_window_layers": self.layers})
        return c

    @classmethod
    def from_config(cls, c):
        """The stack config.json describes (as transformers' config classes read it), without weights."""
        fam = c["model_type"]
        d, h = c["hidden_size"], c["num_attention_heads"]
        kw = dict(kv_heads=c.get("num_key_value_heads") or h, head_dim=c.get("head_dim") or d // h,
                  vocab=c.get("vocab_size", 40), tied=c.get("tie_word_embeddings", _TIED_DEFAULT.get(fam, True)),
                  max_positions=c.get("max_position_embeddings", 16), init=False)
        if fam == "gpt_neox":
            kw.update(eps=c.get("layer_norm_eps", 1e-5), parallel=c.get("use_parallel_residual", True))
            if "rotary_emb_base" in c or "rotary_pct" in c:
                kw.update(rope_theta=c.get("rotary_emb_base", 10000.0), rotary_pct=c.get("rotary_pct", 0.25))
            else:
                kw.update(rope_theta=c.get("rope_theta", 10000.0), rotary_pct=c.get("partial_rotary_factor", 0.25),
                          neox_rope_keys="rope_theta")
            kw.pop("head_dim")
        else:
            kw.update(eps=c.get("rms_norm_eps", 1e-6), rope_theta=c.get("rope_theta", 10000.0),
                      head_dim_key="head_dim" in c)
        if fam == "gemma2":
            kw.update(query_pre_attn_scalar=c.get("query_pre_attn_scalar", 256),
                      attn_softcap=c.get("attn_logit_softcapping"), final_softcap=c.get("final_logit_softcapping"))
        if fam in ("mistral", "gemma2"):
            kw["sliding_window"] = c.get("sliding_window")
        return cls(fam, c["num_hidden_layers"], d, h, c["intermediate_size"], **kw)


# --- files ---------------------------------------------------------------------------------------------------------
def round_to(model, dtype):
    """Every weight replaced by the value a reader of `dtype` sees; the buffers by their own dtype's values."""
    model.p = tr.rounded(model.p, dtype)
    extra = {}
    for k, v in model.extra.items():
        own = model.extra_dtype.get(k, dtype)
        extra[k] = v if own == "U8" else tr.rounded({k: v}, own)[k]
    model.extra = extra


def save(model, folder, dtype="F32", shards=1):
    """The checkpoint in HF's layout: config.json and model.safetensors, or `shards` files
    model-0000k-of-0000n.safetensors with model.safetensors.index.json."""
    os.makedirs(folder, exist_ok=True)
    state = {**model.p, **model.extra}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(model.config(dtype), f, indent=2)
    if shards == 1:
        tr.write_safetensors(os.path.join(folder, "model.safetensors"), state, dtype, model.extra_dtype)
        return
    names, weight_map = list(state), {}
    for k in range(shards):
        part = names[k::shards]
        fname = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        tr.write_safetensors(os.path.join(folder, fname), {n: state[n] for n in part}, dtype, model.extra_dtype)
        weight_map.update({n: fname for n in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)


# --- the compared quantities ----------------------------------------------------------------------------------------
def reference(model, x0, g, loss_fn=None, jacobian=True):
    """Loss sum(g*y) (or loss_fn(y)), ||dL/dy||, every ||dL/dx_l||, every gradflow parameter's ||dL/dθ|| (from its HF
    sources: stacking and regrouping rows keep the Frobenius norm), and the Jacobian dy/dx_0 as (n*d, n*d)."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in model.p.items()}
    saved = model.p
    model.p = params
    try:
        x = x0.detach().clone().requires_grad_(True)
        xs, h = [], x
        for i in range(model.layers):
            h.retain_grad()
            xs.append(h)
            h = model.layer(i, h)
        y = model.final(h)
        y.retain_grad()
        loss = loss_fn(y) if loss_fn else (y * g).sum()
        loss.backward()
        ref = {"loss": loss.item(), "output_grad_norm": y.grad.norm().item()}
        for l, xl in enumerate(xs):
            ref[f"layers.{l}.grad_norm"] = xl.grad.norm().item()
        # (a tensor the computation does not read, as a mutation may leave one, has gradient 0)
        norm = lambda srcs: math.sqrt(sum(params[s].grad.norm().item() ** 2 for s in srcs
                                          if params[s].grad is not None))
        for i in range(model.layers):
            for name, srcs in model.gradflow_sources(i).items():
                ref[f"param layers.{i}.{name}"] = norm(srcs)
        for name, srcs in model.final_sources.items():
            ref[f"param {name}"] = norm(srcs)
        J = None
        if jacobian:
            def net(v):
                t = v
                for i in range(model.layers):
                    t = model.layer(i, t)
                return model.final(t)
            n, d = x0.shape
            J = torch.autograd.functional.jacobian(net, x0.detach()).reshape(n * d, n * d)
    finally:
        model.p = saved
    return ref, J


# --- checks of the reference itself (no gradflow involved) ----------------------------------------------------------
def self_checks():
    """Hand-made tensors through the layout helpers, and finite differences through each family's whole stack.
    Returns [(name, ok, detail)]."""
    out = []
    # RoPE rotate-half on one head of width 4 at position 3: feature i pairs with i + 2, angle 3 * theta^(-i/2)
    th, pos = 100.0, 3
    x = torch.tensor([[[0.0] * 4] * pos + [[1.0, 2.0, 3.0, 4.0]]], dtype=torch.float64)  # (1 head, n = 4, 4)
    cos, sin = rope_tables(pos + 1, 4, th)
    got = apply_rope(x, cos, sin)[0, pos]
    a0, a1 = pos * 1.0, pos * th ** -0.5
    want = torch.tensor([1 * math.cos(a0) - 3 * math.sin(a0), 2 * math.cos(a1) - 4 * math.sin(a1),
                         3 * math.cos(a0) + 1 * math.sin(a0), 4 * math.cos(a1) + 2 * math.sin(a1)], dtype=torch.float64)
    out.append(("RoPE rotate-half pairs (i, i + e/2) by hand", torch.allclose(got, want, rtol=0, atol=1e-15),
                f"max diff {(got - want).abs().max().item():.1e}"))
    want_i = torch.tensor([1 * math.cos(a0) - 2 * math.sin(a0), 2 * math.cos(a0) + 1 * math.sin(a0),
                           3 * math.cos(a1) - 4 * math.sin(a1), 4 * math.cos(a1) + 3 * math.sin(a1)],
                          dtype=torch.float64)
    got_i = apply_rope(x, cos, sin, interleaved=True)[0, pos]
    out.append(("RoPE interleaved mutation pairs (2i, 2i + 1) by hand",
                torch.allclose(got_i, want_i, rtol=0, atol=1e-15),
                f"max diff {(got_i - want_i).abs().max().item():.1e}"))
    # RoPE's defining property: <R_m q, R_n k> depends on m - n only
    gen = torch.Generator().manual_seed(5)
    q, k = (torch.randn(1, 1, 8, generator=gen, dtype=torch.float64) for _ in range(2))
    cos, sin = rope_tables(9, 8, 10000.0)
    rq, rk = apply_rope(q.expand(1, 9, 8), cos, sin)[0], apply_rope(k.expand(1, 9, 8), cos, sin)[0]
    dot = lambda m, n_: (rq[m] * rk[n_]).sum()
    rel = abs((dot(7, 4) - dot(3, 0)).item())
    out.append(("RoPE scores depend on relative position only", rel < 1e-13, f"|<R7q,R4k> - <R3q,R0k>| = {rel:.1e}"))
    # repeat_kv: h = 6 query heads over K = 2 kv heads
    kv = torch.arange(2, dtype=torch.float64).view(2, 1, 1).expand(2, 3, 2)
    heads = repeat_kv(kv, 3)[:, 0, 0].tolist()
    heads_mod = repeat_kv(kv, 3, modulo=True)[:, 0, 0].tolist()
    out.append(("repeat_kv: query head j reads kv head j // (h/K)", heads == [0, 0, 0, 1, 1, 1] and
                heads_mod == [0, 1, 0, 1, 0, 1], f"{heads}, mutation {heads_mod}"))
    # GPT-NeoX's fused output: feature f of the (3*h*e) vector belongs to head f // (3e), and within it to q, k, v
    H, e = 3, 2
    qkv = torch.arange(3 * H * e, dtype=torch.float64).view(1, -1)
    q, k, v = neox_split(qkv, H, e)
    ok = all(q[j, 0].tolist() == [3 * e * j + c for c in range(e)] and
             k[j, 0].tolist() == [3 * e * j + e + c for c in range(e)] and
             v[j, 0].tolist() == [3 * e * j + 2 * e + c for c in range(e)] for j in range(H))
    qc, _, vc = neox_split(qkv, H, e, consecutive=True)
    ok_c = qc[1, 0].tolist() == [2.0, 3.0] and vc[0, 0].tolist() == [12.0, 13.0]
    out.append(("GPT-NeoX query_key_value rows per head [q_j; k_j; v_j]", ok and ok_c,
                f"q0 {q[0, 0].tolist()} k0 {k[0, 0].tolist()} v0 {v[0, 0].tolist()} q1 {q[1, 0].tolist()}"))
    # the float32 variant is a different computation only by rounding
    xx = torch.randn(3, 6, generator=gen, dtype=torch.float64)
    w = torch.randn(6, generator=gen, dtype=torch.float64)
    dn = (rms_norm(xx, w, 1e-6, hf_float32=True) - rms_norm(xx, w, 1e-6)).abs().max().item()
    out.append(("RMSNorm float32 variant differs by float32 rounding only", 0 < dn < 1e-5, f"max diff {dn:.1e}"))
    # config.json -> from_config -> the same stack
    for fam, kw in (("llama", dict(kv_heads=1)), ("qwen3", dict(head_dim=4)), ("gemma2", dict(head_dim=6, kv_heads=1,
                    query_pre_attn_scalar=5)), ("gpt_neox", dict(parallel=False, neox_rope_keys="rope_theta",
                                                                 rotary_pct=0.5)), ("olmo2", {})):
        m = Decoder(fam, 1, 8, 2, 10, seed=1, **kw)
        m2 = Decoder.from_config(m.config())
        keys = ("family", "layers", "d", "heads", "kv_heads", "e", "d_ff", "tied", "rope_theta", "eps", "rotary_pct",
                "parallel", "query_pre_attn_scalar", "attn_softcap", "final_softcap")
        diff = [k for k in keys if getattr(m, k) != getattr(m2, k)]
        out.append((f"{fam}: config.json read back describes the same stack", not diff, f"differ: {diff}"))
    # central differences of the whole stack's loss along a random direction, each family (autograd vs the forward)
    for fam, kw in (("llama", dict(kv_heads=1)), ("qwen2", {}), ("qwen3", dict(head_dim=6)), ("olmo2", {}),
                    ("gemma2", dict(head_dim=6, kv_heads=1, query_pre_attn_scalar=5, attn_softcap=1.0)),
                    ("gpt_neox", dict(rotary_pct=0.5)), ("gpt_neox", dict(parallel=False, rotary_pct=1.0))):
        m = Decoder(fam, 2, 4, 2, 6, seed=2, **kw)
        x0 = torch.randn(3, 4, generator=gen, dtype=torch.float64)
        gg = torch.randn(3, 4, generator=gen, dtype=torch.float64)
        dirn = torch.randn(3, 4, generator=gen, dtype=torch.float64)
        x = x0.clone().requires_grad_(True)
        t = x
        for i in range(m.layers):
            t = m.layer(i, t)
        (m.final(t) * gg).sum().backward()

        def L(v):
            t = v
            for i in range(m.layers):
                t = m.layer(i, t)
            return (m.final(t) * gg).sum().item()
        eps = 1e-5
        fd = (L(x0 + eps * dirn) - L(x0 - eps * dirn)) / (2 * eps)
        ad = (x.grad * dirn).sum().item()
        rel = abs(fd - ad) / abs(ad)
        out.append((f"{fam} {kw}: dL/dx_0 by autograd vs central differences", rel < 1e-7, f"rel {rel:.1e}"))
    return out
