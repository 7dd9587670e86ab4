#!/usr/bin/python3
"""test_hf_decoder_checkpoints.py GRADFLOW — Hugging Face decoder checkpoints (Llama, Mistral, Qwen2, Qwen3, OLMo-2,
Gemma-2, GPT-NeoX/Pythia; built here in HF's layout from reference models written in plain PyTorch:
hf_decoder_reference.py) analyzed by `gradflow analyze --weights` and `gradflow jacobian --weights`, against PyTorch
autograd on the reference models: the loss, ||dL/dy||, every ||dL/dx_l||, every parameter-gradient norm and the full
Jacobian dy/dx_0, relative error <= 1e-9 each; and the report's config (format, block options read from config.json,
weights_tensor_names, weights_not_analyzed). Covers float32, float16 and bfloat16 files, a sharded checkpoint
(model.safetensors.index.json), grouped-query heads, head_dim != hidden/heads, tied and untied heads, the buffers
real files carry (rotary inv_freq, GPT-NeoX's uint8 causal mask and masked_bias), x_0 from --token-ids through each
family's embeddings (Gemma-2's sqrt(hidden_size) scale) or from --input, --loss lm (Gemma-2's final logit soft-cap
included), GPT-NeoX's parallel and sequential residual and partial rotary (rotary_pct/rotary_emb_base and
partial_rotary_factor/rope_theta).

Mutations: for plausible loader mistakes (interleaved RoPE pairs, GQA head j % K, Gemma's w instead of 1 + w, NeoX's
fused q|k|v read as three blocks, the residual kind swapped, Qwen2's biases dropped, Gemma's sqrt(hidden_size)
embedding scale or final logit soft-cap ignored) the reference computes the
mistaken model too, and gradflow's numbers must differ from it by far more than the tolerance (so a loader making
that mistake fails this test). And, when this gradflow's export offers the format: `gradflow export --weights
CHECKPOINT` of every checkpoint above (the same tensors bit for bit, a config.json describing the same block), and
`gradflow export --format hf-llama|hf-qwen2|hf-qwen3|hf-gemma2|hf-olmo2|hf-neox` round trips of gradflow's seeded
models: the reference's exact names and shapes (a strict load), the same numbers before and after. Prints, for
information, how far Hugging Face's own float32 internals (RMSNorm, RoPE tables, softmax, which its code computes in
float32 even for a float64 model) move a small Llama's numbers. Over training: a folder of Pythia-style revision
folders (step1000/, step8000/, step143000/) analyzed by one `gradflow analyze --weights PARENT --token-ids ...
--loss lm`: the steps in order, each checkpoint's numbers PyTorch's on it.
Exit 1 on any failure, 77 (CTest SKIP_RETURN_CODE) when torch or numpy cannot be imported.
"""
import functools
import json
import math
import os
import sys
import tempfile

from preamble import np, torch, gradflow_binary, load_json, randn64  # exits 77 (skipped) without numpy/torch
import tolerances as tol
import hf_decoder_reference as hd
import torch_reference as tr

# The least relative error (the largest over the compared quantities) by which gradflow's numbers must differ from a
# mutated reference: 1e5 times REL_TOL, so a loader making that mistake fails the 1e-9 comparison by a wide margin
# (the measured differences are 1e-2 and more).
MUTATION_MIN_REL = 1e-4


class Case:
    def __init__(self, label, model, dtype="F32", shards=1, token_ids=None, lm=False, n=5, mutations=(),
                 float32_internals=False):
        self.__dict__.update(locals())
        del self.__dict__["self"]


