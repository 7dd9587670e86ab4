#!/usr/bin/python3
"""test_hf_checkpoints.py GRADFLOW — Hugging Face BERT, RoBERTa and GPT-2 checkpoints (built here in HF's layout
from reference modules written in plain PyTorch: hf_reference.py) analyzed by `gradflow analyze --weights` and
`gradflow jacobian --weights`, against PyTorch autograd on the reference modules: the loss, every ||dL/dx_l||,
every parameter-gradient norm and the full Jacobian dy/dx_0, relative error <= 1e-9 each. Covers float32,
float16 and bfloat16 files, with and without the base-model prefix, with and without config.json, the old
LayerNorm gamma/beta names, sharded checkpoints (model.safetensors.index.json), x_0 from --token-ids through
each family's embeddings (RoBERTa's padding-offset positions included), --loss lm (GPT-2's tied-head next-token
cross-entropy); and `gradflow export --format
hf-bert|hf-gpt2` round trips (the reference's exact names and shapes, the same numbers before and after).
Exit 1 on any failure, 77 (CTest SKIP_RETURN_CODE) when torch or numpy cannot be imported.
"""
import json
import os
import subprocess
import sys
import tempfile

from preamble import np, torch, gradflow_binary, load_json, randn64  # exits 77 (skipped) without numpy/torch
import tolerances as tol
import hf_reference as hf
import torch_reference as tr


class Case:
    def __init__(self, label, model, fmt, prefix="", dtype="F32", shards=1, config=True, as_file=False,
                 options=(), old_ln_names=False, n=4, model_type=None, token_ids=None, lm=False):
        self.__dict__.update(locals())
        del self.__dict__["self"]


CASES = [
    Case("BERT F32 bert. prefix, config.json", hf.Bert(2, 8, 2, 16, seed=1), "hf-bert", prefix="bert."),
    Case("RoBERTa F16 roberta. prefix, 3 shards", hf.Bert(2, 8, 4, 12, seed=2), "hf-roberta", prefix="roberta.",
         dtype="F16", shards=3, model_type="roberta"),
    Case("BERT BF16 unprefixed file, no config (--heads), gamma/beta names", hf.Bert(3, 6, 3, 10, seed=3), "hf-bert",
         dtype="BF16", config=False, as_file=True, options=("--heads", "3"), old_ln_names=True, n=5),
    Case("BERT relu eps 1e-5 one token", hf.Bert(2, 8, 2, 16, act="relu", eps=1e-5, seed=4), "hf-bert", n=1),
    Case("GPT-2 F32 transformer. prefix, config.json", hf.GPT2(2, 8, 2, seed=5), "hf-gpt2", prefix="transformer."),
    Case("GPT-2 BF16 unprefixed, 2 shards, n_inner=12", hf.GPT2(3, 8, 4, d_ff=12, seed=6), "hf-gpt2", dtype="BF16",
         shards=2, n=5),
    Case("GPT-2 F16 file, no config (--heads)", hf.GPT2(2, 6, 2, seed=7), "hf-gpt2", dtype="F16", config=False,
         as_file=True, options=("--heads", "2")),
    # x_0 from --token-ids through the checkpoint's own embeddings
    Case("BERT F32 --token-ids", hf.Bert(2, 8, 2, 16, seed=8), "hf-bert", prefix="bert.", token_ids=[2, 17, 5, 29, 3]),
    Case("RoBERTa BF16 --token-ids with a padding token (positions from padding_idx + 1)", hf.Bert(2, 8, 2, 16, seed=9),
         "hf-roberta", prefix="roberta.", dtype="BF16", model_type="roberta", token_ids=[0, 7, 1, 12, 2]),
    Case("GPT-2 F32 --token-ids", hf.GPT2(2, 8, 2, seed=10), "hf-gpt2", prefix="transformer.",
         token_ids=[5, 39, 0, 11, 11, 7]),
    # the gradient training would see: next-token cross-entropy through the tied wte head
    Case("GPT-2 F32 --token-ids --loss lm", hf.GPT2(3, 8, 2, seed=11), "hf-gpt2", prefix="transformer.",
         token_ids=[5, 39, 0, 11, 11, 7, 23], options=("--loss", "lm"), lm=True),
    Case("GPT-2 BF16 2 shards --loss lm two tokens", hf.GPT2(2, 8, 4, seed=12), "hf-gpt2", dtype="BF16", shards=2,
         token_ids=[3, 30], options=("--loss", "lm"), lm=True),
]


