#!/usr/bin/python3
"""findings_tables.py — docs/findings.md's tables written from the reports of the claims specs, so that text and
numbers cannot drift apart.

usage:
  findings_tables.py compact REPORT.json OUT.json   keep of a compare report what the tables read (groups' scalar
                                                   summaries of the tabled metrics, ratios, comparisons, verdicts)
  findings_tables.py write [FINDINGS.md]            rewrite every table block of docs/findings.md from
                                                   examples/claims/tables/*.json
  findings_tables.py check [FINDINGS.md]            exit 1 (with a diff) unless every block equals what `write` writes

A table block is the text between `<!-- table: NAME -->` and `<!-- /table -->` in findings.md; NAME is one of
RENDERERS below, each reading the compact reports it names. Regenerate the data first (minutes, see findings.md):
  gradflow run examples/claims/decoder_llama_schemes.json examples/claims/decoder_llama_schemes_hf.json \
      examples/claims/decoder_classic_baseline.json examples/claims/c4_c5_decided.json --out-dir results
  for s in decoder_llama_schemes decoder_llama_schemes_hf decoder_classic_baseline c4_c5_decided; do
    scripts/findings_tables.py compact results/$s.json examples/claims/tables/$s.json; done
  scripts/findings_tables.py write
CI runs `check` (tests/docs) on the committed compact reports.
"""
import difflib
import json
import math
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLES = os.path.join(ROOT, "examples", "claims", "tables")
# the scalar metrics the tables print (compact keeps only these)
METRICS = ("summary.bottom_to_top_grad_ratio", "top.token_geometry.rank_one_distance", "bottom.grad_norm",
           "top.param_grad_norms.linear2.weight")


def compact(report_path, out_path):
    with open(report_path) as f:
        r = json.load(f)
    keep = lambda metrics: {k: v for k, v in metrics.items() if k in METRICS}  # noqa: E731
    out = {"spec": os.path.basename(r.get("spec_file", {}).get("path", report_path)),
           "gradflow_version": r.get("gradflow_version"), "seeds": r["seeds"], "statistics": r.get("statistics"),
           "groups": [{k: g[k] for k in ("placement", "layers", "param", "value") if k in g} |
                      {"scalars": keep(g["scalars"])} | per_layer(g) for g in r["groups"]],
           "ratios": [{k: e[k] for k in ("numerator", "denominator", "layers", "value") if k in e} |
                      {"metrics": keep(e["metrics"])} for e in r.get("ratios", [])],
           "comparisons": [{k: e[k] for k in ("placement", "axis", "numerator", "denominator", "at")} |
                           {"metrics": keep(e["metrics"])} for e in r.get("comparisons", [])],
           "verdicts": r.get("verdicts", [])}
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    os.replace(tmp, out_path)


# the per-layer metrics the tables print (compact keeps them when a report has them: explicit runs)
PER_LAYER = ("block_jacobian.minus_identity_relative_frobenius", "block_jacobian.minus_identity_spectral_norm")


def per_layer(g):
    rows = [{"index": layer["index"]} | {k: layer[k] for k in PER_LAYER if k in layer} for layer in g.get("per_layer", [])]
    return {"per_layer": rows} if any(len(r) > 1 for r in rows) else {}


def load(name):
    with open(os.path.join(TABLES, name + ".json")) as f:
        return json.load(f)