D = hd.Decoder
CASES = [
    Case("llama F32, GQA 4:2, untied lm_head, rotary_emb.inv_freq buffers, --loss lm",
         D("llama", 2, 16, 4, 24, kv_heads=2, inv_freq_buffers=True, seed=1), token_ids=[3, 1, 4, 1, 5, 9, 2],
         lm=True, mutations=("interleaved_rope", "gqa_modulo"), float32_internals=True),
    Case("llama BF16, 2 shards, tied, rope_theta 5e5, eps 1e-6, 3 layers",
         D("llama", 3, 8, 2, 12, tied=True, rope_theta=5e5, eps=1e-6, seed=2), dtype="BF16", shards=2,
         token_ids=[7, 0, 39, 12, 12, 5]),
    Case("mistral F16, multi-query (K = 1), sliding_window 4096",
         D("mistral", 2, 16, 4, 20, kv_heads=1, sliding_window=4096, seed=3), dtype="F16",
         token_ids=[11, 22, 33, 4, 5], mutations=("interleaved_rope",)),
    Case("mistral F32, sliding_window null, head_dim key, --input x.npy (no embeddings read)",
         D("mistral", 2, 8, 2, 12, head_dim_key=True, seed=4), n=6),
    Case("qwen2 F32, q/k/v biases, GQA 4:2, tied",
         D("qwen2", 2, 8, 4, 12, kv_heads=2, tied=True, seed=5), token_ids=[2, 30, 17, 8, 25],
         mutations=("qwen2_no_bias", "gqa_modulo")),
    Case("qwen3 BF16, 2 shards, head_dim 8 != 12/4, per-head q_norm/k_norm, GQA 4:2",
         D("qwen3", 2, 12, 4, 16, kv_heads=2, head_dim=8, seed=6), dtype="BF16", shards=2,
         token_ids=[1, 2, 3, 5, 8, 13], mutations=("interleaved_rope",)),
    Case("olmo2 F32, reordered norms, q_norm/k_norm over the projections, GQA 4:2",
         D("olmo2", 2, 16, 4, 20, kv_heads=2, seed=7), token_ids=[9, 19, 29, 39, 0], mutations=("gqa_modulo",)),
    Case("gemma2 F32, head_dim 6, query_pre_attn_scalar 12, attn soft-cap 2, final soft-cap 5, --loss lm",
         D("gemma2", 2, 8, 2, 10, kv_heads=1, head_dim=6, query_pre_attn_scalar=12, attn_softcap=2.0,
           final_softcap=5.0, seed=8), token_ids=[4, 8, 15, 16, 23, 38], lm=True,
         mutations=("gemma_no_offset", "gemma_no_embed_scale", "gemma_no_final_softcap")),
    Case("gemma2 BF16, released soft-caps (50, 30), head_dim 8 != 16/4, GQA 4:2",
         D("gemma2", 2, 16, 4, 24, kv_heads=2, head_dim=8, seed=9), dtype="BF16", token_ids=[6, 5, 4, 3, 2],
         mutations=("gemma_no_offset",)),
    Case("gpt_neox F32 parallel residual, rotary_pct 0.25, untied embed_out, mask buffers, --loss lm",
         D("gpt_neox", 2, 16, 2, 32, rotary_pct=0.25, seed=10), token_ids=[10, 20, 30, 1, 2, 3],
         lm=True, mutations=("neox_consecutive_qkv", "residual_swap")),
    Case("gpt_neox F16 sequential residual, rope_theta + partial_rotary_factor 0.5, 2 shards",
         D("gpt_neox", 3, 8, 2, 16, rotary_pct=0.5, parallel=False, neox_rope_keys="rope_theta", seed=11),
         dtype="F16", shards=2, token_ids=[5, 6, 7, 8, 9], mutations=("residual_swap", "neox_consecutive_qkv")),
]


