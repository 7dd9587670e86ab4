"""test_module.py GRADFLOW PYTHONPATH_DIR CASE — `import gradflow` against the command line on the same configuration,
number for number (issue 37): every numeric leaf, string and boolean of the reports equal, timing and metadata
excluded (the keys scripts/compare_reports.py skips); the Jacobian bit for bit and without a copy; errors as
gradflow.Error with the command line's message; no leak over 1,000 calls. Exit 0 pass, 1 fail, 77 skipped (NumPy
missing: the only reason)."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: {sys.executable} cannot import numpy ({e}); install python3-numpy")
    sys.exit(77)

GF, PYDIR, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, PYDIR)
import gradflow  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from compare_reports import is_metadata  # noqa: E402  (the keys a bit-for-bit comparison skips)

TMP = tempfile.mkdtemp()

# Bit for bit needs the same BLAS kernels: the command line forces OPENBLAS_CORETYPE where OpenBLAS falls back to
# its generic kernels (src/process/runtime_env.cpp), an interpreter cannot; run this test under the command's.
_cli_kernel = json.loads(subprocess.run([GF, "analyze", "--layers", "1", "--d-model", "4", "--heads", "1",
                                         "--seq-len", "1", "--gradients-only", "-q", "--json", "-"],
                                        capture_output=True, text=True).stdout)["blas_kernel"]
if _cli_kernel != gradflow.blas_kernel():
    core = _cli_kernel.split()[-1]
    if os.environ.get("OPENBLAS_CORETYPE") or not _cli_kernel.startswith("OpenBLAS"):
        print(f"FAIL: the command runs on {_cli_kernel!r}, the module on {gradflow.blas_kernel()!r}")
        sys.exit(1)
    os.execve(sys.executable, [sys.executable, *sys.argv], dict(os.environ, OPENBLAS_CORETYPE=core))


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def leaves(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            if not is_metadata(k):
                yield from leaves(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, x


def same_report(a, b, what, skip=()):
    """Every leaf equal (floats exactly), but metadata and the keys in `skip`."""
    A = {k: v for k, v in leaves(a) if not any(s in k for s in skip)}
    B = {k: v for k, v in leaves(b) if not any(s in k for s in skip)}
    if A.keys() != B.keys():
        fail(f"{what}: fields differ: {sorted(A.keys() ^ B.keys())[:5]}")
    bad = [k for k in A if A[k] != B[k]]
    if bad:
        fail(f"{what}: {len(bad)} of {len(A)} values differ, e.g. {bad[0]}: {A[bad[0]]!r} vs {B[bad[0]]!r}")
    print(f"ok: {what}: {len(A)} values equal")


def cli(*args):
    r = subprocess.run([GF, *args], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"gradflow {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r


def cli_report(*args):
    out = os.path.join(TMP, "cli.json")
    cli(*args, "-q", "--json", out)
    with open(out) as f:
        return json.load(f)


SMALL = dict(layers=3, d_model=16, heads=2, seq_len=4, seed=1)
SMALL_ARGS = ["--layers", "3", "--d-model", "16", "--heads", "2", "--seq-len", "4", "--seed", "1"]


def case_analyze():
    for placement in ("post", "pre", "sandwich"):
        m = gradflow.Model(placement=placement, **SMALL)
        for opts, words in (({}, []), ({"mode": "matrix-free", "top_k": 2}, ["--mode", "matrix-free", "--top-k", "2"]),
                            ({"gradients_only": True}, ["--gradients-only"]),
                            ({"mode": "streamed"}, ["--mode", "streamed"])):
            r = gradflow.analyze(m, **opts)
            same_report(r.to_dict(), cli_report("analyze", "--placement", placement, *SMALL_ARGS, *words),
                        f"analyze {placement} {words}")
    m = gradflow.Model(placement="post", init_scale="inv-sqrt-2L", residual_scale=0.5, **SMALL)
    r = gradflow.analyze(m, spectrum=True)
    same_report(r.to_dict(), cli_report("analyze", "--placement", "post", "--init-scale", "inv-sqrt-2L",
                                        "--residual-scale", "0.5", *SMALL_ARGS, "--spectrum"), "analyze with floats")
    g = r.grad_norm
    if not (isinstance(g, np.ndarray) and g.shape == (3,) and np.all(g > 0)):
        fail(f"report.grad_norm is not the per-layer array: {g!r}")
    if r.layer_array("block_jacobian.spectral_norm").shape != (3,):
        fail("layer_array of a dotted field")
    # --precision as a keyword: the command's report, number for number (the float64 and the low-precision fields)
    m = gradflow.Model(placement="post", **SMALL)
    r = gradflow.analyze(m, precision="f16", loss_scale="dynamic")
    same_report(r.to_dict(), cli_report("analyze", "--placement", "post", *SMALL_ARGS, "--precision", "f16",
                                        "--loss-scale", "dynamic"), "analyze --precision f16 --loss-scale dynamic")
    # the same drawn: a line per report, its y the per-layer error
    ax = gradflow.plot(r, kind="precision-error")
    want = [layer["precision"]["grad_rel_error"] for layer in r.to_dict()["layers"]]
    if list(ax.get_lines()[0].get_ydata()) != want:
        fail("precision-error does not draw layers[l].precision.grad_rel_error against l")
    raises(["precision="], lambda: gradflow.plot(gradflow.analyze(m), kind="precision-error"))
    # --autocast likewise (its regime named in the report)
    r = gradflow.analyze(m, autocast="bf16")
    same_report(r.to_dict(), cli_report("analyze", "--placement", "post", *SMALL_ARGS, "--autocast", "bf16"),
                "analyze --autocast bf16")
    if r["precision"]["regime"] != "autocast":
        fail("analyze(autocast='bf16') did not run autocast's regime")
    # the decoder blocks: an --arch preset and its options as keywords, the same report as the command's
    m = gradflow.Model(arch="qwen3", kv_heads=1, head_dim=4, **SMALL)
    r = gradflow.analyze(m)
    same_report(r.to_dict(), cli_report("analyze", "--arch", "qwen3", "--kv-heads", "1", "--head-dim", "4", *SMALL_ARGS),
                "analyze --arch qwen3")
    c = r.to_dict()["config"]
    if (c["placement"], c["norm"], c["ffn"], c["qk_norm"], c["kv_heads"]) != ("pre", "rmsnorm", "swiglu", "head", 1):
        fail(f"--arch qwen3's options are not in the report's config: {c}")


def case_inputs():
    x = np.random.default_rng(3).standard_normal((4, 16))
    g = np.random.default_rng(4).standard_normal((4, 16))
    np.save(os.path.join(TMP, "x.npy"), x)
    np.save(os.path.join(TMP, "g.npy"), g)
    m = gradflow.Model(placement="pre", **SMALL)
    r = gradflow.analyze(m, x=x, cotangent=g)
    ref = cli_report("analyze", "--placement", "pre", *SMALL_ARGS, "--input", os.path.join(TMP, "x.npy"),
                     "--cotangent", os.path.join(TMP, "g.npy"))
    same_report(r.to_dict(), ref, "analyze x=, cotangent= vs --input, --cotangent", skip=("_sha256",))
    if r["config"]["input_sha256"] == ref["config"]["input_sha256"]:
        fail("the array's digest should be of its values, not of the .npy file's bytes")
    # weights: a checkpoint the command wrote, read by both
    w = os.path.join(TMP, "w.safetensors")
    cli("export", "--placement", "pre", *SMALL_ARGS, "--out", w)
    mw = gradflow.Model.from_weights(w, seq_len=4)
    ref = cli_report("analyze", "--weights", w, "--seq-len", "4")
    same_report(gradflow.analyze(mw).to_dict(), ref, "Model.from_weights vs --weights")
    # the same tensors as a dict of arrays (a state_dict), no file of the user's: the same report and digest
    with open(w, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    state = {k: np.frombuffer(raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]], "<f8").reshape(v["shape"])
             for k, v in header.items() if k != "__metadata__"}
    md = gradflow.Model.from_weights(state, seq_len=4)
    rd = gradflow.analyze(md).to_dict()
    same_report(rd, ref, "Model.from_weights(dict) vs --weights")
    if rd["config"]["weights_sha256"] != ref["config"]["weights_sha256"]:
        fail("the dict's digest differs from the file's: the same tensors must count as the same")
    folder = os.path.dirname(md.options["weights"])
    del md
    if os.path.exists(folder):
        fail("the dict's temporary folder outlived its model")


def case_jacobian():
    m = gradflow.Model(placement="post", **SMALL)
    J = gradflow.jacobian(m, 0, None)
    out = os.path.join(TMP, "J.npy")
    cli("jacobian", "--placement", "post", *SMALL_ARGS, "--out", out)
    ref = np.load(out)
    if J.shape != (64, 64) or J.dtype != np.float64 or not np.array_equal(J, ref):
        fail(f"jacobian differs from gradflow jacobian's .npy: {J.shape}, max diff {np.max(np.abs(J - ref))}")
    if J.flags.owndata or type(J.base).__name__ != "PyCapsule" or not J.flags.writeable or not J.flags.c_contiguous:
        fail(f"the Jacobian is not the library's buffer without a copy: owndata {J.flags.owndata}, base "
             f"{type(J.base).__name__}")
    J1 = gradflow.jacobian(m, 1, 2)
    cli("jacobian", "--placement", "post", *SMALL_ARGS, "--from", "1", "--to", "2", "--out", out)
    if not np.array_equal(J1, np.load(out)):
        fail("jacobian(1, 2) differs from --from 1 --to 2")
    x = np.random.default_rng(5).standard_normal((4, 16))
    np.save(os.path.join(TMP, "x.npy"), x)
    cli("jacobian", "--placement", "post", *SMALL_ARGS, "--input", os.path.join(TMP, "x.npy"), "--out", out)
    if not np.array_equal(gradflow.jacobian(m, 0, None, x=x), np.load(out)):
        fail("jacobian(x=) differs from --input")
    print("ok: jacobians bit for bit, zero-copy, writable")


def case_experiments():
    opts = dict(placements="post,pre", layers=[1, 2], seeds=2, d_model=8, heads=2, seq_len=4)
    r = gradflow.compare(**opts)
    out, csv = os.path.join(TMP, "c.json"), os.path.join(TMP, "c.csv")
    cli("compare", "--placements", "post,pre", "--layers", "1,2", "--seeds", "2", "--d-model", "8", "--heads", "2",
        "--seq-len", "4", "-q", "--json", out, "--csv", csv)
    with open(out) as f:
        same_report(r.to_dict(), json.load(f), "compare")
    with open(csv) as f:
        if f.read() != r.csv:
            fail("compare's CSV differs from --csv")
    s = gradflow.sweep(placement="post,pre", layers=2, param="init-scale", values="1,inv-sqrt-2L", seeds=1, d_model=8,
                       heads=2, seq_len=4)
    cli("sweep", "--placement", "post,pre", "--layers", "2", "--param", "init-scale", "--values", "1,inv-sqrt-2L",
        "--seeds", "1", "--d-model", "8", "--heads", "2", "--seq-len", "4", "-q", "--json", out)
    with open(out) as f:
        same_report(s.to_dict(), json.load(f), "sweep")
    t = gradflow.train(placement="pre", layers=2, d_model=8, heads=2, steps=20, lr=1e-2, log_every=5, seed=3)
    cli("train", "--placement", "pre", "--layers", "2", "--d-model", "8", "--heads", "2", "--steps", "20", "--lr",
        "0.01", "--log-every", "5", "--seed", "3", "-q", "--json", out, "--csv", csv)
    with open(out) as f:
        same_report(t.to_dict(), json.load(f), "train")
    with open(csv) as f:
        if f.read() != t.csv:
            fail("train's CSV differs from --csv")
    t = gradflow.train(placement="pre", layers=2, d_model=8, heads=2, steps=6, lr=1e-2, log_every=3, seed=3,
                       precision="bf16", loss_scale="dynamic")
    cli("train", "--placement", "pre", "--layers", "2", "--d-model", "8", "--heads", "2", "--steps", "6", "--lr",
        "0.01", "--log-every", "3", "--seed", "3", "--precision", "bf16", "--loss-scale", "dynamic", "-q", "--json", out)
    with open(out) as f:
        same_report(t.to_dict(), json.load(f), "train --precision bf16")
    if t.to_dict()["config"]["precision"]["type"] != "bf16":
        fail("train(precision='bf16') did not train in bfloat16")
    try:
        import pandas  # noqa: F401
    except ImportError:
        print("SKIPPED (visibly): to_pandas needs pandas (python3-pandas)")
        return
    df = r.to_pandas()
    if len(df) != r.csv.count("\n") - 1:
        fail(f"to_pandas has {len(df)} rows, the CSV {r.csv.count(chr(10)) - 1}")
    if len(gradflow.analyze(gradflow.Model(**SMALL)).to_pandas()) != 3:
        fail("an analyze report's to_pandas is not one row per layer")
    print("ok: to_pandas")


def raises(words, f):
    """f() raises gradflow.Error (a ValueError) whose message holds every word and a fix."""
    try:
        f()
    except gradflow.Error as e:
        msg = str(e)
        if not all(w in msg for w in words) or "fix:" not in msg:
            fail(f"the message lacks {words} or a fix: {msg}")
        if not isinstance(e, ValueError):
            fail("gradflow.Error is not a ValueError")
        print(f"ok: raised: {msg}")
        return
    fail(f"no gradflow.Error for {words}")


def case_errors():
    ref = subprocess.run([GF, "analyze", "--layers", "0", "-q"], capture_output=True, text=True).stderr
    raises(["--layers"], lambda: gradflow.Model(layers=0))
    try:
        gradflow.Model(layers=0)
    except gradflow.Error as e:
        if f"gradflow: error: {e}" != ref.strip():
            fail(f"the message differs from the command line's: {e!r} vs {ref!r}")
    raises(["--heads"], lambda: gradflow.Model(d_model=10, heads=3))
    m = gradflow.Model(**SMALL)
    raises(["gradflow.analyze() has no keyword argument 'bogus_x'"], lambda: gradflow.analyze(m, bogus_x=1))
    raises(["gradflow.Model() has no keyword argument 'mode'"], lambda: gradflow.Model(mode="explicit"))
    raises(["gradflow.compare() has no keyword argument 'top_k'"], lambda: gradflow.compare(top_k=2))
    raises(["x holds NaN"], lambda: gradflow.analyze(m, x=np.full((4, 16), np.nan)))
    raises(["x has 1 dimensions"], lambda: gradflow.analyze(m, x=np.zeros(16)))
    raises(["--gradients-only and --mode"], lambda: gradflow.analyze(m, gradients_only=True, mode="explicit"))
    raises(["--max-memory"], lambda: gradflow.analyze(gradflow.Model(layers=2, d_model=256, heads=4, seq_len=64,
                                                                      max_memory="1M")))
    # issue 60 item 9: arrays of real numbers only (a complex x was analyzed as its real part, strings parsed, a
    # masked array's mask ignored)
    raises(["x holds complex128 values, not real numbers"], lambda: gradflow.analyze(m, x=np.zeros((4, 16), complex)))
    raises(["x holds <U3 values"], lambda: gradflow.analyze(m, x=np.full((4, 16), "1.5")))
    raises(["cotangent holds bool values"], lambda: gradflow.analyze(m, cotangent=np.ones((4, 16), bool)))
    raises(["x is a masked array"], lambda: gradflow.analyze(m, x=np.ma.masked_array(np.ones((4, 16)), mask=False)))
    gradflow.analyze(m, x=np.ones((4, 16), np.float32))  # converted, as documented
    raises(["tensor 'w' holds complex128 values"],
           lambda: gradflow.Model.from_weights({"w": np.zeros((2, 2), complex)}, placement="pre", heads=2))
    # issue 60 item 23: a NaN in config= is named as such; a train report's repr says what it is
    raises(["config= holds a value JSON cannot hold"],
           lambda: gradflow.Model.from_weights({"w": np.zeros((2, 2))}, config={"rms_norm_eps": float("nan")}))
    t = gradflow.train(placement="pre", layers=1, d_model=8, heads=2, seq_len=4, steps=2, log_every=1)
    if not repr(t).startswith("<gradflow.ExperimentReport train: pre L=1 2 updates"):
        fail(f"a train report's repr: {t!r}")
    # issue 60 item 19: decimal numbers only, as on the command line
    raises(["not a decimal number"], lambda: gradflow.Model(layers="0x2", d_model=8, heads=2))
    raises(["not a decimal number"], lambda: gradflow.Model(init_scale="0x1p-1", d_model=8, heads=2))
    # issue 60 item 16: plan= is refused before anything is written; json= and csv= are written
    plan = os.path.join(TMP, "py_plan")
    raises(["plan=", "gradflow compare --plan"], lambda: gradflow.compare(placements="pre", layers=1, d_model=8,
                                                                          heads=2, seq_len=2, plan=plan))
    if os.path.exists(plan):
        fail("compare(plan=...) wrote the plan before refusing it")
    out, csv = os.path.join(TMP, "py_c.json"), os.path.join(TMP, "py_c.csv")
    r = gradflow.compare(placements="pre", layers=1, d_model=8, heads=2, seq_len=2, json=out, csv=csv)
    with open(out) as f:
        same_report(r.to_dict(), json.load(f), "compare(json=...)")
    with open(csv) as f:
        if f.read() != r.csv:
            fail("compare(csv=...) did not write the report's CSV")
    print("ok: plan= refused, json= and csv= written")


# Tolerances of the derivative checks, named once: the VJP/JVP against the dense Jacobian (the same products in
# another order: rounding), and against central finite differences (truncation, h = FD_STEP).
FORM_REL_TOL = 1e-12
FD_STEP = 1e-5
FD_REL_TOL = 1e-7


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


def case_passes():
    rng = np.random.default_rng(7)
    for placement in ("post", "pre", "resi-dual"):
        m = gradflow.Model(placement=placement, **SMALL)
        x = rng.standard_normal((4, 16))
        states, y = m.forward(x)
        if len(states) != 4 or not np.array_equal(states[0][:, :16], x) or y.shape != (4, 16):
            fail(f"{placement}: forward's states or output")
        w = states[1].shape[1]
        J = gradflow.jacobian(m, 0, None, x=x)  # dy/dx_0, (n*d, n*w)
        g, v = rng.standard_normal((4, 16)), rng.standard_normal((4, w))
        if rel(m.vjp(g, 0, x=x).ravel(), J.T @ g.ravel()) > FORM_REL_TOL:
            fail(f"{placement}: vjp differs from J^T g: {rel(m.vjp(g, 0, x=x).ravel(), J.T @ g.ravel()):.2e}")
        if rel(m.jvp(v, 0, x=x).ravel(), J @ v.ravel()) > FORM_REL_TOL:
            fail(f"{placement}: jvp differs from J v")
        if w == 16:  # finite differences of the forward pass (a single-stream state is x itself)
            fd = (m.forward(x + FD_STEP * v)[1] - m.forward(x - FD_STEP * v)[1]) / (2 * FD_STEP)
            if rel(fd.ravel(), J @ v.ravel()) > FD_REL_TOL:
                fail(f"{placement}: J v differs from finite differences: {rel(fd.ravel(), J @ v.ravel()):.2e}")
        B = m.block_jacobian(1, x=x)
        if not np.array_equal(B, gradflow.jacobian(m, 1, 2, x=x)):
            fail("block_jacobian(1) is not jacobian(1, 2)")
    raises(["shape (4, 16)"], lambda: gradflow.Model(**SMALL).vjp(np.zeros((3, 16))))
    print("ok: forward, vjp, jvp against the Jacobian and finite differences")


# gradflow.jacobian against torch.autograd.functional.jacobian of the same nn.TransformerEncoder (float64 on both
# sides, other operation orders: rounding).
TORCH_REL_TOL = 1e-9


def case_torch():
    try:
        import torch
    except ImportError as e:
        print(f"SKIPPED: {sys.executable} cannot import torch ({e}); install python3-torch")
        sys.exit(77)
    torch.manual_seed(0)
    for norm_first, placement in ((False, "post"), (True, "pre")):
        layer = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True,
                                                 norm_first=norm_first, dtype=torch.float64)
        enc = torch.nn.TransformerEncoder(layer, num_layers=3, enable_nested_tensor=False).eval()
        x = torch.randn(4, 16, dtype=torch.float64)
        ref = torch.autograd.functional.jacobian(lambda v: enc(v.unsqueeze(0)).squeeze(0), x).reshape(64, 64)
        m = gradflow.Model.from_weights(enc.state_dict(), placement=placement, heads=2)
        J = gradflow.jacobian(m, 0, None, x=x.numpy())
        err = rel(J, ref.numpy())
        if err > TORCH_REL_TOL:
            fail(f"{placement}: jacobian differs from torch.autograd.functional.jacobian by {err:.2e}")
        print(f"ok: {placement}: jacobian vs torch.autograd.functional.jacobian {err:.1e}")


# Ctrl-C: how soon after the signal the call must raise KeyboardInterrupt (the bound).
INTERRUPT_LATENCY_S = 1.0


def interrupt_latency(call, what):
    """Sends SIGINT 0.5 s into call(); the seconds from the signal to KeyboardInterrupt (at most the bound)."""
    import signal
    import threading
    import time
    sent = []

    def fire():
        time.sleep(0.5)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=fire, daemon=True).start()
    try:
        call()
        fail(f"{what} finished before a SIGINT sent 0.5 s into it")
    except KeyboardInterrupt:
        latency = time.monotonic() - sent[0]
    if latency > INTERRUPT_LATENCY_S:
        fail(f"{what}: KeyboardInterrupt came {latency:.2f} s after the signal")
    print(f"ok: {what}: KeyboardInterrupt {latency:.3f} s after SIGINT")
    return latency


def case_interrupt():
    import threading
    import time
    m = gradflow.Model(placement="post", layers=24, d_model=512, heads=8, seq_len=128, seed=0)  # full scale
    # (one such call can end within the 0.5 s on a fast machine: calls in a row, so the signal always meets one)
    interrupt_latency(lambda: [gradflow.analyze(m, gradients_only=True) for _ in range(100)],
                      "full-scale gradients-only analyze calls")
    small = gradflow.Model(placement="pre", **SMALL)  # the library runs on, unchanged
    same_report(gradflow.analyze(small).to_dict(),
                cli_report("analyze", "--placement", "pre", *SMALL_ARGS), "analyze after an interrupted one")
    # issue 60 item 15: the streamed and the matrix-free (Lanczos) sweeps check for a cancellation as they go
    interrupt_latency(lambda: gradflow.analyze(m, mode="streamed"), "a full-scale streamed analyze")
    interrupt_latency(lambda: gradflow.analyze(m, mode="matrix-free", spectral_layers="all"),
                      "a full-scale matrix-free analyze")
    # issue 60 item 14: Ctrl-C cancels the call it interrupted, not another thread's: the main thread's call, queued
    # behind another thread's, raises at once and never runs; the other thread's call finishes with its report
    other = {}
    busy = gradflow.Model(placement="pre", layers=24, d_model=64, heads=4, seq_len=16, seed=0)  # ~4 s streamed

    def run_other():
        try:
            other["report"] = gradflow.analyze(busy, mode="streamed")
        except BaseException as e:  # noqa: BLE001 (the test reports whatever it was)
            other["error"] = repr(e)
    t = threading.Thread(target=run_other)
    t.start()
    time.sleep(0.3)  # the other call holds the worker
    interrupt_latency(lambda: gradflow.analyze(m, gradients_only=True), "a call queued behind another thread's")
    alive_after = t.is_alive()
    t.join()
    if "error" in other:
        fail(f"the other thread's call was cancelled by this thread's Ctrl-C: {other['error']}")
    if not alive_after:
        fail("test setup: the other thread's call ended before the interrupt (make `busy` larger)")
    print("ok: the other thread's call finished with its report")
    # issue 60 item 11: training on one thread (a parallel region of one thread) raised Cancelled through it, and
    # std::terminate aborted the interpreter; now it stops between steps
    interrupt_latency(lambda: gradflow.train(placement="pre", layers=2, d_model=16, heads=2, seq_len=8,
                                             steps=10000000, threads=1), "train(threads=1)")


def case_plot():
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        print("SKIPPED (visibly): gradflow.plot needs matplotlib (python3-matplotlib)")
        return
    m = gradflow.Model(placement="post", **SMALL)
    r = gradflow.analyze(m, gradients_only=True)
    ax = gradflow.plot(r)
    line = ax.get_lines()[0]
    if not (np.array_equal(line.get_ydata(), r.grad_norm) and ax.get_yscale() == "log"):
        fail("grad-by-depth of an analyze report does not draw its grad_norm on a log axis")
    c = gradflow.compare(placements="post,pre", layers=2, seeds=2, d_model=8, heads=2, seq_len=4, gradients_only=True)
    ax = gradflow.plot(c, param="linear2.weight")
    means = [row["param_grad_norms.linear2.weight"]["mean"] for row in c["groups"][1]["per_layer"]]
    if len(ax.get_lines()) != 2 or not np.array_equal(ax.get_lines()[1].get_ydata(), means):
        fail("grad-by-depth of a compare report does not draw one mean line per group")
    # the legend names the placements as the command's figures do (the registry's display names)
    if gradflow.placement_display_name("post") != "Post-LN" or gradflow.placement_display_name("x-y") != "x-y":
        fail("placement_display_name: post -> Post-LN, an unknown name -> itself")
    if not ax.get_lines()[1].get_label().startswith("Pre-LN"):
        fail(f"the compare's second line is labelled {ax.get_lines()[1].get_label()!r}, not Pre-LN ...")
    rj = gradflow.analyze(m)
    ax = gradflow.plot(rj, kind="jacobian-norms")
    if len(ax.get_lines()) != 3 or not np.array_equal(ax.get_lines()[1].get_ydata(),
                                                      rj.layer_array("product_jacobian.spectral_norm")):
        fail("jacobian-norms of an analyze report does not draw its three quantities")
    raises(["no Jacobian norms"], lambda: gradflow.plot(r, kind="jacobian-norms"))  # a gradients-only report
    raises(["is not drawn from Python"], lambda: gradflow.plot(r, kind="nope"))
    # token-geometry: three panels, each quantity's per-layer values
    axes = gradflow.plot([r, rj], kind="token-geometry")
    if len(axes) != 3 or not np.array_equal(axes[1].get_lines()[0].get_ydata(),
                                            r.layer_array("token_geometry.rank_one_distance")):
        fail("token-geometry does not draw the distance to rank one per layer")
    # spectrum: P_0's singular values above the rank threshold, from a spectrum=True report and from the array
    rs = gradflow.analyze(m, spectrum=True)
    sigma = np.asarray(rs["layers"][0]["product_jacobian"]["spectrum"]["singular_values"])
    ax = gradflow.plot(rs, kind="spectrum", at=[0])
    if not np.array_equal(ax.get_lines()[0].get_ydata(), sigma[sigma > 1e-10 * sigma[0]]):
        fail("spectrum does not draw P_0's singular values")
    raises(["spectrum=True"], lambda: gradflow.plot(r, kind="spectrum"))
    J = gradflow.jacobian(m, 0, None)
    ax = gradflow.plot(J, kind="spectrum")
    if not np.allclose(ax.get_lines()[0].get_ydata()[:3], sigma[:3], rtol=1e-12):
        fail("spectrum of the Jacobian array differs from the report's P_0 spectrum")
    # heatmap: |J| itself
    ax = gradflow.plot(J, kind="heatmap", tokens=SMALL["seq_len"])
    if not np.array_equal(np.nan_to_num(np.asarray(ax.get_images()[0].get_array()), nan=0.0), np.abs(J)):
        fail("heatmap does not draw |J|")
    # sensitivity: a point per value at its number (inv-sqrt-2L = 0.5 at L = 2), sorted, a line per placement
    s = gradflow.sweep(placement="post,pre", layers=2, param="init-scale", values="1,inv-sqrt-2L,0.25", seeds=2,
                       d_model=8, heads=2, seq_len=4, gradients_only=True)
    ax = gradflow.plot(s, kind="sensitivity")
    post = [g for g in s["groups"] if g["placement"] == "post"]
    want = [g["scalars"]["summary.bottom_to_top_grad_ratio"]["mean"] for g in sorted(post, key=lambda g: g["x"])]
    line = ax.get_lines()[0]
    if list(line.get_xdata()) != [0.25, 0.5, 1.0] or not np.array_equal(line.get_ydata(), want):
        fail(f"sensitivity draws x {list(line.get_xdata())}, not the values' numbers in order")
    # loss-curves and grad-over-training of a train report, and of a report over checkpoints
    t = gradflow.train(placement="pre", layers=2, d_model=8, heads=2, steps=10, lr=1e-2, log_every=5, seed=3)
    ax = gradflow.plot(t, kind="loss-curves")
    if not np.array_equal(ax.get_lines()[0].get_ydata(), [e["eval_loss"] for e in t["log"]]):
        fail("loss-curves does not draw the eval loss")
    ax = gradflow.plot(t, kind="grad-over-training")
    if not np.array_equal(ax.get_lines()[1].get_ydata(), [e["layers"][1]["grad_norm"] for e in t["log"]]):
        fail("grad-over-training does not draw layer 1's gradient against step")
    over = {"over_training": {}, "checkpoints": [{"step": 10, "report": r.to_dict()}, {"step": 20, "report": rj.to_dict()}]}
    ax = gradflow.plot(over, kind="grad-over-training")
    if list(ax.get_lines()[2].get_xdata()) != [10, 20] or ax.get_lines()[2].get_ydata()[1] != rj.grad_norm[2]:
        fail("grad-over-training of a report over checkpoints")
    raises(["train reports"], lambda: gradflow.plot(r, kind="loss-curves"))
    # coord-check of a command's report: a panel per quantity, a line per step, each the mean over seeds
    cc = cli_report("coord-check", "--placement", "pre", "--layers", "2", "--d-model", "8", "--heads", "2",
                    "--seq-len", "4", "--batch", "2", "--steps", "2", "--widths", "8,16", "--seeds", "2")
    axes = gradflow.plot(cc, kind="coord-check")
    rec = [q for q in cc["axes"][0]["records"] if q["size"] == 16]
    want = np.mean([q["steps"][1]["ffn_branch"] for q in rec])
    if len(axes) != 5 or len(axes[2].get_lines()) != 2 or axes[2].get_lines()[1].get_ydata()[1] != want:
        fail("coord-check does not draw each step's mean over seeds against log2 width")
    raises(["coord-check report"], lambda: gradflow.plot(r, kind="coord-check"))
    # lr-transfer of a train-sweep over depths: a panel per placement, a line per depth, the optimum starred
    lt = gradflow.train_sweep(placements="pre", layers="1,2", lr="1e-3,1e-2,1e-1", warmup="0", steps=10, d_model=8,
                              heads=2, seq_len=4, seeds=1)
    axes = gradflow.plot(lt, kind="lr-transfer")
    g = lt["groups"][1]
    if len(axes) != 1 or list(axes[0].get_lines()[-2 if g["optimal_lr"]["0"]["lr"] is not None else -1].get_ydata()) != \
            [c["final_eval_loss_mean"] for c in g["cells"]]:
        fail("lr-transfer does not draw each depth's mean final eval loss against lr")
    raises(["train-sweep reports"], lambda: gradflow.plot(r, kind="lr-transfer"))
    # a train-sweep: a panel per (placement, depth); each cell's mean eval curve, each run's bottom/top ratio
    ts = gradflow.train_sweep(placements="post,pre", layers=2, lr="1e-3,1e-2", warmup="0", steps=10, d_model=8,
                              heads=2, seq_len=4, seeds=1)
    axes = gradflow.plot(ts, kind="loss-curves")
    cell = ts["groups"][1]["cells"][1]
    if len(axes) != 2 or not np.array_equal(axes[1].get_lines()[1].get_ydata(), [p[1] for p in cell["mean_eval_curve"]]):
        fail("loss-curves of a train-sweep does not draw each cell's mean eval curve")
    axes = gradflow.plot(ts, kind="grad-over-training")
    run = [q for q in ts["runs"] if q["placement"] == "pre"][0]
    if not np.array_equal(axes[1].get_lines()[0].get_ydata(), [e["bottom_to_top_grad_ratio"] for e in run["curve"]]):
        fail("grad-over-training of a train-sweep does not draw each run's bottom/top ratio")
    # phase-diagram: a 2-D sweep's metric in its cells, a panel per placement
    s2 = gradflow.sweep(placement="post,pre", param="residual-scale", values="0.5,1,2", param2="layers",
                        values2="2,4", seeds=1, d_model=8, heads=2, seq_len=4, gradients_only=True)
    axes = gradflow.plot(s2, kind="phase-diagram")
    cell = [g for g in s2["groups"] if g["placement"] == "pre" and g["value"] == "2" and g["value2"] == "4"][0]
    mesh = np.asarray(axes[1].collections[0].get_array()).reshape(2, 3)  # (warmup/param2 up, param across)
    if len(axes) != 2 or mesh[1, 2] != cell["scalars"]["summary.bottom_to_top_grad_ratio"]["mean"]:
        fail("phase-diagram does not put the metric in its cell")
    raises(["2-D sweep"], lambda: gradflow.plot(s, kind="phase-diagram"))
    # attention-entropy: each head's H/H_max, layer up, head across
    (ax,) = gradflow.plot(rj, kind="attention-entropy")
    att = rj["layers"][2]["attention"]
    if ax.get_images()[0].get_array()[2, 1] != att["heads"][1]["entropy"] / att["max_entropy"]:
        fail("attention-entropy does not draw head 1 of layer 2")
    # claims: a C5 panel is the Post/Pre ratio of the bottom gradient, with the article's 1/100
    c5 = gradflow.compare(placements="post,pre", layers=[2, 4], seeds=2, d_model=8, heads=2, seq_len=4,
                          gradients_only=True).to_dict()
    c5["spec"] = {"claim": "C5"}
    (ax,) = gradflow.plot(c5, kind="claims")
    want = [q["metrics"]["bottom.grad_norm"]["mean"] for q in sorted(c5["ratios"], key=lambda q: q["layers"])]
    if not np.array_equal(ax.get_lines()[0].get_ydata(), want) or ax.get_lines()[-1].get_ydata()[0] != 0.01:
        fail("claims: the C5 panel is not the paired ratio with the article's value")
    # claims panels that show their claim (issue 38), as the command draws them: a sweep over a flag against layer l
    # (colour by placement, the flag named by what it means), and Lemma 2's bounds beside activation_rms
    c11 = gradflow.sweep(placement="pre,sandwich", layers=3, param="no-final-norm", values="false,true", seeds=2,
                         d_model=8, heads=2, seq_len=4, gradients_only=True).to_dict()
    c11["spec"] = {"claim": "C11", "plot": {"x": "layer", "metric": "grad_norm"}}
    (ax,) = gradflow.plot(c11, kind="claims")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    g = [g for g in c11["groups"] if g["placement"] == "pre" and g["value"] == "true"][0]
    drawn = {c.get_label(): c.lines[0] for c in ax.containers}  # errorbar containers: their data line first
    if ("Pre-LN, no final norm" not in labels or "Sandwich-LN, with final norm" not in labels or
            list(drawn["Pre-LN, no final norm"].get_ydata()) != [l["grad_norm"]["mean"] for l in g["per_layer"]]):
        fail(f"claims: the C11 panel is not the per-layer profile of each group ({labels})")
    # a sweep over values without a number (examples/claims/c5_inits.json): a category each, as the command draws it
    inits = gradflow.sweep(placement="post,pre", layers=2, param="init", values="torch,xavier", seeds=2, d_model=8,
                           heads=2, seq_len=4, gradients_only=True).to_dict()
    inits["spec"] = {"claim": "C5"}
    inits["spec"]["plot"] = {"metric": "summary.bottom_to_top_grad_ratio", "ratio": False}
    (ax,) = gradflow.plot(inits, kind="claims")
    if [t.get_text() for t in ax.get_xticklabels()] != ["torch", "xavier"]:
        fail("claims: a sweep over init is not drawn as categories")
    lemma = gradflow.compare(placements="post,pre", layers=[4], seeds=2, d_model=8, heads=2, seq_len=4,
                             gradients_only=True).to_dict()
    lemma["spec"] = {"claim": "Xiong et al. 2020, Lemma 2", "plot": {"x": "layer", "metric": "activation_rms"}}
    (ax,) = gradflow.plot(lemma, kind="claims")
    bounds = [line for line in ax.get_lines() if line.get_label() == "Lemma 2 bounds, Pre-LN"]
    if not bounds or abs(bounds[0].get_ydata()[3] - (1 + 3 / 2) ** 0.5) > 1e-12:
        fail("claims: the Lemma 2 panel lacks its bounds")
    print("ok: gradflow.plot grad-by-depth, jacobian-norms, token-geometry, spectrum, heatmap, sensitivity, "
          "loss-curves, grad-over-training, phase-diagram, attention-entropy, claims, coord-check, lr-transfer")


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def case_leaks():
    m = gradflow.Model(placement="pre", layers=1, d_model=8, heads=2, seq_len=2)
    for _ in range(50):  # warm up the allocator and the interpreter
        gradflow.jacobian(m, 0, None)
        gradflow.analyze(m, gradients_only=True)
    before = rss_mib()
    for _ in range(1000):
        J = gradflow.jacobian(m, 0, None)
        del J
        gradflow.analyze(m, gradients_only=True)
    grown = rss_mib() - before
    if grown > 20:
        fail(f"RSS grew by {grown:.1f} MiB over 1,000 calls")
    print(f"ok: 1,000 jacobian + analyze calls: RSS grew {grown:.1f} MiB")


{"analyze": case_analyze, "inputs": case_inputs, "jacobian": case_jacobian, "experiments": case_experiments,
 "errors": case_errors, "leaks": case_leaks, "plot": case_plot, "passes": case_passes,
 "interrupt": case_interrupt, "torch": case_torch}[CASE]()
