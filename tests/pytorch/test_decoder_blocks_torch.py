#!/usr/bin/python3
"""test_decoder_blocks_torch.py GRADFLOW — the decoder blocks' components (issue 32) against PyTorch autograd.

The gated feed-forwards (--ffn swiglu, geglu; linear3 the up projection), silu, linear layers without biases
(--bias off, --qkv-bias) and the parallel residual (--placement parallel, --shared-norm), with LayerNorm or RMSNorm
(Gemma's scale 1 + w: --norm-offset),
written from their equations in decoder_reference.py with gradflow's parameter names: random float64 weights are saved
as a safetensors state_dict, the input and cotangent as .npy; then
  gradflow analyze  --weights W --input X --cotangent G OPTIONS --json R   (loss, ||dL/dx_l||, ||dL/dtheta||, ||g||)
  gradflow jacobian --weights W --input X OPTIONS --out J.npy               (dy/dx_0, (n*d, n*d))
are compared with torch at relative error <= 1e-9 (tolerances.REL_TOL), one line each. Exit 1 on any failure, 77 when
torch or numpy cannot be imported.
"""
import os

from preamble import np, torch, load_json, randn64  # exits 77 (skipped) without numpy/torch
import decoder_reference as dr
import torch_reference as tr

CONFIGS = [
    # Llama's block: Pre-RMSNorm, SwiGLU, no biases, causal
    dr.Spec("pre", layers=2, d=8, heads=2, d_ff=12, n=4, ffn="swiglu", norm="rmsnorm", bias=False, causal=True),
    # Qwen2's biases: q, k, v only
    dr.Spec("pre", layers=2, d=6, heads=3, d_ff=10, n=3, ffn="swiglu", norm="rmsnorm", bias=False, qkv_bias=True,
            causal=True),
    # Gemma's feed-forward (GeGLU), one head, LayerNorm with biases
    dr.Spec("pre", layers=3, d=6, heads=1, d_ff=8, n=3, ffn="geglu", norm="layernorm"),
    # silu in a plain feed-forward
    dr.Spec("pre", layers=2, d=8, heads=4, d_ff=16, n=2, ffn="mlp", activation="silu", norm="layernorm", bias=False),
    # GPT-NeoX/Pythia: the parallel residual with two LayerNorms and biases
    dr.Spec("parallel", layers=2, d=8, heads=2, d_ff=16, n=4, ffn="mlp", activation="gelu", causal=True),
    # PaLM: parallel, one shared norm, SwiGLU, no biases
    dr.Spec("parallel", layers=3, d=6, heads=2, d_ff=10, n=3, ffn="swiglu", norm="rmsnorm", bias=False,
            shared_norm=True, causal=True),
    # a single token, parallel GeGLU
    dr.Spec("parallel", layers=2, d=4, heads=2, d_ff=6, n=1, ffn="geglu", norm="layernorm"),
    # the attention of today's decoders: Llama (GQA 2:1, RoPE), Qwen3 (QK-norm per head, heads wider than d/h),
    # OLMo-2 (reordered norms, QK-norm over the projections), Gemma-2 (sandwich, soft-cap, logit scale), Pythia
    # (parallel, a quarter of each head rotated, biases), multi-query with RoPE theta 1e6
    dr.Spec("pre", layers=2, d=8, heads=4, d_ff=12, n=5, ffn="swiglu", norm="rmsnorm", bias=False, causal=True,
            kv_heads=2, rope=1.0),
    dr.Spec("pre", layers=2, d=8, heads=4, d_ff=12, n=4, ffn="swiglu", norm="rmsnorm", bias=False, causal=True,
            kv_heads=2, head_dim=4, rope=1.0, qk_norm="head"),
    dr.Spec("reorder", layers=2, d=8, heads=2, d_ff=12, n=4, ffn="swiglu", norm="rmsnorm", bias=False, causal=True,
            rope=1.0, qk_norm="proj"),
    dr.Spec("sandwich", layers=2, d=8, heads=2, d_ff=10, n=4, ffn="geglu", norm="rmsnorm", bias=False, causal=True,
            kv_heads=1, head_dim=6, rope=1.0, softcap=2.0, attn_scale=5.0),
    dr.Spec("sandwich", layers=2, d=8, heads=4, d_ff=12, n=4, ffn="geglu", norm="rmsnorm", bias=False, causal=True,
            kv_heads=2, rope=1.0, softcap=50.0, norm_offset=True),  # the gemma2 preset's block: RMSNorm scale 1 + w
    dr.Spec("parallel", layers=2, d=8, heads=2, d_ff=16, n=4, ffn="mlp", activation="gelu", causal=True,
            rope=0.25, rope_theta=10000.0, head_dim=8),
    dr.Spec("pre", layers=2, d=6, heads=3, d_ff=8, n=3, ffn="mlp", activation="silu", norm="layernorm", kv_heads=1,
            head_dim=4, rope=0.5, rope_theta=1e6, qk_norm="head"),
]


def check(gradflow, spec, i, tmp):
    w, x, g = (os.path.join(tmp, f"{i}.{s}") for s in ("safetensors", "x.npy", "g.npy"))
    r, j = os.path.join(tmp, f"{i}.json"), os.path.join(tmp, f"{i}.J.npy")
    torch.manual_seed(2000 + i)
    stack = dr.Stack(spec)
    dr.randomize(stack, seed=i)
    tr.write_safetensors(w, stack.state_dict(), "F64")
    x0, cot = randn64(spec.n, spec.d), randn64(spec.n, spec.d)
    np.save(x, x0.numpy())
    np.save(g, cot.numpy())
    files = ["--weights", w, "--input", x]
    tr.run([gradflow, "analyze", *files, "--cotangent", g, *spec.gradflow_options(), "--json", r, "-q"])
    tr.run([gradflow, "jacobian", *files, *spec.gradflow_options(), "--out", j])
    ref, J_ref = dr.reference(stack, x0, cot)
    print(f"[{i}] {spec.label()}")
    return tr.compare(f"[{i}] {spec.label()}", ref, tr.gradflow_quantities(load_json(r)), J_ref, np.load(j))


if __name__ == "__main__":
    tr.run_configs(CONFIGS, check, "gradflow_decoder_")
