"""gradflow.plot (figures.py): the command's figure kinds drawn with matplotlib into an axes you give (docs/python.md).

The same data as `gradflow plot --kind KIND` (src/plot/kind_*.cpp), in the same colours (Okabe and Ito's palette,
src/plot/style.cpp). Kinds: grad-by-depth, jacobian-norms, token-geometry, spectrum, heatmap, sensitivity,
loss-curves, grad-over-training (the others, phase-diagram, attention-entropy and claims, are the command's).
"""
import numpy as _np

# src/plot/style.cpp's palette, in its order: colour, marker, dash
_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#B8A000"]
_MARKERS = ["o", "s", "^", "D", "v", "<", ">", "p"]
_DASHES = ["-", "--", ":", "-."]
KINDS = ("grad-by-depth", "jacobian-norms", "token-geometry", "spectrum", "heatmap", "sensitivity", "loss-curves",
         "grad-over-training")
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


def _axes(ax, count):
    """`count` axes: `ax` itself (one Axes, or a sequence of `count`), or a new figure's row of them."""
    from . import Error  # noqa: PLC0415
    import matplotlib.pyplot as plt  # noqa: PLC0415  (optional: python3-matplotlib)
    if ax is None:
        _, axes = plt.subplots(1, count, figsize=(3.5 * count, 2.6), squeeze=False)
        return list(axes[0])
    axes = list(ax) if isinstance(ax, (list, tuple)) or hasattr(ax, "flat") else [ax]
    axes = list(getattr(ax, "flat", axes))
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
            key = g["placement"] + (f", {d['param2']}={g['value2']}" if "value2" in g else "")
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


def _train_logs(reports, kind):
    from . import Error  # noqa: PLC0415
    out = []
    for i, r in enumerate(reports):
        d = r.to_dict() if hasattr(r, "to_dict") else r
        if "log" not in d:
            raise Error(f"{kind} reads train reports (gradflow.train's); fix: pass one, or draw a train-sweep with "
                        f"`gradflow plot --kind {kind}`")
        c = d.get("config", {})
        out.append((f"{c.get('placement')} L={c.get('layers')}" if len(reports) > 1 else "", d["log"]))
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


def plot(reports, kind="grad-by-depth", ax=None, param=None, metric="summary.bottom_to_top_grad_ratio", matrix="P",
         at=None, tokens=None):
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
    sensitivity: `metric` (a compare/sweep scalar) against the sweep's parameter or the compare's depth, error bars
    over seeds, a line per placement.
    loss-curves: train (dashed) and eval (solid) loss against step of train reports.
    grad-over-training: ||dL/dx_l|| against step of a train report, or of a report over a run's checkpoints."""
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
    (one,) = _axes(ax, 1)
    if kind == "jacobian-norms":
        _jacobian_norms(one, reports)
    elif kind == "spectrum":
        _spectrum(one, reports, matrix, at)
    elif kind == "heatmap":
        if len(reports) != 1:
            raise Error("heatmap draws one Jacobian; fix: pass one array")
        _heatmap(one, reports[0], tokens)
    elif kind == "sensitivity":
        _sensitivity(one, reports, metric)
    elif kind == "loss-curves":
        _loss_curves(one, reports)
    elif kind == "grad-over-training":
        _grad_over_training(one, reports)
    else:
        _grad_by_depth(one, reports, param)
    return one
