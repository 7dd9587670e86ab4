#!/usr/bin/python3
"""test_against_torch.py GRADFLOW — gradflow against PyTorch autograd on nn.TransformerEncoder checkpoints.

For each configuration (post and pre (norm_first), relu and gelu, causal or not, with and without a final
norm, h = 1 and n = 1 among the sizes, F64/F32/F16/BF16 checkpoints, and the placements PyTorch expresses
with its own submodules: --residual-scale, deepnorm, b2t, mix, lns, reorder; and hybridnorm(-star), whose per-head
Q, K, V norms are nn.LayerNorm modules added to self_attn and whose attention is written out): random float64 weights with LayerNorm gains
and biases away from 1 and 0 are saved as safetensors, the input and cotangent as .npy; then
  gradflow analyze  --weights W --input X --cotangent G --json R   (loss, every ||dL/dx_l||, every ||dL/dtheta||, ||g||)
  gradflow jacobian --weights W --input X --out J.npy              (dy/dx_0, (n*d, n*d))
are compared with torch: relative error <= 1e-9 for each quantity, one line each. Exit 1 on any failure,
77 (CTest SKIP_RETURN_CODE) when torch or numpy cannot be imported.
"""
import os

from preamble import np, torch, load_json, randn64  # exits 77 (skipped) without numpy/torch
import torch_reference as tr

CONFIGS = [
    tr.Spec("post", layers=2, d=8, heads=2, d_ff=16, n=4, activation="relu"),
    tr.Spec("post", layers=3, d=6, heads=1, d_ff=10, n=5, activation="gelu", causal=True, final_norm=True,
            dtype="F32", batch_dim=True),
    tr.Spec("post", layers=2, d=4, heads=1, d_ff=8, n=1, activation="relu", final_norm=True),
    tr.Spec("pre", layers=2, d=8, heads=4, d_ff=12, n=1, activation="relu", causal=True, final_norm=True),
    tr.Spec("pre", layers=3, d=4, heads=2, d_ff=8, n=6, activation="gelu", dtype="BF16", batch_dim=True),
    tr.Spec("pre", layers=1, d=12, heads=3, d_ff=20, n=3, activation="gelu", causal=True, dtype="F16"),
    tr.Spec("pre", layers=2, d=6, heads=1, d_ff=6, n=4, activation="relu", final_norm=True),
    tr.Spec("post", layers=2, d=6, heads=2, d_ff=12, n=3, activation="gelu", final_norm=False, causal=True,
            residual_scale=0.5),
    tr.Spec("pre", layers=2, d=6, heads=3, d_ff=12, n=3, activation="relu", final_norm=True, residual_scale=2.0),
    tr.Spec("deepnorm", layers=2, d=6, heads=2, d_ff=12, n=3, activation="gelu", deepnorm_alpha=1.7),
    tr.Spec("b2t", layers=2, d=6, heads=2, d_ff=12, n=3, activation="relu", causal=True),
    tr.Spec("mix", layers=3, d=6, heads=2, d_ff=12, n=3, activation="gelu", final_norm=True, mix_post_layers=1),
    tr.Spec("lns", layers=3, d=6, heads=2, d_ff=12, n=3, activation="gelu", final_norm=True),
    tr.Spec("lns", layers=2, d=8, heads=4, d_ff=10, n=4, activation="relu", causal=True, final_norm=True,
            residual_scale=0.5),
    tr.Spec("reorder", layers=3, d=6, heads=2, d_ff=12, n=3, activation="relu", final_norm=True),
    tr.Spec("reorder", layers=2, d=8, heads=2, d_ff=16, n=4, activation="gelu", causal=True, final_norm=True),
    tr.Spec("hybridnorm", layers=2, d=8, heads=2, d_ff=16, n=4, activation="gelu", final_norm=True),
    tr.Spec("hybridnorm", layers=2, d=6, heads=1, d_ff=10, n=3, activation="relu", causal=True, final_norm=True,
            residual_scale=0.7),
    tr.Spec("hybridnorm-star", layers=3, d=8, heads=2, d_ff=12, n=4, activation="gelu", causal=True, final_norm=True),
    # ResiDual: two streams; the Jacobian is dy/d[x_a,0 | x_d,0], (n*d, n*2d)
    tr.Spec("resi-dual", layers=3, d=6, heads=2, d_ff=12, n=3, activation="gelu", final_norm=True),
    tr.Spec("resi-dual", layers=2, d=8, heads=4, d_ff=10, n=4, activation="relu", causal=True, final_norm=True,
            residual_scale=0.5),
]


def check(gradflow, spec, i, tmp):
    w, x, g = (os.path.join(tmp, f"{i}.{s}") for s in ("safetensors", "x.npy", "g.npy"))
    r, j = os.path.join(tmp, f"{i}.json"), os.path.join(tmp, f"{i}.J.npy")
    torch.manual_seed(1000 + i)
    enc = tr.build_encoder(spec)
    tr.randomize(enc, seed=i)
    state = tr.rounded(enc.state_dict(), spec.dtype)  # what the reader of spec.dtype will see
    enc.load_state_dict(state)
    tr.write_safetensors(w, state, spec.dtype)
    x0 = randn64(spec.n, spec.d)
    cot = randn64(spec.n, spec.d)
    np.save(x, x0.numpy()[None] if spec.batch_dim else x0.numpy())  # (1, n, d) or (n, d)
    np.save(g, cot.numpy())

    files = ["--weights", w, "--input", x]
    tr.run([gradflow, "analyze", *files, "--cotangent", g, *spec.gradflow_options(), "--json", r, "-q"])
    tr.run([gradflow, "jacobian", *files, *spec.gradflow_options(), "--out", j])
    report = load_json(r)
    ref, J_ref = tr.reference(spec, enc, x0, cot)
    print(f"[{i}] {spec.label()}")
    return tr.compare(f"[{i}] {spec.label()}", ref, tr.gradflow_quantities(report), J_ref, np.load(j),
                      zero=lambda key: tr.exactly_zero(spec, key))


if __name__ == "__main__":
    tr.run_configs(CONFIGS, check, "gradflow_torch_")
