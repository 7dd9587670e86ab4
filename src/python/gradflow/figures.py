"""gradflow.plot (figures.py): the command's figure kinds drawn with matplotlib into an axes you give (docs/python.md).

The same data as `gradflow plot --kind KIND` (src/plot/kind_*.cpp), in the same colours (Okabe and Ito's palette,
src/plot/style.cpp). Kinds: every kind of the command — grad-by-depth, jacobian-norms, token-geometry, spectrum,
heatmap, sensitivity, loss-curves, grad-over-training, phase-diagram, attention-entropy, claims, coord-check, lr-transfer,
precision-error.
"""
import math
import numpy as _np

from . import _gradflow

# src/plot/style.cpp's palette, in its order: colour, marker, dash (eight of each, as the command's)
_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#B8A000"]
_MARKERS = ["o", "s", "^", "D", "v", "<", ">", "p"]
_DASHES = ["-", "--", "-.", ":", (0, (10, 4)), (0, (6, 3, 1.5, 3, 1.5, 3)), (0, (1.5, 2.5)), (0, (10, 3, 3, 3))]


def _name(placement):
    """A placement as the command's figures name it (Post-LN, Pre-LN, ...: the placement registry's display name)."""
    return _gradflow.placement_display_name(placement)
KINDS = ("grad-by-depth", "jacobian-norms", "token-geometry", "spectrum", "heatmap", "sensitivity", "loss-curves",
         "grad-over-training", "phase-diagram", "attention-entropy", "claims", "coord-check", "lr-transfer",
         "precision-error")
# coord-check's panels (src/plot/kind_coord_check.cpp), per checked axis
_COORDS = ("stream", "attn_branch", "ffn_branch", "attn_logits", "output_logits")
_DEFAULT_METRIC = "summary.bottom_to_top_grad_ratio"
# claims: the measurement that answers each of the article's claims (src/plot/kind_claims.cpp, kClaimPanels):
# claim id -> (metric, drawn as the paired ratio numerator/denominator, the article's value)
_CLAIM_PANELS = {
    "C4": ("summary.grad_growth_factor_per_layer", False, None),
    "C5": ("bottom.grad_norm", True, 0.01),  # Post-LN's bottom gradient 1/100 of Pre-LN's
    "C8": (_DEFAULT_METRIC, False, None),
    "C9": (_DEFAULT_METRIC, False, None),
    "Xiong et al. 2020, Theorem 1": ("top.param_grad_norms.linear2.weight", False, None),
}
# token-geometry's panels (src/plot/kind_token_geometry.cpp): the per-layer field and its axis label
_GEOMETRY = [("token_geometry.mean_cosine", "mean token cosine of x_l"),
             ("token_geometry.rank_one_distance", "distance of x_l to rank one"),
             ("token_geometry.stable_rank", "stable rank of x_l")]
# singular values at or below this times the largest are numerically zero (include/gradflow/linalg/svd.hpp: kRankRtol)
_RANK_RTOL = 1e-10
# jacobian-norms: the quantities and their legend names (src/plot/kind_jacobian_norms.cpp)
_QUANTITIES = [("block_jacobian.spectral_norm", "||B_l||_2"), ("product_jacobian.spectral_norm", "||P_l||_2"),
               ("product_jacobian.min_singular_value", "smin(P_l)")]


def _style(k):
    return dict(color=_COLOURS[k % 8], marker=_MARKERS[k % 8], linestyle=_DASHES[k % 8], markersize=3.5, linewidth=1.4)


def _analyze_label(d):
    c = d.get("config", {})
    return f"{_name(c.get('placement', '?'))} L={c.get('layers')}"


def _lines(reports, kind):
    """(label, rows, is_group) per analyze report and per compare/sweep group: the lines a kind draws."""
    from . import Error  # noqa: PLC0415
    out = []
    for r in reports:
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "groups" in d:
            for g in d["groups"]:
                label = f"{_name(g['placement'])} L={g['layers']}" + (f" {g['param']}={g['value']}" if "param" in g else "")
                out.append((label, g["per_layer"], True))
        elif "layers" in d:
            out.append((_analyze_label(d), d["layers"], False))
        else:
            raise Error(f"{kind} reads analyze, compare or sweep reports; fix: pass gradflow.analyze's or "
                        "gradflow.compare's report")
    return out


def _value(row, group, key, path):
    """(mean, std) of a per-layer number: a group's per_layer row by its flat `key` (mean and std over seeds), an
    analyze report's layer by `path` (its nested fields; std 0); NaN where it is missing."""
    if group:
        cell = row.get(key)
        return (_np.nan, 0.0) if cell is None or cell["mean"] is None else (cell["mean"], cell["std"] or 0.0)
    v = row
    for part in path:
        v = v.get(part) if isinstance(v, dict) else None
    return (_np.nan if v is None else float(v)), 0.0


def _draw(ax, rows, group, key, path, label, st):
    """One line over layer l, with the seed band mean +- std (clipped at a tenth of the mean: a log axis) of a
    group."""
    vals = [_value(row, group, key, path) for row in rows]
    mean = _np.array([v[0] for v in vals])
    std = _np.array([v[1] for v in vals])
    x = _np.array([row["index"] for row in rows])
    if group:
        ax.fill_between(x, _np.maximum(mean - std, 0.1 * mean), mean + std, color=st["color"], alpha=0.18, linewidth=0)
    ax.plot(x, mean, label=label, **st)