def expected_names(model):
    """gradflow name -> the source text the report must record (hf_reference's own map, independent of gradflow)."""
    out = {}
    transposed = isinstance(model, hf.GPT2)
    for i in range(model.layers):
        for name, srcs in model.gradflow_sources(i).items():
            out[f"layers.{i}.{name}"] = srcs
    out.update(model.final_sources)
    return out, transposed


def check(gradflow, c, i, tmp):
    folder = os.path.join(tmp, f"ckpt{i}")
    hf.round_to(c.model, c.dtype)
    hf.save(c.model, folder, prefix=c.prefix, dtype=c.dtype, shards=c.shards, config=c.config,
            model_type=c.model_type)
    if c.old_ln_names:  # rewrite the file with LayerNorm.gamma / .beta (pre-2019 BERT checkpoints)
        state = {c.prefix + k: v for k, v in {**c.model.p, **c.model.extra}.items()}
        state = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
                 for k, v in state.items()}
        tr.write_safetensors(os.path.join(folder, "model.safetensors"), state, c.dtype)
    weights = os.path.join(folder, "model.safetensors") if c.as_file else folder

    torch.manual_seed(3000 + i)
    n = len(c.token_ids) if c.token_ids else c.n
    if c.token_ids:
        x0 = c.model.embed(c.token_ids, roberta=c.fmt == "hf-roberta", pad=1)
    else:
        x0 = randn64(n, c.model.d)
    g = randn64(n, c.model.d)
    x, gp = os.path.join(tmp, f"{i}.x.npy"), os.path.join(tmp, f"{i}.g.npy")
    np.save(x, x0.numpy())
    np.save(gp, g.numpy())
    r, j = os.path.join(tmp, f"{i}.json"), os.path.join(tmp, f"{i}.J.npy")
    common = ["--weights", weights, *c.options]
    inputs = ["--token-ids", ",".join(map(str, c.token_ids))] if c.token_ids else ["--input", x]
    cot = [] if c.lm else ["--cotangent", gp]
    tr.run([gradflow, "analyze", *common, *inputs, *cot, "--json", r, "-q"])
    tr.run([gradflow, "jacobian", *common, *inputs, "--out", j])
    report = load_json(r)
    ref, J_ref = hf.reference(c.model, x0, g, hf.lm_loss(c.model, c.token_ids) if c.lm else None)
    label = f"[{i}] {c.label}"
    print(label)
    failures = tr.compare(label, ref, tr.gradflow_quantities(report), J_ref, np.load(j))

    cfg = report["config"]
    if c.token_ids and cfg.get("token_ids") != c.token_ids:
        print(f"  FAIL config token_ids: {cfg.get('token_ids')!r}")
        failures += 1
    names, transposed = expected_names(c.model)
    want_cfg = {"weights_format": c.fmt, "placement": "pre" if transposed else "post", "causal": transposed,
                "heads": c.model.heads, "norm_eps": c.model.eps,
                "activation": {"gelu": "gelu", "gelu_new": "gelu-tanh", "relu": "relu"}[c.model.act]}
    for k, v in want_cfg.items():
        if cfg.get(k) != v:
            print(f"  FAIL config {k}: {cfg.get(k)!r}, expected {v!r}")
            failures += 1
    recorded = cfg.get("weights_tensor_names", {})
    for name, srcs in names.items():
        srcs = [c.prefix + s for s in srcs]
        if c.old_ln_names:
            srcs = [s.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta") for s in srcs]
        want = " + ".join(srcs) + (" (transposed)" if transposed and name.endswith("weight") and "norm" not in name else "")
        if recorded.get(name) != want:
            print(f"  FAIL weights_tensor_names[{name}] = {recorded.get(name)!r}, expected {want!r}")
            failures += 1
    outside = set(cfg.get("weights_not_analyzed", {}).get("tensors", []))
    want_outside = {c.prefix + k for k in c.model.extra}
    if c.old_ln_names:
        want_outside = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
                        for k in want_outside}
    if outside != want_outside:
        print(f"  FAIL weights_not_analyzed: {sorted(outside ^ want_outside)} differ")
        failures += 1
    return failures


