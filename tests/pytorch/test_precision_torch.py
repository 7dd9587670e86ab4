#!/usr/bin/python3
"""test_precision_torch.py GRADFLOW — `gradflow analyze --precision f32|bf16` against PyTorch's own float32 and
bfloat16 runs of the same nn.TransformerEncoder (Post-LN and Pre-LN, L <= 6, d <= 64), on the same float64 weights,
input and cotangent cast to the type (PyTorch: `model.to(dtype)`, Debian's torch 1.13 on the CPU).

- f32: every ||dL/dx_l|| at float32 within F32_NORM_REL_TOL (1e-5, the issue's bound) of PyTorch's float32 one.
- bf16: the two emulations round the same operations to the same type but sum in other orders (OpenBLAS's SGEMM vs
  oneDNN's, a fused LayerNorm vs two rounded steps, the attention scale applied to q vs inside the product), so their
  bits differ and their errors are two draws of the same rounding process: compared as statistics. Per layer, the
  relative error of dL/dx_l against float64 (gradflow's against its float64 run, PyTorch's against its own) agrees
  within a factor BF16_ERROR_RATIO. A class of operations rounded to the wrong type moves it by far more (float32
  instead of bfloat16: 2^16 in unit roundoff), a different summation order does not.
Exit 1 on any failure, 77 when torch or numpy cannot be imported.
"""
import os

from preamble import np, torch, load_json, randn64  # exits 77 (skipped) without numpy/torch
import torch_reference as tr

F32_NORM_REL_TOL = 1e-5
BF16_ERROR_RATIO = 3.0

CONFIGS = [
    tr.Spec("post", layers=6, d=64, heads=4, d_ff=128, n=16, activation="relu"),
    tr.Spec("pre", layers=6, d=64, heads=4, d_ff=128, n=16, activation="gelu", final_norm=True),
    tr.Spec("post", layers=3, d=32, heads=2, d_ff=64, n=8, activation="gelu", causal=True, final_norm=True),
]


def torch_grads(spec, enc, x0, g, dtype):
    """dL/dx_l for l = 0..L-1 of the encoder cast to dtype, as float64 numpy arrays."""
    import copy  # noqa: PLC0415
    e = copy.deepcopy(enc).to(dtype)
    e.train()
    mask = tr.causal_mask(spec.n).to(dtype) if spec.causal else None
    x = x0.to(dtype).detach().clone().unsqueeze(0).requires_grad_(True)
    xs = []
    y = tr.network(spec, e, x, mask, xs)
    (y * g.to(dtype).unsqueeze(0)).sum().backward()
    return [xl.grad[0].to(torch.float64).numpy() for xl in xs]


def check(gradflow, spec, i, tmp):
    w, x, gpath = (os.path.join(tmp, f"{i}.{s}") for s in ("safetensors", "x.npy", "g.npy"))
    torch.manual_seed(2000 + i)
    enc = tr.build_encoder(spec)
    tr.randomize(enc, seed=100 + i)
    tr.write_safetensors(w, enc.state_dict(), "F64")
    x0, g = randn64(spec.n, spec.d), randn64(spec.n, spec.d)
    np.save(x, x0.numpy())
    np.save(gpath, g.numpy())
    ref = torch_grads(spec, enc, x0, g, torch.float64)
    failures = 0
    print(f"[{i}] {spec.label()}")
    for p, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        r = os.path.join(tmp, f"{i}.{p}.json")
        tr.run([gradflow, "analyze", "--weights", w, "--input", x, "--cotangent", gpath, *spec.gradflow_options(),
                "--precision", p, "--json", r, "-q"])
        layers = load_json(r)["layers"]
        low = torch_grads(spec, enc, x0, g, dtype)
        for l, layer in enumerate(layers):
            gf, g64 = layer["precision"], np.linalg.norm(ref[l])
            t_norm, t_err = np.linalg.norm(low[l]), np.linalg.norm(low[l] - ref[l]) / g64
            if p == "f32":
                rel = abs(gf["grad_norm"] - t_norm) / t_norm
                ok = rel <= F32_NORM_REL_TOL
                print(f"  {'ok  ' if ok else 'FAIL'} f32 layer {l}: ||g|| torch {t_norm:.9g} gradflow {gf['grad_norm']:.9g}"
                      f" rel {rel:.1e}; errors vs float64 torch {t_err:.2e} gradflow {gf['grad_rel_error']:.2e}")
            else:
                ratio = gf["grad_rel_error"] / t_err
                ok = 1 / BF16_ERROR_RATIO <= ratio <= BF16_ERROR_RATIO
                print(f"  {'ok  ' if ok else 'FAIL'} bf16 layer {l}: error vs float64 torch {t_err:.3e} gradflow "
                      f"{gf['grad_rel_error']:.3e} (ratio {ratio:.2f}); ||g|| torch {t_norm:.6g} gradflow "
                      f"{gf['grad_norm']:.6g}")
            failures += not ok
    return failures


if __name__ == "__main__":
    tr.run_configs(CONFIGS, check, "gradflow_precision_")
