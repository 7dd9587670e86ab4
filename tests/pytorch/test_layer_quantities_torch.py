#!/usr/bin/python3
"""test_layer_quantities_torch.py GRADFLOW — issue 15's per-layer quantities against PyTorch on the same weights.

For each configuration (post and pre, causal or not, h = 1..4, n = 1 among the sizes, --residual-scale, deepnorm,
b2t), random float64 weights are saved as safetensors and the input/cotangent as .npy (as in test_against_torch.py);
`gradflow analyze` reports, and PyTorch recomputes from its own modules:
  token_geometry of every x_l and of y   torch.nn.functional.cosine_similarity, torch.linalg.matrix_norm(ord=2)
  attention entropy / max / self         nn.MultiheadAttention(need_weights=True, average_attn_weights=False) called
                                         on the input a forward pre-hook caught at self_attn
  branch_ratio                           forward hooks on self_attn and linear2 (the branch outputs), the unit inputs
                                         from the split forward (torch_reference.layer_forward's composition)
  attention_grad_norms, qk_grad_share    in_proj_weight.grad's row blocks and out_proj.weight.grad after backward
  output_sensitivity                     the same probes δ (gradflow's seeded streams, torch_reference's port of its
                                         RNG): ||J_θ δ||² from autograd (the double-backward form of the parameter
                                         JVP) and ||y(θ + δ) − y(θ)||² from a perturbed copy, mean and standard error
Each relative error <= 1e-9 (tolerances.REL_TOL); exit 1 on any failure, 77 when torch/numpy are missing.
"""
import math
import os
import sys
import tempfile

from preamble import np, torch, gradflow_binary, load_json, randn64  # exits 77 (skipped) without numpy/torch
import tolerances as tol
import torch_reference as tr

CONFIGS = [
    tr.Spec("post", layers=2, d=8, heads=2, d_ff=16, n=5, activation="relu"),
    tr.Spec("pre", layers=3, d=8, heads=4, d_ff=12, n=6, activation="gelu", causal=True, final_norm=True),
    tr.Spec("post", layers=2, d=6, heads=1, d_ff=10, n=4, activation="gelu", causal=True, residual_scale=0.5),
    tr.Spec("pre", layers=2, d=6, heads=3, d_ff=12, n=3, activation="relu", final_norm=True, residual_scale=2.0),
    tr.Spec("pre", layers=2, d=4, heads=2, d_ff=8, n=1, activation="relu"),
    tr.Spec("deepnorm", layers=2, d=6, heads=2, d_ff=12, n=3, activation="gelu", deepnorm_alpha=1.7),
    tr.Spec("b2t", layers=2, d=6, heads=2, d_ff=12, n=4, activation="relu", causal=True),
]


def geometry(X):
    """mean pairwise cosine (i != j), ||X - 1 xbar^T||_F / ||X||_F, ||X||_F^2 / ||X||_2^2 of an (n, d) tensor."""
    n = X.shape[0]
    C = torch.nn.functional.cosine_similarity(X.unsqueeze(1), X.unsqueeze(0), dim=-1, eps=0.0)
    cos = ((C.sum() - C.diagonal().sum()) / (n * (n - 1))).item() if n > 1 else None
    fro = torch.linalg.matrix_norm(X).item()
    return {"mean_cosine": cos, "rank_one_distance": (torch.linalg.matrix_norm(X - X.mean(0)) / fro).item(),
            "stable_rank": fro ** 2 / torch.linalg.matrix_norm(X, ord=2).item() ** 2}


def attention_stats(A, causal):
    """A: (heads, n, n) probabilities from nn.MultiheadAttention."""
    n = A.shape[-1]
    ent = -(torch.where(A > 0, A * torch.log(A), torch.zeros_like(A))).sum(-1).mean(-1)  # (heads,)
    self_att = A.diagonal(dim1=-2, dim2=-1).mean(-1)
    hmax = sum(math.log(i + 1) for i in range(n)) / n if causal else math.log(n)
    return ent, self_att, hmax