def fmt(x, digits=3):
    """`digits` significant digits; powers of ten outside [1e-3, 1e4)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if x != 0 and (abs(x) >= 1e4 or abs(x) < 1e-3):
        m, e = f"{x:.{digits - 1}e}".split("e")
        return f"{m}e{int(e)}"
    return f"{x:.{digits}g}"


def fmt_interval(est, lo, hi):
    """'est [lo, hi]' with 3 significant digits, more (up to 6) until the interval's ends print apart: a ratio of
    1.0020 [1.0017, 1.0023] does not become '1 [1, 1]'."""
    if any(v is None for v in (est, lo, hi)):
        return f"{fmt(est)} [{fmt(lo)}, {fmt(hi)}]"
    for digits in range(3, 7):
        f = lambda x: fmt(x, digits)  # noqa: E731
        if f(lo) != f(hi) or lo == hi:
            break
    return f"{f(est)} [{f(lo)}, {f(hi)}]"


def group(data, placement, layers):
    for g in data["groups"]:
        if g["placement"] == placement and g["layers"] == layers:
            return g
    return None


def summary_cell(data, placement, layers, metric="summary.bottom_to_top_grad_ratio"):
    """geometric mean [95 % interval] of a positive metric (mean [interval] otherwise)."""
    g = group(data, placement, layers)
    if g is None or metric not in g["scalars"]:
        return "–"
    s = g["scalars"][metric]
    if "geomean" in s:
        return fmt_interval(s["geomean"], s["geo_ci_low"], s["geo_ci_high"])
    return fmt_interval(s["mean"], s["ci_low"], s["ci_high"])


def seeds_text(data):
    s = data["seeds"]
    a = s.get("auto")
    n = s["repetitions"]
    if not a:
        return f"{n} seeds"
    return f"{n} seeds ({'target ±' + fmt(100 * a['ci_target']) + ' % met' if a['target_met'] else 'the --max-seeds cap; ±' + fmt(100 * a['ci_target']) + ' % not met everywhere'})"


SCHEMES = [("post", "Post-LN"), ("pre", "Pre-LN"), ("sandwich", "Sandwich / Peri-LN"), ("lns", "LayerNorm Scaling"),
           ("reorder", "OLMo-2 reorder"), ("hybridnorm", "HybridNorm"), ("deepnorm", "DeepNorm"),
           ("rezero", "ReZero (α = 0.1)"), ("mix", "mix (pre-first, L/4 Post-LN on top)")]


def render_decoder_schemes():
    classic, torch, hf = load("decoder_classic_baseline"), load("decoder_llama_schemes"), load("decoder_llama_schemes_hf")
    lines = [f"bottom/top ‖dL/dx_0‖/‖dL/dx_{{L−1}}‖: geometric mean over seeds [95 % interval]. Seeds: classic block "
             f"{seeds_text(classic)}; LLaMA block, torch init {seeds_text(torch)}; family init {seeds_text(hf)}.",
             "",
             "| scheme | classic block L = 24 | LLaMA, torch init, L = 24 | LLaMA, family init, L = 24 | classic L = 96 | "
             "LLaMA, torch init, L = 96 | LLaMA, family init, L = 96 | distance to rank one of the top input, LLaMA torch "
             "init, L = 96 |",
             "|---|---|---|---|---|---|---|---|"]
    for p, name in SCHEMES:
        cells = [summary_cell(classic, p, 24), summary_cell(torch, p, 24), summary_cell(hf, p, 24),
                 summary_cell(classic, p, 96), summary_cell(torch, p, 96), summary_cell(hf, p, 96),
                 summary_cell(torch, p, 96, "top.token_geometry.rank_one_distance")]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdict_cell(data, says_prefix):
    for v in data.get("verdicts", []):
        if v["says"].startswith(says_prefix):
            est = fmt_interval(v["estimate"], v["ci_low"], v["ci_high"])
            word = {"holds": "**holds**", "fails": "**fails**", "undetermined": "undetermined"}[v["verdict"]]
            return f"{word}: {est}"
    return "–"


def render_decoder_verdicts():
    classic, torch, hf = load("decoder_classic_baseline"), load("decoder_llama_schemes"), load("decoder_llama_schemes_hf")
    statements = [v["says"] for v in torch["verdicts"]]
    lines = ["| statement (95 %; paired ratios over the shared seeds, or the geometric interval against 1) | classic "
             "block | LLaMA, torch init | LLaMA, family init |", "|---|---|---|---|"]
    for says in statements:
        lines.append(f"| {says} | {verdict_cell(classic, says)} | {verdict_cell(torch, says)} | {verdict_cell(hf, says)} |")
    return "\n".join(lines)


def render_c4_c5_verdicts():
    d = load("c4_c5_decided")
    lines = [f"Classic block, PyTorch's init, d = 64, n = 16; {seeds_text(d)}; 95 % intervals (paired over the shared seeds "
             "for ratios).", "",
             "| statement | verdict | estimate [95 % interval] | by |", "|---|---|---|---|"]
    for v in d["verdicts"]:
        word = {"holds": "**holds**", "fails": "**fails**", "undetermined": "undetermined"}[v["verdict"]]
        ref = "" if v["reference"] == 1 else f" (vs {fmt(v['reference'])})"
        lines.append(f"| {v['says']} | {word}{ref} | {fmt_interval(v['estimate'], v['ci_low'], v['ci_high'])} | "
                     f"{v['by']} of `{v['metric']}` |")
    lines += ["", "| placement | bottom/top L = 6 | bottom/top L = 24 | ‖dL/dx_0‖ L = 24 |", "|---|---|---|---|"]
    for p, name in (("post", "Post-LN"), ("pre", "Pre-LN")):
        lines.append(f"| {name} | {summary_cell(d, p, 6)} | {summary_cell(d, p, 24)} | "
                     f"{summary_cell(d, p, 24, 'bottom.grad_norm')} |")
    return "\n".join(lines)


def layer_cell(data, placement, layers, index, metric="block_jacobian.minus_identity_relative_frobenius"):
    g = group(data, placement, layers)
    if g is None or index >= len(g.get("per_layer", [])) or metric not in g["per_layer"][index]:
        return "–"
    s = g["per_layer"][index][metric]
    return fmt_interval(s["mean"], s["ci_low"], s["ci_high"])


def render_curse_of_depth():
    d = load("decoder_curse_of_depth")
    cols = (0, 12, 24, 36, 47)
    lines = [f"‖B_l − I‖_F/‖I‖_F at L = 48, mean over {seeds_text(d)} [95 % interval of the mean]:", "",
             "| l | " + " | ".join(str(c) + (" (final norm)" if c == 47 else "") for c in cols) + " |",
             "|---|" + "---|" * len(cols)]
    for p, name in (("pre", "Pre-LN"), ("lns", "LayerNorm Scaling"), ("sandwich", "Peri-LN (sandwich)")):
        lines.append(f"| {name} | " + " | ".join(layer_cell(d, p, 48, c) for c in cols) + " |")
    lines += ["", "‖B_l − I‖₂ at l = 36: " + ", ".join(
        f"{name} {layer_cell(d, p, 48, 36, 'block_jacobian.minus_identity_spectral_norm')}"
        for p, name in (("pre", "Pre-LN"), ("lns", "LNS"), ("sandwich", "Peri-LN"))) + "."]
    return "\n".join(lines)


RENDERERS = {"curse_of_depth": render_curse_of_depth, "decoder_schemes": render_decoder_schemes, "decoder_verdicts": render_decoder_verdicts,
             "c4_c5_verdicts": render_c4_c5_verdicts}
BLOCK = re.compile(r"(<!-- table: (\w+) -->\n)(.*?)(<!-- /table -->)", re.S)


def rewrite(text):
    def sub(m):
        name = m.group(2)
        if name not in RENDERERS:
            raise SystemExit(f"findings_tables.py: unknown table '{name}' (known: {', '.join(RENDERERS)})")
        return m.group(1) + RENDERERS[name]() + "\n" + m.group(4)
    return BLOCK.sub(sub, text)


def main(argv):
    if len(argv) >= 1 and argv[0] == "compact" and len(argv) == 3:
        compact(argv[1], argv[2])
        return 0
    if len(argv) >= 1 and argv[0] in ("write", "check") and len(argv) <= 2:
        path = argv[1] if len(argv) == 2 else os.path.join(ROOT, "docs", "findings.md")
        with open(path) as f:
            text = f.read()
        if not BLOCK.search(text):
            print(f"findings_tables.py: {path} has no table block", file=sys.stderr)
            return 1
        new = rewrite(text)
        if argv[0] == "write":
            if new != text:
                with open(path + ".tmp", "w") as f:
                    f.write(new)
                os.replace(path + ".tmp", path)
            return 0
        if new != text:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), path, "regenerated"))
            print(f"FAIL: {path}'s tables differ from what scripts/findings_tables.py writes from examples/claims/tables "
                  "(run `scripts/findings_tables.py write`, or regenerate the data: see its docstring)")
            return 1
        print(f"ok: {len(BLOCK.findall(text))} table blocks of {path} equal their regeneration")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