def expected_config(m):
    """What the report's config must say about the block config.json describes (defaults where gradflow may omit a
    key that has its default value)."""
    neox = m.family == "gpt_neox"
    return {  # key: (expected, default when absent)
        "weights_format": (m.weights_format(), None),
        "placement": ({"olmo2": "reorder", "gemma2": "sandwich"}.get(m.family, "pre")
                      if not neox else ("parallel" if m.parallel else "pre"), None),
        "layers": (m.layers, None), "d_model": (m.d, None), "heads": (m.heads, None), "d_ff": (m.d_ff, None),
        "kv_heads": (m.kv_heads, m.heads), "head_dim": (m.e, m.d // m.heads),
        "causal": (True, None), "rope": (True, None), "rope_theta": (m.rope_theta, None),
        "rotary_fraction": (m.rotary_pct, 1.0),
        "norm": ("layernorm" if neox else "rmsnorm", None), "norm_eps": (m.eps, None),
        "norm_offset": (m.family == "gemma2", False),
        "ffn": ({"gemma2": "geglu", "gpt_neox": "mlp"}.get(m.family, "swiglu"), None),
        "activation": ({"gemma2": "gelu-tanh", "gpt_neox": "gelu"}.get(m.family, "silu"), None),
        "bias": (neox, None), "qkv_bias": (m.family == "qwen2", False), "shared_norm": (False, False),
        "qk_norm": ({"qwen3": "head", "olmo2": "proj"}.get(m.family, "none"), "none"),
        "attn_softcap": (float(m.attn_softcap or 0.0) if m.family == "gemma2" else 0.0, 0.0),
        "attn_scale": (float(m.query_pre_attn_scalar) if m.family == "gemma2" else float(m.e), float(m.e)),
        "embed_scale": (math.sqrt(m.d) if m.family == "gemma2" else 1.0, 1.0),
        "final_norm": (True, None),
    }


def relative_errors(ref, got, J_ref, J_got):
    """|a - b| / max(|a|, |b|) per quantity (never more than the relative error tr.compare would report in either
    direction, so a value >= MUTATION_MIN_REL means compare fails), and the Jacobian's in Frobenius norm."""
    scale = max(abs(v) for v in ref.values())
    rel = {k: abs(got[k] - v) / max(abs(v), abs(got[k]), tol.ZERO_REL_TOL * scale) for k, v in ref.items() if k in got}
    if J_ref is not None and J_got is not None and J_got.shape == tuple(J_ref.shape):
        J_ref = J_ref.numpy()
        rel["Jacobian dy/dx_0"] = float(np.linalg.norm(J_got - J_ref) /
                                        max(np.linalg.norm(J_ref), np.linalg.norm(J_got)))
    return rel


def check_mutations(c, x0, g, loss_fn, got, J_got):
    """gradflow (the correct loader) against the reference computing each mistake: must be far apart."""
    failures = 0
    for mut in c.mutations:
        c.model.mutation = mut
        try:
            x0_mut = c.model.embed(c.token_ids) if c.token_ids else x0  # (a mistake in the embeddings moves x_0)
            ref, J = hd.reference(c.model, x0_mut, g, loss_fn)
        finally:
            c.model.mutation = None
        rel = relative_errors(ref, got, J, J_got)
        worst = max(rel, key=rel.get)
        ok = rel[worst] >= MUTATION_MIN_REL
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} mutation {mut}: gradflow differs from it by up to {rel[worst]:.2e} "
              f"({worst}); loss {rel['loss']:.2e}, Jacobian {rel.get('Jacobian dy/dx_0', float('nan')):.2e} "
              f"(>= {MUTATION_MIN_REL:g} required: {hd.MUTATIONS[mut]})")
    return failures


def float32_internals(model, x0, g):
    """Informational: the reference as Hugging Face's code computes it for a float64 model (RMSNorm, RoPE tables and
    softmax in float32) against the pure float64 reference; returns the largest relative difference and where."""
    ref, J = hd.reference(model, x0, g)
    model.hf_float32 = True
    try:
        ref32, J32 = hd.reference(model, x0, g)
    finally:
        model.hf_float32 = False
    rel = relative_errors(ref, ref32, J, J32.numpy())
    worst = max(rel, key=rel.get)
    return rel, worst


