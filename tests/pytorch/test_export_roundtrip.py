#!/usr/bin/python3
"""test_export_roundtrip.py GRADFLOW — `gradflow export` -> nn.TransformerEncoder.load_state_dict(strict=True)
-> the same loss, gradient norms and Jacobian as `gradflow analyze`/`jacobian` on the same (seeded) model.

The exported model is gradflow's own random initialization (no --weights): the test shows that the file holds
exactly the model gradflow analyzes, in PyTorch's names and shapes. Relative error <= 1e-9 per quantity.
Exit 1 on any failure, 77 (CTest SKIP_RETURN_CODE) when torch or numpy cannot be imported.
"""
import os
import sys
import tempfile

from preamble import np, torch, gradflow_binary, load_json, randn64  # exits 77 (skipped) without numpy/torch
import tolerances as tol
import torch_reference as tr

# (spec, extra options of gradflow's initialization); final_norm must match what the placement then has.
CONFIGS = [
    (tr.Spec("post", layers=2, d=8, heads=2, d_ff=16, n=4, activation="relu"), ["--init", "torch"]),
    (tr.Spec("pre", layers=3, d=6, heads=1, d_ff=12, n=3, activation="gelu", causal=True, final_norm=True),
     ["--init", "xavier"]),
    (tr.Spec("pre", layers=2, d=4, heads=2, d_ff=8, n=1, activation="relu"), ["--init", "gpt2", "--no-final-norm"]),
]


def check(gradflow, spec, init, i, tmp):
    w, x, g = (os.path.join(tmp, f"{i}.{s}") for s in ("safetensors", "x.npy", "g.npy"))
    r, j = os.path.join(tmp, f"{i}.json"), os.path.join(tmp, f"{i}.J.npy")
    sizes = ["--layers", str(spec.layers), "--d-model", str(spec.d), "--d-ff", str(spec.d_ff), "--seed", str(40 + i)]
    model = [*spec.gradflow_options(), *sizes, *init]
    tr.run([gradflow, "export", *model, "--seq-len", str(spec.n), "--out", w])

    enc = tr.build_encoder(spec)
    state = tr.read_safetensors(w)
    enc.load_state_dict(state, strict=True)  # every name and shape must match, nothing extra
    for name, p in enc.named_parameters():  # and the values are the file's, bit for bit
        assert torch.equal(p.detach(), state[name]), name

    torch.manual_seed(2000 + i)
    x0 = randn64(spec.n, spec.d)
    cot = randn64(spec.n, spec.d)
    np.save(x, x0.numpy())
    np.save(g, cot.numpy())
    files = ["--input", x, "--cotangent", g]
    tr.run([gradflow, "analyze", *model, *files, "--json", r, "-q"])
    tr.run([gradflow, "jacobian", *model, "--input", x, "--out", j])
    report = load_json(r)
    ref, J_ref = tr.reference(spec, enc, x0, cot)
    label = f"[{i}] export {' '.join(init)} -> load_state_dict(strict=True): {spec.label()}"
    print(label)
    return tr.compare(label, ref, tr.gradflow_quantities(report), J_ref, np.load(j))


def main():
    gradflow = gradflow_binary()
    print(f"torch {torch.__version__}; tolerance: relative error <= {tol.REL_TOL:g}")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gradflow_export_") as tmp:
        for i, (spec, init) in enumerate(CONFIGS):
            try:
                failed += check(gradflow, spec, init, i, tmp) > 0
            except Exception as e:
                print(f"FAIL [{i}] {spec.label()}: {type(e).__name__}: {e}")
                failed += 1
    print(f"{len(CONFIGS) - failed}/{len(CONFIGS)} exported models agree with PyTorch")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
