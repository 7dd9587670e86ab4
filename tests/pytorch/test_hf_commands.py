#!/usr/bin/python3
"""test_hf_commands.py GRADFLOW — every command that takes a model, on Hugging Face checkpoints built here
(hf_reference.py), beyond analyze/jacobian (test_hf_checkpoints.py checks their numbers against autograd):
  - --token-ids FILE.npy (int64 (n,), int32 (1, n)) gives the very report of the same ids as a list;
  - compare --weights DIR with no --placements/--layers takes both from the checkpoint, and its numbers (one seed)
    are analyze's bit for bit; sweep --weights without --placement likewise; a contradicting --placements names both;
  - train --weights GPT2_DIR starts the blocks from the checkpoint (step 0's saved body equals the checkpoint's
    tensors, mapped) and the embeddings from --seed (equal to a run without --weights); BERT is refused;
  - the memory guard refuses loading a checkpoint that does not fit, before reading its data; --init with --weights
    and broken token-id files are one-line errors (exit 2).
Exit 1 on any failure, 77 (CTest SKIP_RETURN_CODE) when torch or numpy cannot be imported.
"""
import json
import os
import subprocess
import sys
import tempfile

from preamble import np, torch, gradflow_binary, load_json  # exits 77 (skipped) without numpy/torch
import hf_reference as hf
import torch_reference as tr

failures = 0


def expect(ok, what):
    global failures
    print(("ok    " if ok else "FAIL  ") + what)
    failures += not ok