def check(gradflow, c, i, tmp):
    folder = os.path.join(tmp, f"ckpt{i}")
    m = c.model
    hd.round_to(m, c.dtype)
    hd.save(m, folder, dtype=c.dtype, shards=c.shards)

    torch.manual_seed(5000 + i)
    n = len(c.token_ids) if c.token_ids else c.n
    x0 = m.embed(c.token_ids) if c.token_ids else randn64(n, m.d)
    g = randn64(n, m.d)
    x, gp = os.path.join(tmp, f"{i}.x.npy"), os.path.join(tmp, f"{i}.g.npy")
    np.save(x, x0.numpy())
    np.save(gp, g.numpy())
    r, j = os.path.join(tmp, f"{i}.json"), os.path.join(tmp, f"{i}.J.npy")
    inputs = ["--token-ids", ",".join(map(str, c.token_ids))] if c.token_ids else ["--input", x]
    loss = ["--loss", "lm"] if c.lm else ["--cotangent", gp]
    label = f"[{i}] {c.label}"
    print(label)
    loss_fn = m.lm_loss(c.token_ids) if c.lm else None
    if c.float32_internals:
        rel, worst = float32_internals(m, x0, g)
        print(f"  info Hugging Face's float32 internals (RMSNorm, RoPE cos/sin, softmax) vs pure float64, loss "
              f"sum(g*y): largest relative difference {rel[worst]:.2e} ({worst}); loss {rel['loss']:.2e}, "
              f"Jacobian {rel['Jacobian dy/dx_0']:.2e} (not a failure: why the reference here is pure float64)")
    tr.run([gradflow, "analyze", "--weights", folder, *inputs, *loss, "--json", r, "-q"])
    tr.run([gradflow, "jacobian", "--weights", folder, *inputs, "--out", j])
    report = load_json(r)
    ref, J_ref = hd.reference(m, x0, g, loss_fn)
    got, J_got = tr.gradflow_quantities(report), np.load(j)
    failures = tr.compare(label, ref, got, J_ref, J_got)

    cfg = report["config"]
    if c.token_ids and cfg.get("token_ids") != c.token_ids:
        print(f"  FAIL config token_ids: {cfg.get('token_ids')!r}")
        failures += 1
    for k, (want, default) in expected_config(m).items():
        have = cfg.get(k, default)
        if have != want:
            print(f"  FAIL config {k}: {cfg.get(k, '(absent)')!r}, expected {want!r}")
            failures += 1
    recorded = cfg.get("weights_tensor_names", {})
    names = {f"layers.{l}.{k}": v for l in range(m.layers) for k, v in m.gradflow_sources(l).items()}
    names.update(m.final_sources)
    for name, srcs in names.items():
        want = m.source_text(name, srcs)
        if recorded.get(name) != want:
            print(f"  FAIL weights_tensor_names[{name}] = {recorded.get(name)!r}, expected {want!r}")
            failures += 1
    extra_names = sorted(set(recorded) - set(names))
    if extra_names:
        print(f"  FAIL weights_tensor_names has names the reference does not: {extra_names}")
        failures += 1
    outside = set(cfg.get("weights_not_analyzed", {}).get("tensors", []))
    if outside != set(m.extra):
        print(f"  FAIL weights_not_analyzed: {sorted(outside ^ set(m.extra))} differ")
        failures += 1
    if not failures:
        print(f"  ok   config: {len(expected_config(m))} block settings from config.json, {len(names)} "
              f"weights_tensor_names, {len(m.extra)} weights_not_analyzed")
    return failures + check_mutations(c, x0, g, loss_fn, got, J_got) + check_reexport(gradflow, c, i, folder, tmp)


# the settings of the block config.json describes (what `export --weights` must write back; not the embeddings'
# vocab_size, tie_word_embeddings or Gemma-2's final_logit_softcapping: the export holds no embeddings or head)
BLOCK_SETTINGS = ("family", "layers", "d", "heads", "kv_heads", "e", "d_ff", "rope_theta", "eps", "rotary_pct",
                  "parallel", "query_pre_attn_scalar", "attn_softcap")


