#!/usr/bin/env python3
"""hf_checkpoints.py — trained Post-LN (bert-base-uncased) against trained Pre-LN (gpt2), and each against its own
architecture at initialization, with gradflow. Needs network access (not run in CI); nothing but the Python
standard library (huggingface_hub and transformers are used when installed, not required).

  /usr/bin/python3 examples/hf_checkpoints.py --out-dir /tmp/hf --gradflow build/gradflow
  /usr/bin/python3 examples/hf_checkpoints.py --out-dir /tmp/hf --offline    # no network: the checkpoints already there

Downloads config.json and model.safetensors of each model (about 440 MB + 550 MB), then per model:
  analyze --weights DIR --token-ids <the sentence's ids>             trained, on its own input distribution
  export --format hf-... --init ... --out DIR_init; analyze it        the same architecture at initialization
                                                                      (seeded N(0, 1) input of the same length)
GPT-2 also with --loss lm (the gradient training would see). Finally one figure, grad_by_depth.png.
Analyzing bert-base and gpt2 explicitly needs a few GB; --gradients-only keeps it to the gradient profile.
"""
import argparse
import os
import subprocess
import sys
import urllib.request

SENTENCE = "The quick brown fox jumps over the lazy dog"
# The sentence's ids when `transformers` is not installed (bert-base-uncased's WordPiece with [CLS] ... [SEP];
# GPT-2's byte-level BPE). With transformers installed, its tokenizers are used instead.
FALLBACK_IDS = {"bert-base-uncased": [101, 1996, 4248, 2829, 4419, 14523, 2058, 1996, 13971, 3899, 102],
                "gpt2": [464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290]}
MODELS = {  # repo -> (export format, init, export options)
    # BERT's _init_weights: every Linear N(0, 0.02), biases 0, LayerNorm 1 and 0 = gradflow's gpt2 scheme without
    # its 1/sqrt(2L) scaling of out_proj/linear2, undone by --init-scale sqrt(2L) = sqrt(24)
    "bert-base-uncased": ("hf-bert", ["--init", "gpt2", "--init-scale", repr(24 ** 0.5)],
                          ["--placement", "post", "--activation", "gelu", "--layers", "12",
                           "--d-model", "768", "--heads", "12", "--d-ff", "3072"]),
    # GPT-2's: N(0, 0.02), c_proj weights N(0, 0.02/sqrt(2L)) = gradflow's gpt2 scheme
    "gpt2": ("hf-gpt2", ["--init", "gpt2"], ["--placement", "pre", "--causal", "--activation", "gelu-tanh",
                                             "--layers", "12", "--d-model", "768", "--heads", "12", "--d-ff", "3072"]),
}


def fetch(repo, folder, offline):
    if offline:  # the files must be there already (e.g. from examples/synthetic_hf_checkpoint.py)
        for f in ("config.json", "model.safetensors"):
            if not os.path.exists(os.path.join(folder, f)):
                sys.exit(f"--offline: {os.path.join(folder, f)} is missing; fix: download it, or drop --offline")
        return
    os.makedirs(folder, exist_ok=True)
    try:
        try:
            from huggingface_hub import hf_hub_download
        except ImportError:
            hf_hub_download = None
        for f in ("config.json", "model.safetensors"):
            path = os.path.join(folder, f)
            if hf_hub_download is not None:
                hf_hub_download(repo, f, local_dir=folder)
            elif not os.path.exists(path):
                print(f"downloading {repo}/{f}")
                # into a temporary name, renamed once whole: an interrupted download is not taken for the file
                urllib.request.urlretrieve(f"https://huggingface.co/{repo}/resolve/main/{f}", path + ".part")
                os.replace(path + ".part", path)
    except Exception as e:  # no network (URLError, OSError) or the hub's own errors: one line, not a traceback
        sys.exit(f"hf_checkpoints.py: cannot download {repo} ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'no detail'}); "
                 f"fix: connect to the network, or put config.json and model.safetensors into {folder} and rerun "
                 f"with --offline")


def token_ids(repo):
    try:
        from transformers import AutoTokenizer
        return AutoTokenizer.from_pretrained(repo)(SENTENCE)["input_ids"]
    except Exception:
        return FALLBACK_IDS[repo]


def run(cmd):
    print("$ " + " ".join(cmd))
    rc = subprocess.run(cmd).returncode
    if rc != 0:  # gradflow has said why on stderr
        sys.exit(f"hf_checkpoints.py: `{' '.join(cmd)}` exited {rc} (its error is above)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--gradflow", default="build/gradflow")
    ap.add_argument("--mode", default="--gradients-only", help="gradflow's engine flag (e.g. --mode matrix-free)")
    ap.add_argument("--offline", action="store_true",
                    help="download nothing: use OUT_DIR/bert-base-uncased and OUT_DIR/gpt2 as they are (to try the "
                         "script on examples/synthetic_hf_checkpoint.py's random checkpoints of the same layout)")
    ap.add_argument("--title", default="trained vs initialized: BERT (Post-LN) and GPT-2 (Pre-LN)")
    ap.add_argument("--plot-options", default="", help="more `gradflow plot` options, e.g. '--width 5 --dpi 150'")
    a = ap.parse_args()
    reports = []
    for repo, (fmt, init, arch) in MODELS.items():
        trained = os.path.join(a.out_dir, repo)
        fetch(repo, trained, a.offline)
        ids = token_ids(repo)
        ids_opt = ["--token-ids", ",".join(map(str, ids))]
        report = os.path.join(a.out_dir, f"{repo}.json")
        run([a.gradflow, "analyze", "--weights", trained, *ids_opt, a.mode, "-q", "--json", report])
        reports.append(report)
        if fmt == "hf-gpt2":
            lm = os.path.join(a.out_dir, f"{repo}_lm.json")
            run([a.gradflow, "analyze", "--weights", trained, *ids_opt, "--loss", "lm", a.mode, "-q", "--json", lm])
            reports.append(lm)
        fresh = trained + "_init"
        run([a.gradflow, "export", *arch, *init, "--seed", "0", "--format", fmt, "--out", fresh])
        init_report = os.path.join(a.out_dir, f"{repo}_init.json")
        run([a.gradflow, "analyze", "--weights", fresh, "--seq-len", str(len(ids)), a.mode, "-q",
             "--json", init_report])
        reports.append(init_report)
    run([a.gradflow, "plot", "--kind", "grad-by-depth", *reports, "-o", os.path.join(a.out_dir, "grad_by_depth.png"),
         "--title", a.title, *a.plot_options.split()])


if __name__ == "__main__":
    sys.exit(main())