def _layer_axes(ax, ylabel):
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # layers are whole numbers
    ax.set_yscale("log")
    ax.set_xlabel("layer l")
    ax.set_ylabel(ylabel)


def _grad_by_depth(ax, reports, param):
    from . import Error  # noqa: PLC0415
    key = "grad_norm" if param is None else f"param_grad_norms.{param}"
    path = ("grad_norm",) if param is None else ("param_grad_norms", param)
    lines = _lines(reports, "grad-by-depth")
    for k, (label, rows, group) in enumerate(lines):
        first = rows[0] if rows else {}
        if group and key not in first:
            raise Error(f"the report's groups have no per-layer {key!r}; fix: pass param= one of its parameters, or "
                        f"a compare report")
        if not group and param is not None and param not in first.get("param_grad_norms", {}):
            raise Error(f"param {param!r} is not in the report; fix: use one of "
                        f"{', '.join(first.get('param_grad_norms', {}))}")
        _draw(ax, rows, group, key, path, label, _style(k))
    _layer_axes(ax, "||dL/dx_l||" if param is None else f"||dL/dW|| ({param})")
    if len(lines) > 1:
        ax.legend(fontsize=7)


def _jacobian_norms(ax, reports):
    from . import Error  # noqa: PLC0415
    lines = _lines(reports, "jacobian-norms")
    drawn = 0
    for k, (label, rows, group) in enumerate(lines):
        for q, (key, name) in enumerate(_QUANTITIES):
            path = tuple(key.split("."))
            if all(_np.isnan(_value(row, group, key, path)[0]) for row in rows):
                continue
            # one report: a colour per quantity; several: a colour per report, a marker and dash per quantity
            st = _style(q) if len(lines) == 1 else dict(_style(k), marker=_MARKERS[q], linestyle=_DASHES[q])
            _draw(ax, rows, group, key, path, name if len(lines) == 1 else f"{label}: {name}", st)
            drawn += 1
    if not drawn:
        raise Error("no Jacobian norms in the reports; fix: rerun gradflow.analyze without gradients_only")
    _layer_axes(ax, "Jacobian norms")
    ax.legend(fontsize=6)


def _axes(ax, count):
    """`count` axes: `ax` itself (one Axes, or a sequence of `count`), or a new figure's row of them."""
    from . import Error  # noqa: PLC0415
    import matplotlib.pyplot as plt  # noqa: PLC0415  (optional: python3-matplotlib)
    if ax is None:
        _, axes = plt.subplots(1, count, figsize=(3.5 * count, 2.6), squeeze=False)
        return list(axes[0])
    axes = list(ax.flat) if hasattr(ax, "flat") else list(ax) if isinstance(ax, (list, tuple)) else [ax]
    if len(axes) != count:
        raise Error(f"this kind draws {count} panel(s) but ax= gives {len(axes)}; fix: pass {count} axes (e.g. "
                    f"plt.subplots(1, {count})[1]) or ax=None")
    return axes


def _token_geometry(axes, reports):
    from . import Error  # noqa: PLC0415
    lines = _lines(reports, "token-geometry")
    if not any(not _np.isnan(_value(row, group, _GEOMETRY[0][0], tuple(_GEOMETRY[0][0].split(".")))[0])
               for _, rows, group in lines for row in rows):
        raise Error("no token geometry in the reports; fix: rerun gradflow.analyze (every mode records it)")
    for a, (key, name) in zip(axes, _GEOMETRY):
        for k, (label, rows, group) in enumerate(lines):
            _draw(a, rows, group, key, tuple(key.split(".")), label, _style(k))
        _layer_axes(a, name)
        a.set_yscale("linear")
    if len(lines) > 1:
        axes[0].legend(fontsize=6)


def _precision_error(ax, reports):
    """The relative error of dL/dx_l at an emulated precision against float64 (layers[l].precision.grad_rel_error)
    of analyze reports made with precision=, a line per report, the layers with underflow ringed (as the command's
    --kind precision-error, src/plot/kind_precision_error.cpp)."""
    from . import Error  # noqa: PLC0415
    ringed_x, ringed_y = [], []
    for k, r in enumerate(reports):
        d = r.to_dict() if hasattr(r, "to_dict") else r
        p = d.get("precision") if isinstance(d, dict) else None
        if not isinstance(p, dict):
            raise Error("precision-error reads analyze reports made with precision='f32'|'bf16'|'f16'; fix: rerun "
                        "gradflow.analyze with precision=")
        label = _analyze_label(d)
        label = label if p["type"] in label else f"{label} {p['type']}"
        if p.get("regime") == "autocast":
            label += " autocast"
        if p.get("loss_scale", 1.0) != 1.0:
            mantissa, exponent = math.frexp(p["loss_scale"])
            label += f", S = 2^{exponent - 1}" if mantissa == 0.5 else f", S = {p['loss_scale']:g}"
        x, y = [], []
        for layer in d["layers"]:
            e = layer["precision"].get("grad_rel_error")
            x.append(layer["index"])
            y.append(e if e is not None and e > 0 else math.nan)
            if layer["precision"].get("underflow_fraction", 0) > 0 and e is not None and e > 0:
                ringed_x.append(layer["index"])
                ringed_y.append(e)
        ax.plot(x, y, label=label, **_style(k))
    if ringed_x:
        ax.plot(ringed_x, ringed_y, linestyle="none", marker="o", markersize=9, markerfacecolor="none",
                markeredgecolor="black", label="entries underflowed to 0")
    ax.set_yscale("log")
    ax.set_xlabel("layer l")
    ax.set_ylabel("error of dL/dx_l vs float64")
    ax.legend()


