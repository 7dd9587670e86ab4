#!/usr/bin/env python3
"""synthetic_hf_checkpoint.py — a RANDOM checkpoint with the exact layout, names and shapes of bert-base-uncased
or gpt2 (config.json + model.safetensors, float32), for trying gradflow's Hugging Face reader, the memory numbers
of docs/formats.md and examples/hf_checkpoints.py (--offline) without network access. Its weights are drawn
like the families' initialization (matrices N(0, 0.02), biases 0, LayerNorm 1 and 0): it is NOT a trained model,
and nothing measured on it says anything about the trained one.

  /usr/bin/python3 examples/synthetic_hf_checkpoint.py --family gpt2 --out /tmp/hf/gpt2
  /usr/bin/python3 examples/synthetic_hf_checkpoint.py --family bert --out /tmp/hf/bert-base-uncased

Needs numpy only; tensors are generated and written one at a time (memory stays at one tensor).
"""
import argparse
import json
import os
import struct

import numpy as np

SIZES = {  # the published configurations (d, heads, layers, d_ff, vocab, positions)
    "bert": dict(d=768, heads=12, layers=12, d_ff=3072, vocab=30522, positions=512),
    "gpt2": dict(d=768, heads=12, layers=12, d_ff=3072, vocab=50257, positions=1024),
}


def bert_tensors(s):
    d, f, p = s["d"], s["d_ff"], "bert."
    t = [(p + "embeddings.word_embeddings.weight", (s["vocab"], d), "normal"),
         (p + "embeddings.position_embeddings.weight", (s["positions"], d), "normal"),
         (p + "embeddings.token_type_embeddings.weight", (2, d), "normal"),
         (p + "embeddings.LayerNorm.weight", (d,), "ones"), (p + "embeddings.LayerNorm.bias", (d,), "zeros")]
    for i in range(s["layers"]):
        b = f"{p}encoder.layer.{i}."
        for m in ("query", "key", "value"):
            t += [(b + f"attention.self.{m}.weight", (d, d), "normal"), (b + f"attention.self.{m}.bias", (d,), "zeros")]
        t += [(b + "attention.output.dense.weight", (d, d), "normal"), (b + "attention.output.dense.bias", (d,), "zeros"),
              (b + "attention.output.LayerNorm.weight", (d,), "ones"),
              (b + "attention.output.LayerNorm.bias", (d,), "zeros"),
              (b + "intermediate.dense.weight", (f, d), "normal"), (b + "intermediate.dense.bias", (f,), "zeros"),
              (b + "output.dense.weight", (d, f), "normal"), (b + "output.dense.bias", (d,), "zeros"),
              (b + "output.LayerNorm.weight", (d,), "ones"), (b + "output.LayerNorm.bias", (d,), "zeros")]
    t += [(p + "pooler.dense.weight", (d, d), "normal"), (p + "pooler.dense.bias", (d,), "zeros"),
          ("cls.predictions.bias", (s["vocab"],), "zeros")]
    config = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": d,
              "num_attention_heads": s["heads"], "num_hidden_layers": s["layers"], "intermediate_size": f,
              "hidden_act": "gelu", "layer_norm_eps": 1e-12, "vocab_size": s["vocab"],
              "max_position_embeddings": s["positions"], "type_vocab_size": 2, "position_embedding_type": "absolute",
              "pad_token_id": 0, "_note": "synthetic random weights (examples/synthetic_hf_checkpoint.py), not trained"}
    return t, config


def gpt2_tensors(s):
    d, f, n = s["d"], s["d_ff"], s["positions"]
    t = [("wte.weight", (s["vocab"], d), "normal"), ("wpe.weight", (n, d), "normal")]
    for i in range(s["layers"]):
        b = f"h.{i}."
        t += [(b + "ln_1.weight", (d,), "ones"), (b + "ln_1.bias", (d,), "zeros"),
              (b + "attn.bias", (1, 1, n, n), "causal"),  # the causal-mask buffer older checkpoints carry
              (b + "attn.c_attn.weight", (d, 3 * d), "normal"), (b + "attn.c_attn.bias", (3 * d,), "zeros"),
              (b + "attn.c_proj.weight", (d, d), "normal"), (b + "attn.c_proj.bias", (d,), "zeros"),
              (b + "ln_2.weight", (d,), "ones"), (b + "ln_2.bias", (d,), "zeros"),
              (b + "mlp.c_fc.weight", (d, f), "normal"), (b + "mlp.c_fc.bias", (f,), "zeros"),
              (b + "mlp.c_proj.weight", (f, d), "normal"), (b + "mlp.c_proj.bias", (d,), "zeros")]
    t += [("ln_f.weight", (d,), "ones"), ("ln_f.bias", (d,), "zeros")]
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": d, "n_head": s["heads"],
              "n_layer": s["layers"], "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
              "vocab_size": s["vocab"], "n_positions": n, "n_ctx": n,
              "_note": "synthetic random weights (examples/synthetic_hf_checkpoint.py), not trained"}
    return t, config


def values(kind, shape, rng):
    if kind == "normal":
        return (rng.standard_normal(shape) * 0.02).astype("<f4")
    if kind == "ones":
        return np.ones(shape, "<f4")
    if kind == "causal":
        return np.tril(np.ones(shape[-2:], "<f4")).reshape(shape)
    return np.zeros(shape, "<f4")


def write(folder, tensors, config, seed):
    os.makedirs(folder, exist_ok=True)
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, _ in tensors:
        size = 4 * int(np.prod(shape))
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    rng = np.random.default_rng(seed)
    path = os.path.join(folder, "model.safetensors")
    with open(path + ".tmp", "wb") as out:
        out.write(struct.pack("<Q", len(text)) + text)
        for name, shape, kind in tensors:
            out.write(values(kind, shape, rng).tobytes())
    os.replace(path + ".tmp", path)
    with open(os.path.join(folder, "config.json"), "w") as out:
        json.dump(config, out, indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", choices=sorted(SIZES), required=True)
    ap.add_argument("--out", required=True, help="the folder to write (config.json, model.safetensors)")
    ap.add_argument("--layers", type=int, help="fewer layers than the real model (for quick tries)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    s = dict(SIZES[a.family])
    if a.layers:
        s["layers"] = a.layers
    tensors, config = (bert_tensors if a.family == "bert" else gpt2_tensors)(s)
    write(a.out, tensors, config, a.seed)
    count = sum(int(np.prod(shape)) for name, shape, kind in tensors if kind != "causal")
    print(f"{a.out}: synthetic {a.family}, {count} parameters ({count / 1e6:.1f} M)")


if __name__ == "__main__":
    main()