def check_reexport(gradflow, c, i, folder, tmp):
    """`gradflow export --weights CHECKPOINT --format <its format>` (when offered): the block stack and final norm in
    the same names, shapes and values (the weights are the file dtype's, exported as F64: exactly equal), and a
    config.json describing the same block. Unlike the seeded exports below, the norms' weights here are not 1 (or
    Gemma's 0), so a permutation of the norms in the writer shows."""
    m = c.model
    if m.weights_format() not in export_help(gradflow):
        return 0
    out = os.path.join(tmp, f"reexport{i}")
    tr.run([gradflow, "export", "--weights", folder, "--format", m.weights_format(), "--out", out])
    state = tr.read_safetensors(os.path.join(out, "model.safetensors"))
    with open(os.path.join(out, "config.json")) as f:
        back = hd.Decoder.from_config(json.load(f))
    problems = []
    if set(state) != set(m.p):
        problems.append(f"names differ: missing {sorted(set(m.p) - set(state))}, extra {sorted(set(state) - set(m.p))}")
    problems += [f"{k}: {tuple(state[k].shape)} {'values differ' if state[k].shape == m.p[k].shape else 'shape'}"
                 for k in sorted(set(state) & set(m.p)) if not torch.equal(state[k], m.p[k])]
    problems += [f"config.json {k}: {getattr(back, k)!r}, expected {getattr(m, k)!r}"
                 for k in BLOCK_SETTINGS if getattr(back, k) != getattr(m, k)]
    for p in problems:
        print(f"  FAIL export --weights --format {m.weights_format()}: {p}")
    if not problems:
        print(f"  ok   export --weights --format {m.weights_format()}: the {len(state)} tensors bit for bit, "
              f"config.json's block settings the same")
    return len(problems)


# `gradflow export --format hf-*` of gradflow's own initialization (block stack and final norm, no embeddings), then:
# the folder holds exactly the reference stack's parameters (names and shapes, nothing extra: a strict load), PyTorch
# on those values agrees with `gradflow analyze` of the same seeded model, and gradflow reading the folder back gives
# the same numbers.
SIZES = ["--layers", "2", "--d-model", "16", "--heads", "4", "--kv-heads", "2", "--d-ff", "24"]
EXPORTS = [
    ("hf-llama", ["--arch", "llama", *SIZES]),
    ("hf-qwen2", ["--arch", "qwen2", *SIZES]),
    ("hf-qwen3", ["--arch", "qwen3", *SIZES, "--head-dim", "6"]),
    ("hf-olmo2", ["--arch", "olmo2", *SIZES]),
    ("hf-gemma2", ["--arch", "gemma2", *SIZES, "--head-dim", "6"]),
    ("hf-neox", ["--arch", "neox", "--layers", "2", "--d-model", "16", "--heads", "2", "--d-ff", "24"]),
]


def check_export(gradflow, i, fmt, options, tmp):
    folder = os.path.join(tmp, f"export{i}")
    n = 5
    model = [*options, "--seed", str(3 + i)]
    tr.run([gradflow, "export", *model, "--seq-len", str(n), "--format", fmt, "--out", folder])
    with open(os.path.join(folder, "config.json")) as f:
        ref = hd.Decoder.from_config(json.load(f))
    ref._init(0)  # the names and shapes config.json implies
    label = f"[export {i}] gradflow export {' '.join(options)} --format {fmt} -> strict load -> PyTorch"
    print(label)
    state = tr.read_safetensors(os.path.join(folder, "model.safetensors"))
    want = {k: tuple(v.shape) for k, v in ref.p.items()}
    got = {k: tuple(v.shape) for k, v in state.items()}
    if want != got:  # load_state_dict(strict=True): the same names and shapes, nothing missing or extra
        print(f"  FAIL names/shapes differ: missing {sorted(set(want) - set(got))}, "
              f"extra {sorted(set(got) - set(want))}, shapes {[k for k in want if k in got and want[k] != got[k]]}")
        return 1
    if ref.weights_format() != fmt:
        print(f"  FAIL config.json model_type {ref.family!r} is not {fmt}'s")
        return 1
    ref.p = state
    torch.manual_seed(6000 + i)
    x0, g = randn64(n, ref.d), randn64(n, ref.d)
    x, gp = os.path.join(tmp, f"e{i}.x.npy"), os.path.join(tmp, f"e{i}.g.npy")
    np.save(x, x0.numpy())
    np.save(gp, g.numpy())
    expected, J_ref = hd.reference(ref, x0, g)
    failures = 0
    for source, opts in (("seeded model", model), ("folder read back", ["--weights", folder])):
        r, j = os.path.join(tmp, f"e{i}.json"), os.path.join(tmp, f"e{i}.J.npy")
        tr.run([gradflow, "analyze", *opts, "--input", x, "--cotangent", gp, "--json", r, "-q"])
        tr.run([gradflow, "jacobian", *opts, "--input", x, "--out", j])
        failures += tr.compare(f"{label}: {source}", expected, tr.gradflow_quantities(load_json(r)), J_ref, np.load(j))
    return failures


