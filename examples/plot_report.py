#!/usr/bin/python3
"""plot_report.py — gradflow's figures with matplotlib, for Python users: reads the same JSON reports (and .npy
Jacobians) as `gradflow plot` and draws the same kinds in the same style (serif, 3.5 in wide, Okabe–Ito colours
with distinct markers and dashes, log axes where values span decades).

    /usr/bin/python3 examples/plot_report.py post.json pre.json --kind grad-by-depth -o fig.pdf
    /usr/bin/python3 examples/plot_report.py r.json --kind jacobian-norms -o jn.png
    /usr/bin/python3 examples/plot_report.py r.json --kind spectrum --at 0,5 -o sp.svg      (analyze --spectrum)
    /usr/bin/python3 examples/plot_report.py sweep.json --kind sensitivity -o s.pdf
    /usr/bin/python3 examples/plot_report.py J.npy --kind heatmap --tokens 6 -o hm.png
    /usr/bin/python3 examples/plot_report.py run.json --kind loss-curves --logx on -o loss.pdf   (train reports)
    /usr/bin/python3 examples/plot_report.py run.json --kind grad-over-training -o g.pdf        (train reports)

Field names: docs/report-schema.md (analyze), docs/experiments.md (compare, sweep), docs/training.md (train);
docs/plotting.md. Train-sweep reports and the claims figure: use `gradflow plot`.
Needs Debian's python3-matplotlib and python3-numpy (/usr/bin/python3)."""
import argparse, json, os, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#B8A000"]
MARKERS = ["o", "s", "^", "D", "o", "s", "^", "D"]
FILLED = [True] * 4 + [False] * 4
DASHES = ["-", "--", "-.", ":"]
DEFAULT_METRIC = "summary.bottom_to_top_grad_ratio"


# Axis labels of the report fields (as gradflow plot's, include/gradflow/report/fields.hpp), and of swept parameters.
METRIC_LABELS = {
    "summary.bottom_to_top_grad_ratio": r"$\|\partial L/\partial x_0\| \,/\, \|\partial L/\partial x_{L-1}\|$",
    "summary.grad_growth_factor_per_layer": "gradient growth factor per layer",
    "summary.grad_growth_rate_per_layer": r"slope of $\ln\|\partial L/\partial x_l\|$ per layer",
    "bottom.grad_norm": r"$\|\partial L/\partial x_0\|$",
    "top.grad_norm": r"$\|\partial L/\partial x_{L-1}\|$",
    "top.param_grad_norms.linear2.weight": r"$\|\partial L/\partial W_2\|$, top layer",
    "bottom.param_grad_norms.linear2.weight": r"$\|\partial L/\partial W_2\|$, bottom layer",
}
PARAM_LABELS = {"init-scale": "initialization scale $C$", "layers": "depth $L$", "d-model": "width $d$",
                "residual-scale": r"residual weight $\lambda$", "seq-len": "tokens $n$"}


