"""hf_reference.py — Hugging Face BERT/RoBERTa layers and GPT-2 blocks in plain PyTorch (float64), written from
the published equations as transformers' modeling_bert.py / modeling_gpt2.py compute them (no `transformers`
package needed), and writers of checkpoints in their layout (config.json, model.safetensors or a sharded
index). Used by test_hf_checkpoints.py.

BERT layer (Post-LN):   h = LN1(x + Attn(x));  y = LN2(h + W_o act(W_i h + b_i) + b_o)
  Attn: q, k, v = three nn.Linear (weight (out, in)), per head softmax(q kᵀ / sqrt(e)) v, then attention.output.dense.
GPT-2 block (Pre-LN):   h = x + Attn(ln_1(x));  y = h + c_proj(gelu_new(c_fc(ln_2(h))));  ln_f after the last block.
  Conv1D: weight (in, out), y = x W + b; c_attn's output columns are [q | k | v]; causal mask (masked scores set
  to the dtype's most negative value, as HF does, before the softmax).
"""
import json
import math
import os

import torch

import torch_reference as tr


def layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def activation(name):
    return {"gelu": lambda z: torch.nn.functional.gelu(z), "gelu_new": gelu_new, "relu": torch.relu}[name]


def attention(q, k, v, heads, causal):
    """q, k, v: (n, d) -> (n, d), heads split along the feature dimension (head h = columns h*e .. (h+1)*e)."""
    n, d = q.shape
    e = d // heads
    split = lambda t: t.view(n, heads, e).permute(1, 0, 2)  # (h, n, e)
    qh, kh, vh = split(q), split(k), split(v)
    scores = qh @ kh.transpose(-1, -2) / math.sqrt(e)
    if causal:
        keep = torch.tril(torch.ones(n, n, dtype=torch.bool))
        scores = torch.where(keep, scores, torch.full([], torch.finfo(scores.dtype).min, dtype=scores.dtype))
    probs = torch.softmax(scores, dim=-1)
    return (probs @ vh).permute(1, 0, 2).reshape(n, d)


class Bert:
    """Parameters in HF names (without the base-model prefix): encoder.layer.{i}.* (and embeddings, pooler)."""

    def __init__(self, layers, d, heads, d_ff, act="gelu", eps=1e-12, seed=0):
        self.layers, self.d, self.heads, self.d_ff, self.act, self.eps = layers, d, heads, d_ff, act, eps
        g = torch.Generator().manual_seed(seed)
        r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
        self.p = {}
        for i in range(layers):
            s = f"encoder.layer.{i}."
            for m in ("query", "key", "value"):
                self.p[s + f"attention.self.{m}.weight"] = r(d, d) / math.sqrt(d)
                self.p[s + f"attention.self.{m}.bias"] = 0.1 * r(d)
            self.p[s + "attention.output.dense.weight"] = r(d, d) / math.sqrt(d)
            self.p[s + "attention.output.dense.bias"] = 0.1 * r(d)
            self.p[s + "attention.output.LayerNorm.weight"] = 1.0 + 0.3 * r(d)
            self.p[s + "attention.output.LayerNorm.bias"] = 0.2 * r(d)
            self.p[s + "intermediate.dense.weight"] = r(d_ff, d) / math.sqrt(d)
            self.p[s + "intermediate.dense.bias"] = 0.1 * r(d_ff)
            self.p[s + "output.dense.weight"] = r(d, d_ff) / math.sqrt(d_ff)
            self.p[s + "output.dense.bias"] = 0.1 * r(d)
            self.p[s + "output.LayerNorm.weight"] = 1.0 + 0.3 * r(d)
            self.p[s + "output.LayerNorm.bias"] = 0.2 * r(d)
        # outside the analyzed stack: present in real checkpoints, never read by gradflow's block analysis
        self.extra = {"embeddings.word_embeddings.weight": r(30, d), "embeddings.position_embeddings.weight": r(16, d),
                      "embeddings.token_type_embeddings.weight": r(2, d),
                      "embeddings.LayerNorm.weight": 1.0 + 0.1 * r(d), "embeddings.LayerNorm.bias": 0.1 * r(d),
                      "pooler.dense.weight": r(d, d), "pooler.dense.bias": r(d)}

    def layer(self, i, x):
        P, s = self.p, f"encoder.layer.{i}."
        lin = lambda t, name: t @ P[s + name + ".weight"].T + P[s + name + ".bias"]
        a = attention(lin(x, "attention.self.query"), lin(x, "attention.self.key"), lin(x, "attention.self.value"),
                      self.heads, False)
        h = layer_norm(lin(a, "attention.output.dense") + x, P[s + "attention.output.LayerNorm.weight"],
                       P[s + "attention.output.LayerNorm.bias"], self.eps)
        f = lin(activation(self.act)(lin(h, "intermediate.dense")), "output.dense")
        return layer_norm(f + h, P[s + "output.LayerNorm.weight"], P[s + "output.LayerNorm.bias"], self.eps)

    def final(self, x):
        return x

    def embed(self, ids, roberta=False, pad=1):
        """BertEmbeddings: LayerNorm((word[id] + token_type[0]) + position[p]); p = 0, 1, ... (BERT) or, for
        RoBERTa, pad + cumsum(id != pad) for the non-padding tokens and pad for padding ones."""
        E = self.extra
        ids_t = torch.tensor(ids)
        if roberta:
            mask = (ids_t != pad).long()
            positions = torch.cumsum(mask, 0) * mask + pad
        else:
            positions = torch.arange(len(ids))
        x = E["embeddings.word_embeddings.weight"][ids_t] + E["embeddings.token_type_embeddings.weight"][0]
        x = x + E["embeddings.position_embeddings.weight"][positions]
        return layer_norm(x, E["embeddings.LayerNorm.weight"], E["embeddings.LayerNorm.bias"], self.eps)

    def config(self, model_type="bert"):
        return {"model_type": model_type, "architectures": ["BertModel"], "hidden_size": self.d,
                "num_attention_heads": self.heads, "num_hidden_layers": self.layers, "intermediate_size": self.d_ff,
                "hidden_act": self.act, "layer_norm_eps": self.eps, "vocab_size": 30, "max_position_embeddings": 16,
                "type_vocab_size": 2, "position_embedding_type": "absolute", "pad_token_id": 1}

    def gradflow_sources(self, i):
        """gradflow's parameter name (without layers.{i}.) -> the HF tensors behind it."""
        s = f"encoder.layer.{i}."
        return {"self_attn.in_proj_weight": [s + f"attention.self.{m}.weight" for m in ("query", "key", "value")],
                "self_attn.in_proj_bias": [s + f"attention.self.{m}.bias" for m in ("query", "key", "value")],
                "self_attn.out_proj.weight": [s + "attention.output.dense.weight"],
                "self_attn.out_proj.bias": [s + "attention.output.dense.bias"],
                "linear1.weight": [s + "intermediate.dense.weight"], "linear1.bias": [s + "intermediate.dense.bias"],
                "linear2.weight": [s + "output.dense.weight"], "linear2.bias": [s + "output.dense.bias"],
                "norm1.weight": [s + "attention.output.LayerNorm.weight"],
                "norm1.bias": [s + "attention.output.LayerNorm.bias"],
                "norm2.weight": [s + "output.LayerNorm.weight"], "norm2.bias": [s + "output.LayerNorm.bias"]}

    final_sources = {}