@functools.lru_cache(maxsize=None)
def export_help(gradflow):
    """`gradflow export --help`: the capability check of the export sections (the formats it offers)."""
    return tr.run([gradflow, "export", "--help"]).stdout


# A run's checkpoints over training: Pythia-style revision folders step{N}/ of one architecture (different weights),
# analyzed by `gradflow analyze --weights PARENT --token-ids ...` on the same ids through each checkpoint's own
# embeddings: the steps in order, and each checkpoint's numbers PyTorch's on that checkpoint.
OVER_TRAINING = [(1000, 21), (143000, 23), (8000, 22)]  # (step, seed), written out of order


def check_over_training(gradflow, tmp):
    parent = os.path.join(tmp, "revisions")
    ids = [3, 14, 15, 9, 26, 5]
    models = {}
    for step, seed in OVER_TRAINING:
        m = D("gpt_neox", 2, 16, 2, 32, rotary_pct=0.25, seed=seed)
        hd.round_to(m, "F32")
        hd.save(m, os.path.join(parent, f"step{step}"), dtype="F32")
        models[step] = m
    r = os.path.join(tmp, "over.json")
    tr.run([gradflow, "analyze", "--weights", parent, "--token-ids", ",".join(map(str, ids)), "--loss", "lm",
            "--json", r, "-q"])
    report = load_json(r)
    label = "[over training] gpt_neox revision folders step1000/, step8000/, step143000/, --token-ids --loss lm"
    print(label)
    steps = [c["step"] for c in report["checkpoints"]]
    failures = 0
    if steps != sorted(s for s, _ in OVER_TRAINING) or report["over_training"]["steps"] != steps:
        print(f"  FAIL steps {steps}, over_training.steps {report['over_training']['steps']}")
        failures += 1
    for c in report["checkpoints"]:
        m = models[c["step"]]
        x0 = m.embed(ids)
        ref, J_ref = hd.reference(m, x0, randn64(len(ids), m.d), m.lm_loss(ids))
        j = os.path.join(tmp, f"over{c['step']}.J.npy")  # dy/dx_0 of that checkpoint alone
        tr.run([gradflow, "jacobian", "--weights", c["weights"], "--token-ids", ",".join(map(str, ids)), "--out", j])
        failures += tr.compare(f"{label}: step {c['step']}", ref, tr.gradflow_quantities(c["report"]), J_ref,
                               np.load(j))
    return failures


def main():
    gradflow = gradflow_binary()
    print(f"torch {torch.__version__}; tolerance: relative error <= {tol.REL_TOL:g}; mutations must differ by "
          f">= {MUTATION_MIN_REL:g}")
    failed = 0
    print("[reference] checks of the reference itself (hand-made layouts, finite differences)")
    self_failed = 0
    for name, ok, detail in hd.self_checks():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}: {detail}")
        self_failed += not ok
    failed += self_failed > 0
    total = 1 + len(CASES)
    with tempfile.TemporaryDirectory(prefix="gradflow_hf_decoder_") as tmp:
        for i, c in enumerate(CASES):
            try:
                failed += check(gradflow, c, i, tmp) > 0
            except Exception as e:
                print(f"FAIL [{i}] {c.label}: {type(e).__name__}: {e}")
                failed += 1
        for i, (fmt, options) in enumerate(EXPORTS):
            if fmt not in export_help(gradflow):  # the capability check: this gradflow's export lacks the format
                print(f"SKIP [export {i}] {fmt}: `gradflow export --help` does not offer it")
                continue
            total += 1
            try:
                failed += check_export(gradflow, i, fmt, options, tmp) > 0
            except Exception as e:
                print(f"FAIL [export {i}] {fmt}: {type(e).__name__}: {e}")
                failed += 1
        total += 1
        try:
            failed += check_over_training(gradflow, tmp) > 0
        except Exception as e:
            print(f"FAIL [over training]: {type(e).__name__}: {e}")
            failed += 1
    print(f"{total - failed}/{total} checks (reference self-checks, Hugging Face decoder checkpoints read, "
          f"exported, and over training) agree with PyTorch")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