def style(k):
    """Series k: colour k mod 8; from the ninth on, a marker and dash no earlier series of that colour has."""
    c, r = k % 8, (k // 8) % 8
    m, d = (c + r) % 8, (c + 3 * r) % 8
    return dict(color=OKABE_ITO[c], marker=MARKERS[m], linestyle=DASHES[d % 4], markersize=3.5, linewidth=1.2,
                markerfacecolor=OKABE_ITO[c] if FILLED[m] else "white")


def readable_log_tics(ax, which="y"):
    """Plain numbers (0.2, 0.5, 1, 2) on a log axis spanning under two decades instead of "2×10^-1"; decades
    (10^k) otherwise, with unlabelled minor tics."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    if (ax.get_yscale() if which == "y" else ax.get_xscale()) != "log":
        return
    if isinstance(axis.get_major_locator(), matplotlib.ticker.FixedLocator):
        return  # tics placed on purpose (swept values, step 0)
    lo, hi = sorted(ax.get_ylim() if which == "y" else ax.get_xlim())
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    if hi / lo < 100:
        axis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    else:
        axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def legend(fig, ax, args):
    """Up to four entries inside the axes (where they hide least); more below the axes, in columns. Returns
    whether the legend is below the axes."""
    handles, names = ax.get_legend_handles_labels()
    if not handles:
        return False
    if len(handles) <= 4:
        ax.legend(fontsize=7)
        return False
    longest = max(len(n) for n in names)
    cols = max(1, min(len(handles), int((args.width - 0.2) / ((longest + 6) * 0.07))))
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=cols)
    return True  # below the axes: the saved figure grows to hold it


def load(path):
    if path.endswith(".npy"):
        return {"kind": "npy", "path": path, "stem": os.path.splitext(os.path.basename(path))[0]}
    r = json.load(open(path))
    kind = ("experiment" if "groups" in r and "experiment" in r else "train" if "log" in r and "task" in r
            else "train-sweep" if "runs" in r and "grid" in r else "analyze" if "layers" in r and "config" in r else None)
    if kind is None:
        sys.exit(f"plot_report.py: error: {path} is neither an analyze, compare/sweep nor train report; fix: pass a gradflow --json file")
    return {"kind": kind, "path": path, "stem": os.path.splitext(os.path.basename(path))[0], "json": r}


def labels(reports):
    """Placement, plus every config field that differs between the reports (as gradflow plot does)."""
    cfgs = [r["json"]["config"] for r in reports]
    out = [c.get("placement", r["stem"]) for c, r in zip(cfgs, reports)]
    for key, pre in [("layers", "L="), ("d_model", "d="), ("seq_len", "n="), ("norm", ""), ("init", "init="),
                     ("init_scale", "init scale "), ("residual_scale", "λ="), ("seed", "seed=")]:
        if len({json.dumps(c.get(key)) for c in cfgs}) > 1:
            out = [o + f", {pre}{c.get(key)}" for o, c in zip(out, cfgs)]
    return out if len(set(out)) == len(out) else [r["stem"] for r in reports]


def group_label(g, groups):
    s = g["placement"]
    if len({x["layers"] for x in groups}) > 1: s += f", L={g['layers']}"
    if len({x.get("value") for x in groups}) > 1: s += f", {g.get('param', 'value')}={g.get('value')}"
    return s


def maybe_log(ax, values, force=None):
    v = np.asarray([x for x in values if x is not None and np.isfinite(x) and x > 0])
    if force == "on" or (force in (None, "auto") and v.size and v.max() / v.min() > 10):
        ax.set_yscale("log")


def per_layer(ax, inputs, quantities, args):
    """quantities: [(analyze getter, compare metric, legend)], one line per (report, quantity)."""
    analyze = [i for i in inputs if i["kind"] == "analyze"]
    names = dict(zip([id(i) for i in analyze], labels(analyze)))
    k, allv = 0, []
    for i in inputs:
        if i["kind"] == "analyze":
            lines = [(names[id(i)], i["json"]["layers"], False)]
        else:
            gs = i["json"]["groups"]
            lines = [(group_label(g, gs), g["per_layer"], True) for g in gs]
        for name, layers, stats in lines:
            for get, metric, qname in quantities:
                x = [l["index"] for l in layers]
                if stats:
                    m = np.array([l.get(metric, {}).get("mean", np.nan) for l in layers], float)
                    s = np.nan_to_num(np.array([l.get(metric, {}).get("std", 0) for l in layers], float))
                    ax.fill_between(x, np.maximum(m - s, 0.1 * m), m + s, color=OKABE_ITO[k % 8], alpha=0.18, lw=0)
                else:
                    m = np.array([get(l) for l in layers], float)
                allv += list(m)
                ax.plot(x, m, label=name if len(quantities) == 1 else (qname if len(lines) * len(inputs) == 1 else f"{name}: {qname}"), **style(k))
                k += 1
    ax.set_xlabel("layer $l$")
    ax.xaxis.get_major_locator().set_params(integer=True)
    return allv


def num(d, *keys):
    for key in keys:
        d = d.get(key) if isinstance(d, dict) else None
    return d if isinstance(d, (int, float)) else np.nan


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+")
    p.add_argument("--kind", required=True, choices=["grad-by-depth", "jacobian-norms", "spectrum", "sensitivity", "heatmap",
                                                    "loss-curves", "grad-over-training"])
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--width", type=float, default=3.5)
    p.add_argument("--height", type=float, default=0)
    p.add_argument("--dpi", type=int, default=300)
    p.add_argument("--param", default="")
    p.add_argument("--metric", default=DEFAULT_METRIC)
    p.add_argument("--matrix", default="P", choices=["P", "B"])
    p.add_argument("--at", default="")
    p.add_argument("--tokens", type=int, default=0)
    p.add_argument("--logy", default="auto", choices=["auto", "on", "off"])
    p.add_argument("--logx", default="off", choices=["auto", "on", "off"])
    a = p.parse_args()
    plt.rcParams.update({"font.family": "serif", "font.size": 8, "axes.spines.top": False, "axes.spines.right": False,
                         "legend.frameon": False, "mathtext.fontset": "dejavuserif"})
    inputs = [load(x) for x in a.inputs]
    train_kind = a.kind in ("loss-curves", "grad-over-training")
    for i in inputs:
        if i["kind"] == "train-sweep":
            sys.exit(f"plot_report.py: error: {i['path']} is a train-sweep report; fix: draw it with gradflow plot --kind {a.kind if train_kind else 'loss-curves'}")
        if (i["kind"] == "train") != train_kind:
            sys.exit(f"plot_report.py: error: --kind {a.kind} does not read {i['path']} ({i['kind']} report); fix: "
                     + ("pass gradflow train --json reports" if train_kind else "plot it with --kind loss-curves or grad-over-training"))
    fig, ax = plt.subplots(figsize=(a.width, a.height or a.width * (0.8 if a.kind == "heatmap" else 0.75)))
    if a.kind == "grad-by-depth":
        if a.param:
            q = [(lambda l: num(l, "param_grad_norms", a.param), "param_grad_norms." + a.param, a.param)]
            ax.set_ylabel(r"$\|\partial L/\partial W\|$ (" + a.param + ")")
        else:
            q = [(lambda l: num(l, "grad_norm"), "grad_norm", "")]
            ax.set_ylabel(r"$\|\partial L/\partial x_l\|$")
        per_layer(ax, inputs, q, a)
        maybe_log(ax, [1, 100], "on" if a.logy == "auto" else a.logy)
    elif a.kind == "jacobian-norms":
        q = [(lambda l: num(l, "block_jacobian", "spectral_norm"), "block_jacobian.spectral_norm", r"$\|B_l\|_2$"),
             (lambda l: num(l, "product_jacobian", "spectral_norm"), "product_jacobian.spectral_norm", r"$\|P_l\|_2$"),
             (lambda l: num(l, "product_jacobian", "min_singular_value"), "product_jacobian.min_singular_value", r"$\sigma_{\min}(P_l)$")]
        maybe_log(ax, per_layer(ax, inputs, q, a), a.logy)
        ax.set_ylabel("singular value")
    elif a.kind == "spectrum":
        group = "product_jacobian" if a.matrix == "P" else "block_jacobian"
        k = 0
        for i in inputs:
            if i["kind"] == "npy":
                sv = [(i["stem"], np.linalg.svd(np.load(i["path"]), compute_uv=False))]
            else:
                L = len(i["json"]["layers"])
                at = [int(x) for x in a.at.split(",")] if a.at else ([0, L - 1] if L > 1 else [0])
                sv = []
                for l in at:
                    spec = i["json"]["layers"][l].get(group, {}).get("spectrum")
                    if not spec:
                        sys.exit(f"plot_report.py: error: {i['path']} holds no singular values of {a.matrix}_{l}; fix: rerun gradflow analyze with --spectrum")
                    sv.append((f"{a.matrix}_{l}", np.asarray(spec["singular_values"], float)))
            for name, s in sv:
                s = s[s > 1e-10 * s[0]]  # numerically zero singular values left out (svd.hpp kRankRtol)
                ax.plot(np.arange(1, s.size + 1), s, label=name, markevery=max(1, s.size // 12), **style(k))
                k += 1
        ax.set_yscale("log" if a.logy != "off" else "linear")
        ax.set_xlabel("index $i$")
        ax.set_ylabel(r"singular value $\sigma_i$")
    elif a.kind == "sensitivity":
        e = inputs[0]["json"]
        param = e.get("param", "")
        series = {}
        for g in e["groups"]:
            key = g["placement"]
            x = g.get("x") if param else g["layers"]
            st = g["scalars"].get(a.metric, {})
            series.setdefault(key, []).append((x if x is not None else g.get("value"), st.get("mean", np.nan), st.get("std", 0)))
        tics = {}
        for k, (key, pts) in enumerate(series.items()):
            xs = [pt[0] for pt in pts] if all(isinstance(pt[0], (int, float)) for pt in pts) else list(range(len(pts)))
            ax.errorbar(xs, [pt[1] for pt in pts], yerr=[pt[2] for pt in pts], label=key, capsize=2, **style(k))
        if param:  # tics at the swept values, named as the sweep names them; a log axis when they span decades
            for g in e["groups"]:
                if isinstance(g.get("x"), (int, float)):
                    tics[g["x"]] = "1/√(2L)" if g.get("value") == "inv-sqrt-2L" else str(g.get("value"))
            if tics and max(tics) / min(tics) > 10:
                ax.set_xscale("log")
            if 0 < len(tics) <= 10:
                ax.set_xticks(list(tics), list(tics.values()))
                ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(PARAM_LABELS.get(param or "layers", param))
        ax.set_ylabel(METRIC_LABELS.get(a.metric, a.metric))
        maybe_log(ax, [pt[1] for pts in series.values() for pt in pts], a.logy)
    elif a.kind == "heatmap":
        J = np.abs(np.load(inputs[0]["path"]))
        top = J.max()
        im = ax.imshow(np.maximum(J, top * 1e-6), cmap="viridis", norm=matplotlib.colors.LogNorm(top * 1e-6, top), interpolation="nearest")
        fig.colorbar(im, ax=ax, label=r"$|J_{ij}|$")
        if a.tokens:
            d = J.shape[0] // a.tokens
            for t in range(1, a.tokens):
                ax.axhline(t * d - 0.5, color="white", lw=0.6)
                ax.axvline(t * d - 0.5, color="white", lw=0.6)
            ax.set_xticks([t * d + (d - 1) / 2 for t in range(a.tokens)], [str(t) for t in range(a.tokens)])
            ax.set_yticks([t * d + (d - 1) / 2 for t in range(a.tokens)], [str(t) for t in range(a.tokens)])
        ax.set_xlabel("input token $j$" if a.tokens else "input index $j$")
        ax.set_ylabel("output token $i$" if a.tokens else "output index $i$")
    elif train_kind:
        names = labels(inputs)
        logx = a.logx == "on"
        first = min((e["step"] for i in inputs for e in i["json"]["log"] if e["step"] > 0), default=1)
        at = lambda s: first / 4 if logx and s <= 0 else s  # step 0 kept on a log axis: a quarter of the first step
        for k, (i, name) in enumerate(zip(inputs, names)):
            log = i["json"]["log"]
            steps = [at(e["step"]) for e in log]
            if a.kind == "loss-curves":
                st = style(k)
                ev = dict(st, linestyle="-")
                tr = dict(st, linestyle="--", marker=None)
                one = len(inputs) == 1
                ax.plot(steps, [num(e, "eval_loss") for e in log], label="eval" if one else f"{name}: eval", **ev)
                ax.plot(steps, [num(e, "train_loss") for e in log], label="train" if one else f"{name}: train", **tr)
            else:
                L = len(log[0]["layers"])
                chosen = list(range(L)) if L <= 6 else sorted({(j * (L - 1) + 2) // 5 for j in range(6)} | {L - 1})
                for j, l in enumerate(chosen):
                    ax.plot(steps, [num(e["layers"][l], "grad_norm") for e in log],
                            label=f"layer {l}" if len(inputs) == 1 else f"{name}: layer {l}", **style(k * len(chosen) + j))
        if a.kind == "loss-curves":
            ax.set_ylabel("loss (nats per target token)")
            maybe_log(ax, [1], a.logy)
        else:
            ax.set_ylabel(r"$\|\partial L/\partial x_l\|$")
            maybe_log(ax, [1, 100], "on" if a.logy == "auto" else a.logy)
        ax.set_xlabel("step")
        if logx:
            ax.set_xscale("log")
            last = max(e["step"] for i in inputs for e in i["json"]["log"])
            ticks = [m * 10.0 ** k for k in range(int(np.floor(np.log10(first))), int(np.ceil(np.log10(last))) + 1)
                     for m in ((1, 2, 5) if last / first < 1000 else (1,)) if first <= m * 10.0 ** k <= last]
            ax.set_xticks([first / 4] + ticks, ["0"] + [f"{t:g}" for t in ticks])
            ax.set_xlim(first / 4 / 1.2, last * 1.2)
    outside = False
    if a.kind != "heatmap":
        readable_log_tics(ax, "y")
        readable_log_tics(ax, "x")
    fig.tight_layout()
    if a.kind != "heatmap":
        outside = legend(fig, ax, a)
    fig.savefig(a.output, dpi=a.dpi, bbox_inches="tight" if outside else None)
    print(f"plot_report.py: {a.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