def _spectrum(ax, reports, matrix, at):
    """Singular values of P_l (matrix "P") or B_l ("B") at layers `at` (default bottom and top) of analyze reports
    made with spectrum=True, or of Jacobian arrays (SVD here); values <= _RANK_RTOL * sigma_1 left out."""
    from . import Error  # noqa: PLC0415
    if matrix not in ("P", "B"):
        raise Error(f"matrix {matrix!r} is not P or B; fix: matrix='P' (P_l = dy/dx_l) or 'B' (B_l = dx_l+1/dx_l)")
    field = "product_jacobian" if matrix == "P" else "block_jacobian"
    series = []
    for i, r in enumerate(reports):
        if isinstance(r, _np.ndarray):
            series.append((f"Jacobian {i}", _np.linalg.svd(r, compute_uv=False)))
            continue
        d = r.to_dict() if hasattr(r, "to_dict") else r
        layers = d.get("layers")
        if not layers:
            raise Error("spectrum reads analyze reports or Jacobian arrays; fix: pass gradflow.analyze's report")
        chosen = at if at is not None else sorted({0, len(layers) - 1})
        for l in chosen:
            if not 0 <= l < len(layers):
                raise Error(f"layer {l} is outside the report's 0..{len(layers) - 1}; fix: at=[0, {len(layers) - 1}]")
            spec = layers[l].get(field, {}).get("spectrum")
            if not spec:
                raise Error("the report has no spectrum; fix: rerun gradflow.analyze(model, spectrum=True)")
            series.append((f"{_analyze_label(d)}, {matrix}_{l}", _np.asarray(spec["singular_values"], dtype=float)))
    omitted = False
    for k, (label, sigma) in enumerate(series):
        kept = sigma[sigma > _RANK_RTOL * sigma[0]] if sigma.size and sigma[0] > 0 else sigma[:0]
        omitted |= kept.size < sigma.size
        ax.plot(_np.arange(1, kept.size + 1), kept, label=label, **dict(_style(k), marker=None))
    ax.set_yscale("log")
    ax.set_xlabel("index i")
    ax.set_ylabel("singular value σ_i" + (" (≤ 1e-10·σ_1 left out)" if omitted else ""))
    ax.legend(fontsize=6)


def _heatmap(ax, J, tokens):
    """|J_ij| on a log colour scale six decades below the largest entry; token blocks marked when `tokens` is given."""
    from . import Error  # noqa: PLC0415
    from matplotlib.colors import LogNorm  # noqa: PLC0415
    J = _np.asarray(J, dtype=float)
    if J.ndim != 2 or J.shape[0] != J.shape[1] or J.size == 0:
        raise Error(f"heatmap draws a square Jacobian, not shape {J.shape}; fix: pass gradflow.jacobian(model, ...)")
    A = _np.abs(J)
    top = A.max()
    if not top > 0:
        raise Error("the Jacobian is all zero; fix: check the model and the layers asked for")
    image = ax.imshow(_np.where(A > 0, A, _np.nan), norm=LogNorm(vmin=top * 1e-6, vmax=top), cmap="viridis",
                      interpolation="nearest")
    ax.figure.colorbar(image, ax=ax, label="|J_ij|")
    if tokens:
        if J.shape[0] % tokens:
            raise Error(f"tokens={tokens} does not divide the Jacobian's {J.shape[0]} rows; fix: give the n of the run")
        size = J.shape[0] // tokens
        for t in range(1, tokens):
            ax.axhline(t * size - 0.5, color="white", linewidth=0.5)
            ax.axvline(t * size - 0.5, color="white", linewidth=0.5)
    ax.set_xlabel("input index j·d + b")
    ax.set_ylabel("output index i·d + a")


def _sensitivity(ax, reports, metric):
    """A scalar metric against a sweep's parameter (the groups' numeric x, sorted) or a compare's depth: mean +- std
    over seeds as error bars, a line per placement (and per value of a 2-D sweep's second option)."""
    from . import Error  # noqa: PLC0415
    lines = {}
    param = None
    for r in reports:
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "groups" not in d:
            raise Error("sensitivity reads sweep or compare reports; fix: pass gradflow.sweep's or gradflow.compare's")
        param = d.get("param") or "layers"
        for g in d["groups"]:
            cell = g["scalars"].get(metric)
            if cell is None:
                raise Error(f"metric {metric!r} is not in the report; fix: use one of {', '.join(g['scalars'])}")
            x = g.get("x") if "param" in d else g["layers"]
            if not isinstance(x, (int, float)):
                raise Error(f"the value {g.get('value')!r} has no number to place it on an axis; fix: draw it with "
                            f"`gradflow plot --kind sensitivity` (categories)")
            key = _name(g["placement"]) + (f", {d['param2']}={g['value2']}" if "value2" in g else "")
            lines.setdefault(key, []).append((float(x), cell["mean"], cell["std"] or 0.0))
    for k, (label, points) in enumerate(lines.items()):
        points.sort()  # by x: a value such as inv-sqrt-2L stands at its number
        xs, ys, es = (_np.array(v, dtype=float) for v in zip(*points))
        st = _style(k)
        ax.errorbar(xs, ys, yerr=es, label=label, color=st["color"], marker=st["marker"], linestyle=st["linestyle"],
                    markersize=3.5, linewidth=1.4, capsize=2)
    xs_all = [p[0] for pts in lines.values() for p in pts]
    if xs_all and min(xs_all) > 0 and max(xs_all) / min(xs_all) > 10:
        ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(param)
    ax.set_ylabel(metric)
    ax.legend(fontsize=6)