def refused(cmd, *needles):
    """cmd exits 2 with one line on stderr holding every needle."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    ok = p.returncode == 2 and len(lines) == 1 and all(n in p.stderr for n in needles)
    if not ok:
        print(f"      exit {p.returncode}: {p.stderr.strip()}")
    return ok


def numbers(report):
    """The report without what says where inputs came from (the numbers only)."""
    r = json.loads(json.dumps(report))
    for k in ("elapsed_seconds", "timing_seconds"):
        r.pop(k, None)
    for k in ("token_ids_file", "gradflow_version"):
        r["config"].pop(k, None)
    return r


def main():
    gf = gradflow_binary()
    with tempfile.TemporaryDirectory(prefix="gradflow_hfcmd_") as tmp:
        gpt2, bert = os.path.join(tmp, "gpt2"), os.path.join(tmp, "bert")
        g_model = hf.GPT2(2, 8, 2, seed=21)
        hf.round_to(g_model, "F32")  # the values gradflow reads from the F32 file
        hf.save(g_model, gpt2, prefix="transformer.")
        hf.save(hf.Bert(2, 8, 2, 16, seed=22), bert, prefix="bert.")
        j = lambda name: os.path.join(tmp, name)  # noqa: E731

        # --token-ids FILE.npy
        ids = [5, 39, 0, 11, 7]
        np.save(j("ids64.npy"), np.array(ids, dtype=np.int64))
        np.save(j("ids32.npy"), np.array([ids], dtype=np.int32))
        tr.run([gf, "analyze", "--weights", gpt2, "--token-ids", ",".join(map(str, ids)), "--loss", "lm", "-q",
                "--json", j("list.json")])
        for f in ("ids64.npy", "ids32.npy"):
            tr.run([gf, "analyze", "--weights", gpt2, "--token-ids", j(f), "--loss", "lm", "-q", "--json", j(f + ".json")])
            r = load_json(j(f + ".json"))
            expect(numbers(r) == numbers(load_json(j("list.json"))) and r["config"]["token_ids_file"] == j(f),
                   f"--token-ids {f}: the report of the same ids as a list, config.token_ids_file recorded")
        np.save(j("float.npy"), np.array(ids, dtype=np.float64))
        np.save(j("two.npy"), np.array([ids, ids], dtype=np.int64))
        np.save(j("big.npy"), np.array([1, 40], dtype=np.int64))  # vocabulary 40
        expect(refused([gf, "analyze", "--weights", gpt2, "--token-ids", j("float.npy"), "-q"],
                       "dtype '<f8' is not supported (only '<i8' int64 and '<i4' int32 are)"), "--token-ids float .npy refused")
        expect(refused([gf, "analyze", "--weights", gpt2, "--token-ids", j("two.npy"), "-q"],
                       "shape (2, 5) is not (n,) or (1, n)"), "--token-ids of two sequences refused")
        expect(refused([gf, "analyze", "--weights", gpt2, "--token-ids", j("big.npy"), "-q"],
                       "id 40 (token 1) is outside the vocabulary of 40 tokens"), "--token-ids .npy id checked against the vocabulary")

        # compare / sweep take the placement and depth from the checkpoint
        for name, path, block in (("GPT-2", gpt2, "pre"), ("BERT", bert, "post")):
            tr.run([gf, "analyze", "--weights", path, "--gradients-only", "-q", "--json", j("a.json")])
            tr.run([gf, "compare", "--weights", path, "--seeds", "1", "--gradients-only", "-q", "--json", j("c.json")])
            a, c = load_json(j("a.json")), load_json(j("c.json"))
            g = c["groups"][0]
            same = all(g["per_layer"][l]["grad_norm"]["mean"] == a["layers"][l]["grad_norm"] for l in range(2))
            expect(c["placements"] == [block] and c["layers"] == [2] and same,
                   f"compare --weights {name} (no --placements/--layers): [{block}] at L = 2, analyze's numbers")
            tr.run([gf, "sweep", "--weights", path, "--param", "seq-len", "--values", "3,5", "--seeds", "1",
                    "--gradients-only", "-q", "--json", j("s.json")])
            expect(load_json(j("s.json"))["placements"] == [block], f"sweep --weights {name}: the checkpoint's placement")
        expect(refused([gf, "compare", "--weights", gpt2, "--placements", "post,pre", "-q"],
                       "--placements post,pre contradicts the hf-gpt2 checkpoint", "its block is pre"),
               "compare --placements contradicting the checkpoint names both")
        expect(refused([gf, "compare", "--weights", gpt2, "--layers", "3", "-q"], "--layers 3 contradicts", "layers 2"),
               "compare --layers contradicting the checkpoint names both")

        # train --weights: the blocks from the checkpoint, the task's embeddings from --seed
        task = ["--task", "copy", "--vocab", "6", "--seq-len", "8", "--batch", "2", "--steps", "0", "--save-every", "1",
                "-q"]
        tr.run([gf, "train", "--weights", gpt2, *task, "--checkpoint-dir", j("tw"), "--json", j("tw.json")])
        tr.run([gf, "train", "--layers", "2", "--d-model", "8", "--heads", "2", "--placement", "pre", *task,
                "--checkpoint-dir", j("t0")])
        saved = tr.read_safetensors(os.path.join(j("tw"), "step_000000.safetensors"))
        fresh = tr.read_safetensors(os.path.join(j("t0"), "step_000000.safetensors"))
        ok = True
        for i in range(2):
            for name, srcs in g_model.gradflow_sources(i).items():
                src = g_model.p[srcs[0]].double()  # GPT-2: one source per tensor
                if name.endswith("weight") and src.dim() == 2:
                    src = src.T  # Conv1D (in, out)
                ok = ok and torch.equal(saved[f"layers.{i}.{name}"].double(), src.reshape(saved[f"layers.{i}.{name}"].shape))
        for name, srcs in g_model.final_sources.items():
            ok = ok and torch.equal(saved[name].double(), g_model.p[srcs[0]].double())
        expect(ok, "train --weights GPT-2: the saved step-0 blocks and ln_f equal the checkpoint's tensors (mapped)")
        expect(all(torch.equal(saved[k], fresh[k]) for k in ("tok_embedding.weight", "pos_embedding.weight")),
               "train --weights: the task's embeddings are drawn from --seed as without --weights")
        cfg = load_json(j("tw.json"))["config"]
        expect(cfg.get("weights_format") == "hf-gpt2" and cfg.get("placement") == "pre" and cfg.get("layers") == 2,
               "train --weights: config records the checkpoint, its placement and depth")
        expect(refused([gf, "train", "--weights", bert, *task], "bidirectional encoder"), "train --weights BERT refused")

        # refusals
        expect(refused([gf, "analyze", "--weights", gpt2, "--init", "xavier", "-q"], "--init has no effect with --weights"),
               "--init with --weights refused")
        expect(refused([gf, "analyze", "--weights", gpt2, "--token-ids", "1,2", "--max-memory", "1K", "-q"],
                       "loading --weights", "its block-stack tensors in double", "its embeddings in double"),
               "the memory guard refuses loading a checkpoint larger than --max-memory")
    print(f"{'no' if not failures else failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