def reference(spec, enc, x0, g):
    mask = tr.causal_mask(spec.n) if spec.causal else None
    caught, branch = {}, {}
    hooks = []
    for l, lay in enumerate(enc.layers):
        hooks.append(lay.self_attn.register_forward_pre_hook(lambda m, a, l=l: caught.__setitem__(l, a[0].detach())))
        hooks.append(lay.self_attn.register_forward_hook(
            lambda m, a, o, l=l: branch.__setitem__((l, "attention"), o[0].detach())))
        hooks.append(lay.linear2.register_forward_hook(
            lambda m, a, o, l=l: branch.__setitem__((l, "feed_forward"), o.detach())))
    enc.zero_grad(set_to_none=True)
    x = x0.detach().clone().unsqueeze(0).requires_grad_(True)
    xs = []
    y = tr.network(spec, enc, x, mask, xs)
    (y * g.unsqueeze(0)).sum().backward()
    for h in hooks:
        h.remove()
    ref = {}
    lam = spec.residual_scale
    alpha = spec.deepnorm_alpha if spec.placement == "deepnorm" else 1.0
    for l, lay in enumerate(enc.layers):
        xl = xs[l][0].detach()
        for k, v in geometry(xl).items():
            ref[f"layers.{l}.token_geometry.{k}"] = v
        with torch.no_grad():
            _, A = lay.self_attn(caught[l], caught[l], caught[l], attn_mask=mask, need_weights=True,
                                 average_attn_weights=False)
        ent, self_att, hmax = attention_stats(A[0], spec.causal)
        ref[f"layers.{l}.attention.entropy"] = ent.mean().item()
        ref[f"layers.{l}.attention.max_entropy"] = hmax
        ref[f"layers.{l}.attention.self_attention"] = self_att.mean().item()
        for h in range(spec.heads):
            ref[f"layers.{l}.attention.heads.{h}.entropy"] = ent[h].item()
            ref[f"layers.{l}.attention.heads.{h}.self_attention"] = self_att[h].item()
        # the residual stream each unit adds to (its skip term), from the same composition as layer_forward
        sa, ff = branch[(l, "attention")][0], branch[(l, "feed_forward")][0]
        if spec.layer_is_post(l):
            h_mid = lay.norm1(alpha * xl + lam * sa).detach()
        else:
            h_mid = (xl + lam * sa).detach()
        ref[f"layers.{l}.branch_ratio.attention"] = (lam * sa.norm() / (alpha * xl).norm()).item()
        ref[f"layers.{l}.branch_ratio.feed_forward"] = (lam * ff.norm() / (alpha * h_mid).norm()).item()
        W, d = lay.self_attn.in_proj_weight.grad, spec.d
        parts = [W[i * d:(i + 1) * d].norm().item() for i in range(3)] + [lay.self_attn.out_proj.weight.grad.norm().item()]
        for name, v in zip(("query", "key", "value", "out"), parts):
            ref[f"layers.{l}.attention_grad_norms.{name}"] = v
        ref[f"layers.{l}.qk_grad_share"] = (parts[0] ** 2 + parts[1] ** 2) / sum(p * p for p in parts)
    for k, v in geometry(y[0].detach()).items():
        ref[f"output_token_geometry.{k}"] = v
    return ref


SENSITIVITY_PROBES, SENSITIVITY_SIZE = 2, 1e-3


def sensitivity_reference(spec, enc, x0, seed):
    """output_sensitivity for gradflow's probes: delta_k = r*|theta|*xi with xi from stream "sensitivity/k/<name>"."""
    import copy
    mask = tr.causal_mask(spec.n) if spec.causal else None
    x = x0.detach().clone().unsqueeze(0)
    names, params = zip(*enc.named_parameters())
    with torch.no_grad():
        y0 = tr.network(spec, enc, x, mask)
    first, fd = [], []
    for k in range(SENSITIVITY_PROBES):
        deltas = [SENSITIVITY_SIZE * p.detach().abs() * torch.from_numpy(
            tr.gradflow_random_normal(seed, f"sensitivity/{k}/{name}", 1, p.numel())).reshape(p.shape)
            for name, p in zip(names, params)]
        # J_theta delta as the gradient in u of <d/dtheta <u, y>, delta> (exact: linear in u)
        y = tr.network(spec, enc, x, mask)
        u = torch.zeros_like(y, requires_grad=True)
        grads = torch.autograd.grad((y * u).sum(), params, create_graph=True, allow_unused=True)
        inner = sum((g * dl).sum() for g, dl in zip(grads, deltas) if g is not None)
        first.append(torch.autograd.grad(inner, u)[0].pow(2).sum().item())
        moved = copy.deepcopy(enc)
        with torch.no_grad():
            for p, dl in zip(moved.parameters(), deltas):
                p.add_(dl)
            fd.append((tr.network(spec, moved, x, mask) - y0).pow(2).sum().item())

    def mean_se(v):
        m = sum(v) / len(v)
        return m, math.sqrt(sum((a - m) ** 2 for a in v) / (len(v) - 1) / len(v))
    (a, a_se), (b, b_se) = mean_se(first), mean_se(fd)
    return {"output_sensitivity.first_order": a, "output_sensitivity.first_order_stderr": a_se,
            "output_sensitivity.finite_difference": b, "output_sensitivity.finite_difference_stderr": b_se}