def _grid_panels(d, metric):
    """A 2-D sweep's or a train-sweep's cells: (x name, y name, x param, y param, {panel: {(x, y): value}}), the
    axes' value names in order of first appearance (phase-diagram, src/plot/kind_phase_diagram.cpp)."""
    from . import Error  # noqa: PLC0415
    panels, xs, ys = {}, [], []

    def note(order, v):
        if v not in order:
            order.append(v)
    if "grid" in d and "groups" in d:  # a train-sweep: learning rate across, warmup up
        metric = metric or "converged_fraction"
        depths = len({g["layers"] for g in d["groups"]}) > 1
        for g in d["groups"]:
            panel = _name(g["placement"]) + (f", L={g['layers']}" if depths else "")
            for c in g.get("cells", []):
                value = (c["converged"] / c["runs"] if c["runs"] else _np.nan) if metric == "converged_fraction" \
                    else c.get(metric)
                x, y = f"{c['lr']:g}", f"{c['warmup']}"
                note(xs, x), note(ys, y)
                panels.setdefault(panel, {})[(x, y)] = _np.nan if value is None else float(value)
        return xs, ys, "learning rate", "warmup steps", panels, metric
    if "param2" not in d:
        raise Error("phase-diagram reads a 2-D sweep (param= and param2=) or a train-sweep report; fix: run "
                    "gradflow.sweep(param=..., values=..., param2=..., values2=...), or draw it with kind='sensitivity'")
    metric = metric or _DEFAULT_METRIC
    for g in d["groups"]:
        cell = g["scalars"].get(metric)
        if cell is None:
            raise Error(f"metric {metric!r} is not in the report; fix: use one of {', '.join(g['scalars'])}")
        note(xs, g["value"]), note(ys, g["value2"])
        panels.setdefault(_name(g["placement"]), {})[(g["value"], g["value2"])] = \
            _np.nan if cell["mean"] is None else float(cell["mean"])
    return xs, ys, d["param"], d["param2"], panels, metric


def _phase_diagram(axes, d, metric):
    """A heatmap of the metric over the grid, a panel per placement (train-sweep: per placement and depth), one
    colour scale (log when every value is positive and they span more than a decade), the value names as tics."""
    from matplotlib.colors import LogNorm, Normalize  # noqa: PLC0415
    xs, ys, xlabel, ylabel, panels, metric = _grid_panels(d, metric)
    values = _np.array([v for p in panels.values() for v in p.values()], dtype=float)
    finite = values[_np.isfinite(values)]
    log = finite.size and finite.min() > 0 and finite.max() / finite.min() > 10
    norm = (LogNorm(finite.min(), finite.max()) if log else
            Normalize(finite.min() if finite.size else 0, finite.max() if finite.size else 1))
    image = None
    for a, (title, cells) in zip(axes, panels.items()):
        grid = _np.full((len(ys), len(xs)), _np.nan)
        for (x, y), v in cells.items():
            grid[ys.index(y), xs.index(x)] = v
        image = a.pcolormesh(_np.arange(len(xs) + 1) - 0.5, _np.arange(len(ys) + 1) - 0.5, grid, norm=norm,
                             cmap="viridis", shading="flat")
        a.set_xticks(range(len(xs)), xs, rotation=30 if len(xs) > 6 else 0)
        a.set_yticks(range(len(ys)), ys)
        a.set_xlabel(xlabel)
        a.set_ylabel(ylabel)
        a.set_title(title, fontsize=8)
    axes[0].figure.colorbar(image, ax=list(axes), label=metric)
    return panels


def _attention_entropy(axes, reports):
    """H/H_max of each head (layer up, head across) of analyze reports, or of each group's heads' mean (layer up,
    group across) of a compare/sweep report; the colour range the data's."""
    from . import Error  # noqa: PLC0415
    grids = []
    for r in reports:
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "groups" in d:
            labels = [f"{_name(g['placement'])} L={g['layers']}" + (f" {g['value']}" if "value" in g else "") for g in d["groups"]]
            L = max(len(g["per_layer"]) for g in d["groups"])
            grid = _np.full((L, len(labels)), _np.nan)
            for j, g in enumerate(d["groups"]):
                for l, row in enumerate(g["per_layer"]):
                    h, hmax = row.get("attention.entropy"), row.get("attention.max_entropy")
                    if h and hmax and h["mean"] is not None and hmax["mean"]:
                        grid[l, j] = h["mean"] / hmax["mean"]
            grids.append(("groups", labels, grid))
        elif "layers" in d:
            heads = max(len(l.get("attention", {}).get("heads", [])) for l in d["layers"])
            if heads == 0:
                raise Error("the report has no attention heads; fix: rerun gradflow.analyze (a model with attention)")
            grid = _np.full((len(d["layers"]), heads), _np.nan)
            for l, layer in enumerate(d["layers"]):
                att = layer.get("attention", {})
                for h, head in enumerate(att.get("heads", [])):
                    if att.get("max_entropy"):
                        grid[l, h] = head["entropy"] / att["max_entropy"]
            grids.append((_analyze_label(d), [str(h) for h in range(heads)], grid))
        else:
            raise Error("attention-entropy reads analyze, compare or sweep reports; fix: pass gradflow.analyze's")
    values = _np.concatenate([g[2][_np.isfinite(g[2])] for g in grids])
    lo, hi = (values.min(), values.max()) if values.size else (0.0, 1.0)
    image = None
    for a, (title, labels, grid) in zip(axes, grids):
        image = a.imshow(grid, origin="lower", aspect="auto", cmap="viridis", vmin=lo, vmax=hi if hi > lo else lo + 1e-12,
                         interpolation="nearest")
        a.set_xticks(range(len(labels)), labels, rotation=30 if len(labels) > 6 else 0, fontsize=6)
        a.set_xlabel("head" if title != "groups" else "group")
        a.set_ylabel("layer l")
        a.set_title(title if title != "groups" else "", fontsize=8)
    axes[0].figure.colorbar(image, ax=list(axes), label="H / H_max")
    return grids