# `gradflow export --format hf-*` of gradflow's own initialization, then: the folder holds exactly the reference
# module's parameters (names and shapes, nothing extra: a strict load), PyTorch on those values agrees with
# `gradflow analyze` of the same seeded model, and gradflow reading the folder back gives the same numbers.
EXPORTS = [
    ("hf-bert", hf.Bert, ["--placement", "post", "--activation", "gelu", "--layers", "2", "--d-model", "8",
                          "--heads", "2", "--d-ff", "12", "--init", "xavier"]),
    ("hf-gpt2", hf.GPT2, ["--placement", "pre", "--causal", "--activation", "gelu-tanh", "--layers", "3",
                          "--d-model", "8", "--heads", "4", "--init", "gpt2"]),
]


def check_export(gradflow, i, fmt, cls, options, tmp):
    folder = os.path.join(tmp, f"export{i}")
    n = 4
    model = [*options, "--seed", str(70 + i)]
    tr.run([gradflow, "export", *model, "--seq-len", str(n), "--format", fmt, "--out", folder])
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    state = tr.read_safetensors(os.path.join(folder, "model.safetensors"))
    if cls is hf.Bert:
        ref = hf.Bert(cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"],
                      cfg["intermediate_size"], act=cfg["hidden_act"], eps=cfg["layer_norm_eps"])
    else:
        ref = hf.GPT2(cfg["n_layer"], cfg["n_embd"], cfg["n_head"], d_ff=cfg["n_inner"],
                      act=cfg["activation_function"], eps=cfg["layer_norm_epsilon"])
    label = f"[export {i}] gradflow export --format {fmt} -> strict load -> PyTorch"
    failures = 0
    want = {k: tuple(v.shape) for k, v in ref.p.items()}
    got = {k: tuple(v.shape) for k, v in state.items()}
    if want != got:  # load_state_dict(strict=True): the same names and shapes, nothing missing or extra
        print(f"  FAIL names/shapes differ: missing {sorted(set(want) - set(got))}, extra {sorted(set(got) - set(want))},"
              f" shapes {[k for k in want if k in got and want[k] != got[k]]}")
        return 1
    ref.p = state
    torch.manual_seed(4000 + i)
    x0 = randn64(n, ref.d)
    g = randn64(n, ref.d)
    x, gp = os.path.join(tmp, f"e{i}.x.npy"), os.path.join(tmp, f"e{i}.g.npy")
    np.save(x, x0.numpy())
    np.save(gp, g.numpy())
    expected, J_ref = hf.reference(ref, x0, g)
    print(label)
    for source, opts in (("seeded model", model), ("folder read back", ["--weights", folder])):
        r, j = os.path.join(tmp, f"e{i}.json"), os.path.join(tmp, f"e{i}.J.npy")
        tr.run([gradflow, "analyze", *opts, "--input", x, "--cotangent", gp, "--json", r, "-q"])
        tr.run([gradflow, "jacobian", *opts, "--input", x, "--out", j])
        report = load_json(r)
        failures += tr.compare(f"{label}: {source}", expected, tr.gradflow_quantities(report), J_ref, np.load(j))
    # exporting into the folder it reads is refused before any work (the checkpoint would be replaced)
    p = subprocess.run([gradflow, "export", "--weights", folder, "--format", fmt, "--out", folder],
                       capture_output=True, text=True)
    if p.returncode != 2 or "is the file --weights reads" not in p.stderr:
        print(f"  FAIL export --out into the --weights folder: exit {p.returncode}: {p.stderr.strip()}")
        failures += 1
    return failures


def main():
    gradflow = gradflow_binary()
    print(f"torch {torch.__version__}; tolerance: relative error <= {tol.REL_TOL:g}")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gradflow_hf_") as tmp:
        for i, c in enumerate(CASES):
            try:
                failed += check(gradflow, c, i, tmp) > 0
            except Exception as e:
                print(f"FAIL [{i}] {c.label}: {type(e).__name__}: {e}")
                failed += 1
        for i, (fmt, cls, options) in enumerate(EXPORTS):
            try:
                failed += check_export(gradflow, i, fmt, cls, options, tmp) > 0
            except Exception as e:
                print(f"FAIL [export {i}] {fmt}: {type(e).__name__}: {e}")
                failed += 1
    total = len(CASES) + len(EXPORTS)
    print(f"{total - failed}/{total} Hugging Face checkpoints (read, and exported) agree with PyTorch")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