def flatten(j, prefix, out):
    if isinstance(j, dict):
        for k, v in j.items():
            flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(j, list):
        for i, v in enumerate(j):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = j


def check(gradflow, spec, i, tmp):
    w, x, g, r = (os.path.join(tmp, f"{i}.{s}") for s in ("safetensors", "x.npy", "g.npy", "json"))
    torch.manual_seed(2000 + i)
    enc = tr.build_encoder(spec)
    tr.randomize(enc, seed=100 + i)
    state = tr.rounded(enc.state_dict(), spec.dtype)
    enc.load_state_dict(state)
    tr.write_safetensors(w, state, spec.dtype)
    x0 = randn64(spec.n, spec.d)
    cot = randn64(spec.n, spec.d)
    np.save(x, x0.numpy())
    np.save(g, cot.numpy())
    seed = 7 + i  # with --weights, --input and --cotangent it seeds only the sensitivity probes
    tr.run([gradflow, "analyze", "--weights", w, "--input", x, "--cotangent", g, *spec.gradflow_options(),
            "--sensitivity-probes", str(SENSITIVITY_PROBES), "--sensitivity-size", repr(SENSITIVITY_SIZE),
            "--seed", str(seed), "--json", r, "-q"])
    report = load_json(r)
    got = {}
    for l, layer in enumerate(report["layers"]):
        for key in ("token_geometry", "attention", "branch_ratio", "attention_grad_norms", "qk_grad_share"):
            flatten(layer.get(key), f"layers.{l}.{key}", got)
    flatten(report.get("output_token_geometry"), "output_token_geometry", got)
    flatten(report.get("output_sensitivity"), "output_sensitivity", got)
    ref = reference(spec, enc, x0, cot)
    ref.update(sensitivity_reference(spec, enc, x0, seed))
    print(f"[{i}] {spec.label()}")
    failures = 0
    for key, want in ref.items():
        have = got.get(key, "missing")
        if want is None or have is None:  # n = 1: no pair of tokens, gradflow writes null
            ok = want is None and have is None
            rel = 0.0
        elif have == "missing":
            ok, rel = False, float("inf")
        else:
            rel = abs(have - want) / max(abs(want), 1e-300)
            ok = rel <= tol.REL_TOL or (want == 0 and abs(have) <= tol.ZERO_ABS_TOL)
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} {key:<48} torch {want!s:<24} gradflow {have!s:<24} rel {rel:.2e}")
    extra = sorted(set(got) - set(ref))
    if extra:
        print(f"  FAIL gradflow reports quantities torch does not have: {extra}")
        failures += 1
    return failures


def main():
    gradflow = gradflow_binary()
    print(f"torch {torch.__version__}; tolerance: relative error <= {tol.REL_TOL:g}")
    failed = []
    with tempfile.TemporaryDirectory(prefix="gradflow_torch_lq_") as tmp:
        for i, spec in enumerate(CONFIGS):
            try:
                if check(gradflow, spec, i, tmp):
                    failed.append(spec.label())
            except Exception as e:  # a crash of either side fails this configuration
                print(f"FAIL [{i}] {spec.label()}: {type(e).__name__}: {e}")
                failed.append(spec.label())
    print(f"{len(CONFIGS) - len(failed)}/{len(CONFIGS)} configurations agree with PyTorch")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