def _claim_panel(d, metric):
    """(metrics, their legend labels, ratio, article value, per layer, y label, claim) of a claim report's panel: the
    spec's "plot" first, then the built-in choice for its claim (as src/plot/kind_claims.cpp: panel_for)."""
    spec = dict(d.get("spec") or {})
    content = (d.get("spec_file") or {}).get("content") or {}
    for key in ("claim", "description", "plot"):
        if key not in spec and key in content:
            spec[key] = content[key]
    m, ratio, article = _CLAIM_PANELS.get(spec.get("claim", ""), (_DEFAULT_METRIC, False, None))
    q = spec.get("plot") if isinstance(spec.get("plot"), dict) else {}
    ms = q.get("metrics") or [q.get("metric", m)]
    labels = q.get("labels") or []
    if metric:
        ms, labels = [metric], []
    return (ms, labels, q.get("ratio", ratio), q.get("article_value", article), q.get("x") == "layer",
            q.get("ylabel"), spec.get("claim", ""))


def _swept(param, value):
    """A swept option's value as a legend names it (src/plot/inputs.cpp: swept_label): a flag by what it means."""
    v = str(value)
    if v not in ("true", "false"):
        return f"{param}={v}"
    negated = param.startswith("no-")
    words = (param[3:] if negated else param).replace("-", " ")
    if negated:
        return ("no " if v == "true" else "with ") + words
    return ("" if v == "true" else "no ") + words


_LEMMA2 = "Xiong et al. 2020, Lemma 2"


def _claim_lines(a, d, ms, labels, per_layer, claim):
    """A claim panel of groups: each metric against depth (or the swept value), or against layer l of the deepest
    groups; colour by placement, marker and dash by metric or swept value; Lemma 2's bounds on a Lemma 2 panel."""
    from . import Error  # noqa: PLC0415
    groups = d["groups"]
    deepest = max(g["layers"] for g in groups)
    placements, variants = [], []
    categorical = not per_layer and "param" in d and any(not isinstance(g.get("x"), (int, float)) for g in groups)
    categories = [] if categorical else None
    values_differ = len({str(g.get("value")) for g in groups}) > 1 and not categorical
    for k, m in enumerate(ms):
        for g in groups:
            if per_layer and g["layers"] != deepest:
                continue
            if g["placement"] not in placements:
                placements.append(g["placement"])
            variant = (k, g.get("value") if values_differ else None)
            if variant not in variants:
                variants.append(variant)
            label = _name(g["placement"])
            if values_differ:
                label += ", " + _swept(d.get("param", "value"), g["value"])
            if len(ms) > 1:
                label += ", " + (labels[k] if labels else m)
            if per_layer:
                cells = [layer.get(m) for layer in g.get("per_layer", [])]
                if not cells or any(not isinstance(c, dict) for c in cells):
                    raise Error(f"{m!r} is not a per-layer metric of the report; fix: name one of per_layer's fields")
                pts = [(float(layer["index"]), c["mean"], c.get("std") or 0.0) for layer, c in zip(g["per_layer"], cells)]
            else:
                cell = g["scalars"].get(m)
                if cell is None:
                    raise Error(f"metric {m!r} is not in the report; fix: use one of {', '.join(g['scalars'])}")
                x = g.get("x") if "param" in d else g["layers"]
                if categories is not None:  # values without a number (init torch, xavier): a category each
                    if g["value"] not in categories:
                        categories.append(g["value"])
                    x = categories.index(g["value"])
                pts = [(float(x), cell["mean"], cell["std"] or 0.0)]
            xs, ys, es = (_np.array(v, dtype=float) for v in zip(*pts))
            colour = _style(placements.index(g["placement"]))["color"]
            mark = _style(placements.index(g["placement"]) + variants.index(variant))
            a.errorbar(xs, ys, yerr=es, label=label, color=colour, marker=mark["marker"], capsize=2,
                       linestyle=mark["linestyle"], markersize=3.5, linewidth=1.4)
    if per_layer and claim == _LEMMA2 and ms == ["activation_rms"]:
        ls = _np.arange(deepest, dtype=float)
        a.plot(ls, _np.sqrt(1 + ls / 2), color="#707070", linestyle=":", linewidth=1, label="Lemma 2 bounds, Pre-LN")
        a.plot(ls, _np.sqrt(1 + 3 * ls / 2), color="#707070", linestyle=":", linewidth=1)
    a.set_xlabel(f"layer l (L = {deepest})" if per_layer else (d.get("param") or "layers"))
    if categories:
        a.set_xticks(range(len(categories)), categories, rotation=30 if len(categories) > 4 else 0)
    a.set_yscale("log")
    a.legend(fontsize=6)


