"""gradflow.plot (figures.py): the command's figure kinds drawn with matplotlib into an axes you give (docs/python.md).

The same data as `gradflow plot --kind KIND` (src/plot/kind_*.cpp), in the same colours (Okabe and Ito's palette,
src/plot/style.cpp). Kinds so far: grad-by-depth, jacobian-norms.
"""
import numpy as _np

# src/plot/style.cpp's palette, in its order: colour, marker, dash
_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#B8A000"]
_MARKERS = ["o", "s", "^", "D", "v", "<", ">", "p"]
_DASHES = ["-", "--", ":", "-."]
KINDS = ("grad-by-depth", "jacobian-norms")
# jacobian-norms: the quantities and their legend names (src/plot/kind_jacobian_norms.cpp)
_QUANTITIES = [("block_jacobian.spectral_norm", "||B_l||_2"), ("product_jacobian.spectral_norm", "||P_l||_2"),
               ("product_jacobian.min_singular_value", "smin(P_l)")]


def _style(k):
    return dict(color=_COLOURS[k % 8], marker=_MARKERS[k % 8], linestyle=_DASHES[k % 4], markersize=3.5, linewidth=1.4)


def _analyze_label(d):
    c = d.get("config", {})
    return f"{c.get('placement')} L={c.get('layers')}"


def _lines(reports, kind):
    """(label, rows, is_group) per analyze report and per compare/sweep group: the lines a kind draws."""
    from . import Error  # noqa: PLC0415
    out = []
    for r in reports:
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "groups" in d:
            for g in d["groups"]:
                label = f"{g['placement']} L={g['layers']}" + (f" {g['param']}={g['value']}" if "param" in g else "")
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


def plot(reports, kind="grad-by-depth", ax=None, param=None):
    """Draws `kind` from one report or a list of them into `ax` (a matplotlib Axes; None: a new figure's) and returns
    the axes. grad-by-depth: ||dL/dx_l|| (or ||dL/dW|| of `param`, e.g. "linear2.weight") against l on a log axis;
    an analyze report gives one line, a compare or sweep report one line per group with a band mean +- std.
    jacobian-norms: ||B_l||_2, ||P_l||_2 and smin(P_l) against l (one report: a colour per quantity; several, or
    groups: a colour per report, a marker and dash per quantity), in the one axes given."""
    from . import Error  # noqa: PLC0415
    if kind not in KINDS:
        raise Error(f"plot kind {kind!r} is not drawn from Python yet (it has {', '.join(KINDS)}); fix: use "
                    f"`gradflow plot REPORT.json --kind {kind}` on the report's to_dict() saved as JSON")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (optional: python3-matplotlib)
    if ax is None:
        _, ax = plt.subplots(figsize=(3.5, 2.6))
    if not isinstance(reports, (list, tuple)):
        reports = [reports]
    if kind == "jacobian-norms":
        if param is not None:
            raise Error("param= goes with grad-by-depth; fix: drop it for jacobian-norms")
        _jacobian_norms(ax, reports)
    else:
        _grad_by_depth(ax, reports, param)
    return ax
