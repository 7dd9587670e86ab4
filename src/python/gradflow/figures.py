"""gradflow.plot (figures.py): the command's figure kinds drawn with matplotlib into an axes you give (docs/python.md).

The same data as `gradflow plot --kind KIND` (src/plot/kind_*.cpp), in the same colours (Okabe and Ito's palette,
src/plot/style.cpp). Kinds so far: grad-by-depth.
"""
import numpy as _np

# src/plot/style.cpp's palette, in its order: colour, marker, dash
_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#B8A000"]
_MARKERS = ["o", "s", "^", "D", "v", "<", ">", "p"]
_DASHES = ["-", "--", ":", "-."]
KINDS = ("grad-by-depth",)


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


def plot(reports, kind="grad-by-depth", ax=None, param=None):
    """Draws `kind` from one report or a list of them into `ax` (a matplotlib Axes; None: a new figure's) and returns
    the axes. grad-by-depth: ||dL/dx_l|| (or ||dL/dW|| of `param`, e.g. "linear2.weight") against l on a log axis;
    an analyze report gives one line, a compare or sweep report one line per group with a band mean +- std."""
    from . import Error  # noqa: PLC0415
    if kind not in KINDS:
        raise Error(f"plot kind {kind!r} is not drawn from Python yet (it has {', '.join(KINDS)}); fix: use "
                    f"`gradflow plot REPORT.json --kind {kind}` on the report's to_dict() saved as JSON")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (optional: python3-matplotlib)
    if ax is None:
        _, ax = plt.subplots(figsize=(3.5, 2.6))
    if not isinstance(reports, (list, tuple)):
        reports = [reports]
    _grad_by_depth(ax, reports, param)
    return ax