def _claims(axes, reports, metric):
    """One panel per claim report (compare/sweep of examples/claims/): the claim's metric against depth or the swept
    value (or the paired ratios numerator/denominator), error bars over seeds, the article's value dashed."""
    from . import Error  # noqa: PLC0415
    for a, r in zip(axes, reports):
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "groups" not in d:
            raise Error("claims reads compare/sweep reports of the claim specs; fix: pass gradflow.compare's or the "
                        "JSON of `gradflow run examples/claims/...`")
        ms, labels, ratio, article, per_layer, ylabel, claim = _claim_panel(d, metric)
        m = ms[0]
        if ratio:
            if not d.get("ratios"):
                raise Error("the report holds no ratios between placements; fix: run the claim with two placements")
            sweep = "param" in d
            xs_of = {g["value"]: g.get("x") for g in d["groups"]} if sweep else {}
            lines = {}
            for r_ in d["ratios"]:
                cell = r_["metrics"].get(m)
                if cell is None:
                    raise Error(f"metric {m!r} is not among the report's ratios; fix: pass metric=")
                x = xs_of.get(r_.get("value")) if sweep else r_["layers"]
                lines.setdefault(f"{_name(r_['numerator'])} / {_name(r_['denominator'])}", []).append(
                    (float(x), cell["mean"], cell["std"] or 0.0))
            for k, (label, pts) in enumerate(lines.items()):
                pts.sort()
                xs, ys, es = (_np.array(v, dtype=float) for v in zip(*pts))
                st = _style(k)
                a.errorbar(xs, ys, yerr=es, label=label, color=st["color"], marker=st["marker"], capsize=2,
                           linestyle=st["linestyle"], markersize=3.5, linewidth=1.4)
            a.set_yscale("log")
            a.set_xlabel(d.get("param") or "layers")
            a.set_ylabel(f"ratio of {m}")
            a.legend(fontsize=6)
        elif per_layer or len(ms) > 1 or any(not isinstance(g.get("x", 0), (int, float)) for g in d["groups"]):
            _claim_lines(a, d, ms, labels, per_layer, claim)
            a.set_ylabel(ylabel or (m if len(ms) == 1 else "value"))
        else:
            _sensitivity(a, [d], m)
        if article is not None:
            a.axhline(article, color="black", linestyle="--", linewidth=1, label="article")
        a.set_title(claim, fontsize=8)


def _train_sweep_panels(ax, d, kind):
    """A train-sweep report as the command draws it: a panel per (placement, depth); loss-curves: each (lr, warmup)
    cell's mean eval curve over seeds; grad-over-training: every run's bottom/top gradient ratio against step; a
    colour per learning rate, a marker and dash per warmup."""
    groups = [(g["placement"], g["layers"]) for g in d["groups"]]
    axes = _axes(ax, len(groups))
    lrs = sorted({c["lr"] for g in d["groups"] for c in g.get("cells", [])})
    warmups = sorted({c["warmup"] for g in d["groups"] for c in g.get("cells", [])})

    def style(lr, warmup):
        st = _style(lrs.index(lr))
        return dict(st, marker=_MARKERS[warmups.index(warmup) % 8], linestyle=_DASHES[warmups.index(warmup) % 8])
    for a, (placement, layers), g in zip(axes, groups, d["groups"]):
        if kind == "loss-curves":
            for c in g.get("cells", []):
                curve = _np.array(c["mean_eval_curve"], dtype=float).reshape(-1, 2)
                a.plot(curve[:, 0], curve[:, 1], label=f"lr {c['lr']:g}, warmup {c['warmup']}",
                       **style(c["lr"], c["warmup"]))
            a.set_ylabel("eval loss (mean over seeds)")
        else:
            for run in d["runs"]:
                if run["placement"] != placement or run["layers"] != layers:
                    continue
                a.plot([e["step"] for e in run["curve"]],
                       [_np.nan if e.get("bottom_to_top_grad_ratio") is None else e["bottom_to_top_grad_ratio"]
                        for e in run["curve"]], label=f"lr {run['lr']:g}, warmup {run['warmup']}",
                       **style(run["lr"], run["warmup"]))
            a.set_yscale("log")
            a.set_ylabel("||dL/dx_0|| / ||dL/dx_L-1||")
        a.set_xlabel("step")
        a.set_title(f"{_name(placement)}, L={layers}", fontsize=8)
    axes[0].legend(fontsize=5)
    return axes


def _train_logs(reports, kind):
    from . import Error  # noqa: PLC0415
    out = []
    for i, r in enumerate(reports):
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "log" not in d:
            raise Error(f"{kind} reads train reports (gradflow.train's); fix: pass one, or draw a train-sweep with "
                        f"`gradflow plot --kind {kind}`")
        c = d.get("config", {})
        out.append((f"{_name(c.get('placement', '?'))} L={c.get('layers')}" if len(reports) > 1 else "", d["log"]))
    return out


def _loss_curves(ax, reports):
    """Train (dashed) and eval (solid, markers) loss against step, a colour per run."""
    for k, (label, log) in enumerate(_train_logs(reports, "loss-curves")):
        st = _style(k)
        steps = _np.array([e["step"] for e in log], dtype=float)
        for key, dash, marker, name in (("eval_loss", "-", st["marker"], "eval"), ("train_loss", "--", None, "train")):
            y = _np.array([_np.nan if e.get(key) is None else e[key] for e in log], dtype=float)
            ax.plot(steps, y, color=st["color"], linestyle=dash, marker=marker, markersize=3, linewidth=1.2,
                    label=f"{label} {name}".strip())
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(fontsize=6)