class GPT2:
    """Parameters in HF names (without the `transformer.` prefix): h.{i}.*, ln_f.* (and wte, wpe)."""

    def __init__(self, layers, d, heads, d_ff=None, act="gelu_new", eps=1e-5, seed=0):
        self.layers, self.d, self.heads, self.act, self.eps = layers, d, heads, act, eps
        self.n_inner = d_ff
        self.d_ff = d_ff or 4 * d
        g = torch.Generator().manual_seed(seed)
        r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
        D, F = d, self.d_ff
        self.p = {}
        for i in range(layers):
            s = f"h.{i}."
            self.p[s + "ln_1.weight"] = 1.0 + 0.3 * r(D)
            self.p[s + "ln_1.bias"] = 0.2 * r(D)
            self.p[s + "attn.c_attn.weight"] = r(D, 3 * D) / math.sqrt(D)  # Conv1D: (in, out)
            self.p[s + "attn.c_attn.bias"] = 0.1 * r(3 * D)
            self.p[s + "attn.c_proj.weight"] = r(D, D) / math.sqrt(D)
            self.p[s + "attn.c_proj.bias"] = 0.1 * r(D)
            self.p[s + "ln_2.weight"] = 1.0 + 0.3 * r(D)
            self.p[s + "ln_2.bias"] = 0.2 * r(D)
            self.p[s + "mlp.c_fc.weight"] = r(D, F) / math.sqrt(D)
            self.p[s + "mlp.c_fc.bias"] = 0.1 * r(F)
            self.p[s + "mlp.c_proj.weight"] = r(F, D) / math.sqrt(F)
            self.p[s + "mlp.c_proj.bias"] = 0.1 * r(D)
        self.p["ln_f.weight"] = 1.0 + 0.3 * r(D)
        self.p["ln_f.bias"] = 0.2 * r(D)
        self.extra = {"wte.weight": r(40, D), "wpe.weight": r(16, D)}
        for i in range(layers):  # the causal-mask buffers older GPT-2 checkpoints carry
            self.extra[f"h.{i}.attn.bias"] = torch.tril(torch.ones(16, 16, dtype=torch.float64)).view(1, 1, 16, 16)
            self.extra[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4, dtype=torch.float64)

    def layer(self, i, x):
        P, s = self.p, f"h.{i}."
        conv = lambda t, name: t @ P[s + name + ".weight"] + P[s + name + ".bias"]  # Conv1D
        a = layer_norm(x, P[s + "ln_1.weight"], P[s + "ln_1.bias"], self.eps)
        q, k, v = conv(a, "attn.c_attn").split(self.d, dim=-1)
        h = x + conv(attention(q, k, v, self.heads, True), "attn.c_proj")
        m = layer_norm(h, P[s + "ln_2.weight"], P[s + "ln_2.bias"], self.eps)
        return h + conv(activation(self.act)(conv(m, "mlp.c_fc")), "mlp.c_proj")

    def final(self, x):
        return layer_norm(x, self.p["ln_f.weight"], self.p["ln_f.bias"], self.eps)

    def embed(self, ids, roberta=False, pad=1):
        """GPT2Model: wte[id] + wpe[0, 1, ...]."""
        return self.extra["wte.weight"][torch.tensor(ids)] + self.extra["wpe.weight"][torch.arange(len(ids))]

    def config(self, model_type="gpt2"):
        return {"model_type": model_type, "architectures": ["GPT2LMHeadModel"], "n_embd": self.d, "n_head": self.heads,
                "n_layer": self.layers, "n_inner": self.n_inner, "activation_function": self.act,
                "layer_norm_epsilon": self.eps, "vocab_size": 40, "n_positions": 16, "scale_attn_weights": True,
                "scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False}

    def gradflow_sources(self, i):
        s = f"h.{i}."
        return {"self_attn.in_proj_weight": [s + "attn.c_attn.weight"], "self_attn.in_proj_bias": [s + "attn.c_attn.bias"],
                "self_attn.out_proj.weight": [s + "attn.c_proj.weight"], "self_attn.out_proj.bias": [s + "attn.c_proj.bias"],
                "linear1.weight": [s + "mlp.c_fc.weight"], "linear1.bias": [s + "mlp.c_fc.bias"],
                "linear2.weight": [s + "mlp.c_proj.weight"], "linear2.bias": [s + "mlp.c_proj.bias"],
                "norm1.weight": [s + "ln_1.weight"], "norm1.bias": [s + "ln_1.bias"],
                "norm2.weight": [s + "ln_2.weight"], "norm2.bias": [s + "ln_2.bias"]}

    final_sources = {"norm.weight": ["ln_f.weight"], "norm.bias": ["ln_f.bias"]}


def round_to(model, dtype):
    """Every parameter replaced by the value a reader of `dtype` sees (torch and gradflow use the same weights)."""
    model.p = tr.rounded(model.p, dtype)
    model.extra = tr.rounded(model.extra, dtype)


def save(model, folder, prefix="", dtype="F32", shards=1, config=True, model_type=None):
    """The checkpoint in HF's layout: config.json (unless config=False) and model.safetensors, or `shards` files
    model-0000k-of-0000n.safetensors with model.safetensors.index.json."""
    os.makedirs(folder, exist_ok=True)
    state = {prefix + k: v for k, v in {**model.p, **model.extra}.items()}
    if config:
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(model.config(model_type) if model_type else model.config(), f, indent=2)
    if shards == 1:
        tr.write_safetensors(os.path.join(folder, "model.safetensors"), state, dtype)
        return
    names = list(state)
    weight_map = {}
    for k in range(shards):
        part = names[k::shards]
        fname = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        tr.write_safetensors(os.path.join(folder, fname), {n: state[n] for n in part}, dtype)
        weight_map.update({n: fname for n in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)


def lm_loss(model, ids):
    """GPT2LMHeadModel's loss on the analyzed output y: logits = y wteᵀ (tied head, no bias), cross-entropy of
    logits[:-1] against ids[1:], averaged."""
    wte = model.extra["wte.weight"]
    return lambda y: torch.nn.functional.cross_entropy(y[:-1] @ wte.T, torch.tensor(ids[1:]))


def reference(model, x0, g, loss_fn=None):
    """Loss sum(g*y) (or loss_fn(y)), every ||dL/dx_l||, every gradflow parameter's ||dL/dθ|| (from its HF sources: stacking and
    transposing keep the Frobenius norm), and the Jacobian dy/dx_0 as an (n*d, n*d) matrix."""
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
        for i in range(model.layers):
            for name, srcs in model.gradflow_sources(i).items():
                ref[f"param layers.{i}.{name}"] = math.sqrt(sum(params[s].grad.norm().item() ** 2 for s in srcs))
        for name, srcs in model.final_sources.items():
            ref[f"param {name}"] = math.sqrt(sum(params[s].grad.norm().item() ** 2 for s in srcs))

        def net(v):
            t = v
            for i in range(model.layers):
                t = model.layer(i, t)
            return model.final(t)

        n, d = x0.shape
        J = torch.autograd.functional.jacobian(net, x0.detach())
    finally:
        model.p = saved
    return ref, J.reshape(n * d, n * d)
