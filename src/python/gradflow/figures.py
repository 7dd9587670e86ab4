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


def _grad_by_depth(ax, reports, param):
    from . import Error  # noqa: PLC0415
    k = 0
    for r in reports:
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "layers" in d and "groups" not in d:  # an analyze report: one line
            y = []
            for layer in d["layers"]:
                if param is None:
                    y.append(layer["grad_norm"])
                elif param in layer.get("param_grad_norms", {}):
                    y.append(layer["param_grad_norms"][param])
                else:
                    raise Error(f"param {param!r} is not in the report; fix: use one of "
                                f"{', '.join(layer.get('param_grad_norms', {}))}")
            x = [layer["index"] for layer in d["layers"]]
            ax.plot(x, y, label=_analyze_label(d), **_style(k))
            k += 1
        elif "groups" in d:  # compare/sweep: a line per group, a band mean +- std (clipped at mean/10: log axis)
            metric = "grad_norm" if param is None else f"param_grad_norms.{param}"
            for g in d["groups"]:
                rows = g["per_layer"]
                if not rows or metric not in rows[0]:
                    raise Error(f"the report's groups have no per-layer {metric!r}; fix: pass param= one of its "
                                f"parameters, or a compare report")
                x = _np.array([row["index"]["mean"] if isinstance(row["index"], dict) else row["index"] for row in rows])
                mean = _np.array([_np.nan if row[metric]["mean"] is None else row[metric]["mean"] for row in rows])
                std = _np.array([0.0 if row[metric]["std"] is None else row[metric]["std"] for row in rows])
                label = f"{g['placement']} L={g['layers']}" + (f" {g['param']}={g['value']}" if "param" in g else "")
                st = _style(k)
                ax.fill_between(x, _np.maximum(mean - std, 0.1 * mean), mean + std, color=st["color"], alpha=0.18,
                                linewidth=0)
                ax.plot(x, mean, label=label, **st)
                k += 1
        else:
            raise Error("grad-by-depth reads analyze, compare or sweep reports; fix: pass gradflow.analyze's or "
                        "gradflow.compare's report")
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # layers are whole numbers
    ax.set_yscale("log")
    ax.set_xlabel("layer l")
    ax.set_ylabel("||dL/dx_l||" if param is None else f"||dL/dW|| ({param})")
    if k > 1:
        ax.legend(fontsize=7)


def _lines(reports):
    """(label, rows, is_group) per analyze report and per compare/sweep group."""
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
            raise Error("jacobian-norms reads analyze, compare or sweep reports; fix: pass gradflow.analyze's or "
                        "gradflow.compare's report")
    return out


def _value(row, field, group):
    """A per-layer number of an analyze report's layer (dotted field) or a group's per_layer row (mean, std)."""
    if group:
        cell = row.get(field)
        return (_np.nan, 0.0) if cell is None or cell["mean"] is None else (cell["mean"], cell["std"] or 0.0)
    v = row
    for part in field.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    return (_np.nan if v is None else float(v)), 0.0


def _jacobian_norms(ax, reports):
    from . import Error  # noqa: PLC0415
    lines = _lines(reports)
    drawn = 0
    for k, (label, rows, group) in enumerate(lines):
        for q, (field, name) in enumerate(_QUANTITIES):
            vals = [_value(row, field, group) for row in rows]
            mean = _np.array([v[0] for v in vals])
            if _np.all(_np.isnan(mean)):
                continue
            std = _np.array([v[1] for v in vals])
            x = _np.array([row["index"] for row in rows])
            # one report: a colour per quantity; several: a colour per report, a marker and dash per quantity
            st = _style(q) if len(lines) == 1 else dict(_style(k), marker=_MARKERS[q], linestyle=_DASHES[q])
            if group:
                ax.fill_between(x, _np.maximum(mean - std, 0.1 * mean), mean + std, color=st["color"], alpha=0.18,
                                linewidth=0)
            ax.plot(x, mean, label=name if len(lines) == 1 else f"{label}: {name}", **st)
            drawn += 1
    if not drawn:
        raise Error("no Jacobian norms in the reports; fix: rerun gradflow.analyze without gradients_only")
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_yscale("log")
    ax.set_xlabel("layer l")
    ax.set_ylabel("Jacobian norms")
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