def _chosen_layers(L, most=6):
    """Every layer up to `most`, else `most` evenly spaced ones, bottom and top included (kind_grad_over_training)."""
    if L <= most:
        return list(range(L))
    out = []
    for k in range(most):
        l = min((k * (L - 1) + (most - 1) // 2) // (most - 1), L - 1)
        if not out or out[-1] != l:
            out.append(l)
    return out


def _grad_over_training(ax, reports):
    """||dL/dx_l|| against step: of a train report's log, or of the reports of gradflow.analyze over a run's
    checkpoints (the command's analyze --weights A B ...: checkpoints[].report); a line per chosen layer."""
    from . import Error  # noqa: PLC0415
    series = []
    for r in reports:
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "checkpoints" in d:
            steps = [c["step"] for c in d["checkpoints"]]
            per_step = [c["report"]["layers"] for c in d["checkpoints"]]
        elif "log" in d:
            steps = [e["step"] for e in d["log"]]
            per_step = [e["layers"] for e in d["log"]]
        else:
            raise Error("grad-over-training reads train reports or reports over a run's checkpoints; fix: pass "
                        "gradflow.train's report")
        for l in _chosen_layers(len(per_step[0])):
            y = [_np.nan if layers[l].get("grad_norm") is None else layers[l]["grad_norm"] for layers in per_step]
            series.append((f"layer {l}", _np.array(steps, dtype=float), _np.array(y, dtype=float)))
    if not series:
        raise Error("no gradient record in the reports; fix: pass gradflow.train's report")
    for k, (label, x, y) in enumerate(series):
        ax.plot(x, y, label=label, **_style(k))
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("||dL/dx_l||")
    ax.legend(fontsize=6)


def _coord_check(axes, d):
    """A panel per (axis, quantity): the mean over seeds of mean |entry| against log2 size, a line per step."""
    k = 0
    for axis in d["axes"]:
        for q in _COORDS:
            by_t = {}
            for rec in axis["records"]:
                for st in rec["steps"]:
                    if isinstance(st.get(q), (int, float)):
                        by_t.setdefault(st["t"], {}).setdefault(rec["size"], []).append(st[q])
            a = axes[k]
            k += 1
            for t in sorted(by_t):
                sizes = sorted(by_t[t])
                st = _style(t - 1)
                a.plot(_np.log2(sizes), [_np.mean(by_t[t][s]) for s in sizes], color=st["color"], marker=st["marker"],
                       linestyle=st["linestyle"], label=f"t = {t}" + (" (init)" if t == 1 else ""))
            last = [v for v in axis["verdicts"] if v["quantity"] == q and v["exponent"] is not None]
            b = f", b = {last[-1]['exponent']:+.2f}" if last else ""
            a.set_title(q.replace("_", " ") + (f" ({axis['axis']})" if len(d["axes"]) > 1 else "") + b, fontsize=8)
            a.set_xlabel(f"log2 {axis['axis']}")
            a.set_ylabel("mean |entry|")
    axes[0].legend(fontsize=6)


def _lr_transfer_lines(reports):
    """placement -> [((d, L), lrs, mean final eval losses, fitted optimum lr or None)] of one-warmup train-sweeps."""
    from . import Error  # noqa: PLC0415
    warmups = {w for r in reports for w in r["grid"]["warmup"]}
    if len(warmups) != 1:
        raise Error(f"lr-transfer draws one warmup, the reports have {len(warmups)}; fix: sweep one warmup value")
    w = str(warmups.pop())
    out = {}
    for r in reports:
        for g in r["groups"]:
            cells = g["cells"]
            opt = g["optimal_lr"][w]["lr"]
            out.setdefault(g["placement"], []).append(((r["config"]["d_model"], g["layers"]), [c["lr"] for c in cells],
                                                      [_np.nan if c["final_eval_loss_mean"] is None
                                                       else c["final_eval_loss_mean"] for c in cells], opt))
    return out


def _lr_transfer(axes, lines):
    sizes = sorted({key for v in lines.values() for key, *_ in v})
    widths, depths = len({d for d, _ in sizes}) > 1, len({L for _, L in sizes}) > 1
    for a, (p, v) in zip(axes, lines.items()):
        for key, lrs, loss, opt in v:
            k = sizes.index(key)
            st = _style(k)
            label = ", ".join(([f"d = {key[0]}"] if widths or not depths else []) + ([f"L = {key[1]}"] if depths else []))
            a.plot(lrs, loss, color=st["color"], marker=st["marker"], linestyle=st["linestyle"], label=label)
            if opt is not None:
                a.plot([opt], [_np.nanmin(loss)], color=st["color"], marker="*", markersize=9, linestyle="none")
        a.set_xscale("log")
        a.set_xlabel("learning rate")
        a.set_ylabel("final eval loss")
        a.set_title(_name(p), fontsize=8)
    axes[0].legend(fontsize=6)


def plot(reports, kind="grad-by-depth", ax=None, param=None, metric=None, matrix="P", at=None, tokens=None):
    """Draws `kind` from one report or a list of them into `ax` (a matplotlib Axes, or a sequence of them for a
    kind of several panels; None: a new figure's) and returns the axes (a list for several panels).

    grad-by-depth: ||dL/dx_l|| (or ||dL/dW|| of `param`, e.g. "linear2.weight") against l on a log axis; an analyze
    report gives one line, a compare or sweep report one line per group with a band mean +- std.
    jacobian-norms: ||B_l||_2, ||P_l||_2 and smin(P_l) against l (one report: a colour per quantity; several, or
    groups: a colour per report, a marker and dash per quantity), in the one axes given.
    token-geometry: three panels (mean token cosine, distance to rank one, stable rank of x_l) against l.
    spectrum: the singular values of P_l (matrix="P") or B_l ("B") at the layers `at` (default bottom and top) of
    analyze reports made with spectrum=True, or of Jacobian arrays; values <= 1e-10 sigma_1 left out.
    heatmap: |J_ij| of one Jacobian array (gradflow.jacobian's), log colour scale; `tokens`=n marks the token blocks.
    sensitivity: `metric` (a compare/sweep scalar; default the bottom/top gradient ratio) against the sweep's
    parameter or the compare's depth, error bars over seeds, a line per placement.
    phase-diagram: `metric` over a 2-D sweep's grid (param across, param2 up) or a train-sweep's (learning rate
    across, warmup up; default converged_fraction), a panel per placement, one colour scale.
    attention-entropy: each head's H/H_max, layer up and head across, a panel per analyze report (a compare/sweep
    report: the heads' mean per group).
    claims: a panel per claim report (examples/claims/), the claim's metric or paired ratio, the article's value
    dashed.
    loss-curves: train (dashed) and eval (solid) loss against step of train reports; a train-sweep report: a panel
    per (placement, depth) with each (lr, warmup) cell's mean eval curve.
    grad-over-training: ||dL/dx_l|| against step of a train report, or of a report over a run's checkpoints; a
    train-sweep report: a panel per (placement, depth) with every run's bottom/top gradient ratio.
    lr-transfer: train-sweep reports of one warmup (one per width, or one over depths): the mean final eval loss
    against lr, a panel per placement, a line per size, each line's fitted optimum (optimal_lr) starred.
    precision-error: analyze reports made with precision=: the relative error of dL/dx_l against float64 per
    layer, a line per report, the layers with underflowed entries ringed.
    coord-check: a `gradflow coord-check` report (its JSON loaded as a dict): a panel per quantity (and axis), mean
    |entry| (mean over seeds) against log2 width or depth, a line per step, titled with the last step's exponent."""
    from . import Error  # noqa: PLC0415
    if kind not in KINDS:
        raise Error(f"plot kind {kind!r} is not drawn from Python (it has {', '.join(KINDS)}); fix: use "
                    f"`gradflow plot REPORT.json --kind {kind}` on the report's to_dict() saved as JSON")
    if param is not None and kind != "grad-by-depth":
        raise Error(f"param= goes with grad-by-depth; fix: drop it for {kind}")
    if not isinstance(reports, (list, tuple)):
        reports = [reports]
    if kind == "token-geometry":
        axes = _axes(ax, 3)
        _token_geometry(axes, reports)
        return axes
    train_sweep = [r for r in reports if isinstance(r, dict) and "runs" in r and "grid" in r] + \
        [r for r in reports if hasattr(r, "to_dict") and "runs" in r.to_dict() and "grid" in r.to_dict()]
    if kind in ("loss-curves", "grad-over-training") and train_sweep:
        if len(reports) != 1:
            raise Error(f"{kind} draws one train-sweep report at a time; fix: pass one")
        d = reports[0].to_dict() if hasattr(reports[0], "to_dict") else reports[0]
        return _train_sweep_panels(ax, d, kind)
    if kind == "lr-transfer":
        ds = [r.to_dict() if hasattr(r, "to_dict") else r for r in reports]
        if not all(isinstance(d, dict) and "runs" in d and "grid" in d for d in ds):
            raise Error("lr-transfer draws train-sweep reports; fix: pass gradflow.train_sweep's")
        lines = _lr_transfer_lines(ds)
        axes = _axes(ax, len(lines))
        _lr_transfer(axes, lines)
        return axes
    if kind == "coord-check":
        d = reports[0] if len(reports) == 1 and isinstance(reports[0], dict) else None
        if d is None or "axes" not in d or "coord_check" not in d.get("config", {}):
            raise Error("coord-check draws one gradflow coord-check report; fix: pass its --json loaded as a dict")
        axes = _axes(ax, len(_COORDS) * len(d["axes"]))
        _coord_check(axes, d)
        return axes
    if kind in ("phase-diagram", "attention-entropy", "claims"):
        if kind == "phase-diagram":
            if len(reports) != 1:
                raise Error("phase-diagram draws one report; fix: pass one 2-D sweep or train-sweep report")
            d = reports[0].to_dict() if hasattr(reports[0], "to_dict") else reports[0]
            count = len(_grid_panels(d, metric)[4])
            axes = _axes(ax, count)
            _phase_diagram(axes, d, metric)
        elif kind == "attention-entropy":
            axes = _axes(ax, len(reports))
            _attention_entropy(axes, reports)
        else:
            axes = _axes(ax, len(reports))
            _claims(axes, reports, metric)
        return axes
    (one,) = _axes(ax, 1)
    if kind == "jacobian-norms":
        _jacobian_norms(one, reports)
    elif kind == "spectrum":
        _spectrum(one, reports, matrix, at)
    elif kind == "precision-error":
        _precision_error(one, reports)
    elif kind == "heatmap":
        if len(reports) != 1:
            raise Error("heatmap draws one Jacobian; fix: pass one array")
        _heatmap(one, reports[0], tokens)
    elif kind == "sensitivity":
        _sensitivity(one, reports, metric or _DEFAULT_METRIC)
    elif kind == "loss-curves":
        _loss_curves(one, reports)
    elif kind == "grad-over-training":
        _grad_over_training(one, reports)
    else:
        _grad_by_depth(one, reports, param)
    return one
