"""gradflow: exact float64 gradient flow through Transformers, from Python (docs/python.md).

The same library as the `gradflow` command: every keyword argument is the command-line flag of the same name
(``d_model=64`` is ``--d-model 64``, ``gradients_only=True`` is ``--gradients-only``), parsed, checked and refused by
the same code, and every report is the JSON the command writes, number for number.

    >>> import gradflow
    >>> m = gradflow.Model(placement="post", layers=6, d_model=32, heads=4, seq_len=8, seed=0)
    >>> r = gradflow.analyze(m)
    >>> r.grad_norm            # ||dL/dx_l|| per layer, a NumPy array
    >>> J = gradflow.jacobian(m, 0, None)   # dy/dx_0, (n*d, n*d) float64, no copy

Errors raise :class:`gradflow.Error` (a ValueError) with the command line's message and its fix.
"""
import json as _json

import numpy as _np

from ._gradflow import Error  # noqa: F401  (the library's errors, a ValueError)
from . import _gradflow
from .figures import plot  # noqa: F401  (matplotlib, imported only when drawing)

__version__ = _gradflow.version
__all__ = ["Error", "Model", "Report", "ExperimentReport", "analyze", "jacobian", "train", "compare", "sweep",
           "train_sweep",
           "blas_kernel", "placement_display_name", "plot"]


def _word(value):
    """A value as the command line spells it (floats by repr: the shortest text that reads back to the same double)."""
    if isinstance(value, bool):
        raise TypeError("a flag takes True (given) or False (not given)")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return ",".join(_word(v) for v in value)
    return str(value)


def _args(options):
    """Keyword arguments as command-line words: name_x=v -> --name-x v; True -> the flag; False and None -> nothing."""
    words = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            words.append(flag)
        else:
            words += [flag, _word(value)]
    return words


def _write_safetensors(path, tensors):
    """Arrays (NumPy, or anything with .detach().cpu().numpy(), e.g. torch tensors) as a safetensors file."""
    import struct  # noqa: PLC0415
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        if hasattr(value, "detach"):
            value = value.detach().cpu().numpy()
        if isinstance(value, _np.ma.MaskedArray):
            raise Error(f"tensor '{name}' is a masked array, whose mask would be ignored; fix: pass a plain array")
        a = _np.asarray(value)
        if a.dtype.kind not in "fiu":  # complex (its imaginary part would be dropped), bool, strings, objects
            raise Error(f"tensor '{name}' holds {a.dtype} values, not real numbers; fix: pass float64 or float32 "
                        "tensors (float16 and integer tensors are converted to float64)")
        if a.dtype not in (_np.float64, _np.float32):
            a = a.astype(_np.float64)
        a = _np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        header[str(name)] = {"dtype": "F64" if a.dtype == _np.float64 else "F32", "shape": list(a.shape),
                             "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    text = _json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for b in blobs:
            f.write(b)


class Model:
    """A model as the command line's model options give it (``gradflow placements`` lists the placements).

    ``Model(placement="pre", layers=24, d_model=64, heads=4, seq_len=16, init="xavier", init_scale="inv-sqrt-2L",
    seed=0)``; every option of ``gradflow analyze --help`` under "model" is a keyword (dashes as underscores). The
    options are checked at once (``Error`` with the command line's message). The parameters are drawn from the seed
    (or read from ``weights``) when an analysis runs, exactly as the command does it.
    """

    def __init__(self, **options):
        self._options = dict(options)
        _gradflow.check_model(_args(self._options))

    @classmethod
    def from_weights(cls, weights, config=None, **options):
        """A model with the blocks of a checkpoint, as ``--weights`` reads it (docs/formats.md): a path (a .safetensors
        file in PyTorch's nn.TransformerEncoder names, or a Hugging Face folder: BERT, RoBERTa, GPT-2), or a dict of
        arrays with those names (``{k: v.double().numpy() for k, v in model.state_dict().items()}``; torch tensors
        are taken too), with `config` the Hugging Face config.json's dict when the names are a Hugging Face model's.
        A dict is written to a private temporary folder that lives as long as the model (float64 and float32 arrays
        keep their dtype; others are converted to float64)."""
        if not isinstance(weights, dict):
            if config is not None:
                raise TypeError("config= goes with a dict of arrays; a folder's config.json is read from the folder")
            return cls(weights=str(weights), **options)
        import os  # noqa: PLC0415
        import tempfile  # noqa: PLC0415
        folder = tempfile.TemporaryDirectory(prefix="gradflow-weights-")
        _write_safetensors(os.path.join(folder.name, "model.safetensors"), weights)
        path = os.path.join(folder.name, "model.safetensors")
        if config is not None:
            try:  # NaN or Infinity is not JSON: named here, not as a broken config.json in a temporary folder
                text = _json.dumps(config, allow_nan=False)
            except ValueError as e:
                raise Error(f"config= holds a value JSON cannot hold ({e}); fix: give the model's config.json values "
                            "(no NaN or Infinity)") from None
            with open(os.path.join(folder.name, "config.json"), "w") as f:
                f.write(text)
            path = folder.name
        model = cls(weights=path, **options)
        model._weights_folder = folder  # removed with the model
        return model

    @property
    def options(self):
        """The keyword arguments the model was made with (a copy)."""
        return dict(self._options)

    def forward(self, x=None):
        """The forward pass at x (an (n, d) array; None: x_0 drawn from the seed, as analyze draws it): a pair
        (states, y), states[l] = x_l for l = 0..L (each (n, d); (n, 2d) for a two-stream scheme), y the output."""
        return _gradflow.forward(_args(self._options), x)

    def vjp(self, g, layer=0, x=None):
        """P_l^T g: the output cotangent g = dL/dy, an (n, d) array, back to x_l (the gradient dL/dx_l of the loss
        sum(g * y)), at the forward pass of x."""
        return _gradflow.vjp(_args(self._options), x, g, int(layer))

    def jvp(self, v, layer=0, x=None):
        """P_l v: a tangent v of x_l, an (n, d) array, forward to the output y, at the forward pass of x."""
        return _gradflow.jvp(_args(self._options), x, v, int(layer))

    def block_jacobian(self, layer, x=None):
        """B_l = dx_{l+1}/dx_l, dense, (n*d, n*d): jacobian(model, layer, layer + 1, x)."""
        return jacobian(self, layer, int(layer) + 1, x)

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self._options.items())
        return f"gradflow.Model({inner})"


def _flatten(prefix, value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out[prefix] = value


class Report:
    """An analyze report: ``to_dict()`` is the JSON ``gradflow analyze --json`` writes (docs/report-schema.md).

    Per-layer numbers come out as NumPy arrays by name: ``report.grad_norm``, ``report["layers"]``,
    ``report.layer_array("param_grad_norms.linear2.weight")``.
    """

    def __init__(self, data):
        self._data = data

    def to_dict(self):
        """The report as the command writes it (a deep copy)."""
        return _json.loads(_json.dumps(self._data))

    def __getitem__(self, key):
        return self._data[key]

    def __contains__(self, key):
        return key in self._data

    def keys(self):
        return self._data.keys()

    @property
    def layers(self):
        """The per-layer entries, bottom (l = 0) to top."""
        return self._data["layers"]

    def layer_array(self, field):
        """A per-layer number as an array over l; `field` may be dotted ("block_jacobian.spectral_norm"); NaN where a
        layer lacks it."""
        values = []
        for layer in self._data["layers"]:
            v = layer
            for part in field.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            values.append(_np.nan if v is None else float(v))
        return _np.array(values)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        layers = self._data.get("layers") or []
        if layers and name in layers[0]:
            return self.layer_array(name)
        if name in self._data:
            return self._data[name]
        raise AttributeError(f"the report has no per-layer or top-level field {name!r}")

    def to_pandas(self):
        """One row per layer, every numeric field flattened with dots (needs pandas: Debian's python3-pandas)."""
        import pandas  # noqa: PLC0415  (optional)
        rows = []
        for layer in self._data["layers"]:
            row = {}
            _flatten("", layer, row)
            rows.append(row)
        return pandas.DataFrame(rows)

    def __repr__(self):
        c = self._data.get("config", {})
        return (f"<gradflow.Report {c.get('placement')} L={c.get('layers')} d={c.get('d_model')} "
                f"mode={c.get('mode')}>")


class ExperimentReport(Report):
    """A compare, sweep or train-sweep report: ``to_dict()`` is the command's JSON, ``csv`` its long CSV, and
    ``to_pandas()`` that CSV as a DataFrame."""

    def __init__(self, data, csv):
        super().__init__(data)
        self.csv = csv

    def to_pandas(self):
        import io  # noqa: PLC0415
        import pandas  # noqa: PLC0415  (optional)
        return pandas.read_csv(io.StringIO(self.csv))

    def __repr__(self):
        d = self._data
        if "log" in d:  # gradflow.train: one run, not groups
            c = d.get("config", {})
            return (f"<gradflow.ExperimentReport train: {c.get('placement')} L={c.get('layers')} "
                    f"{d.get('final', {}).get('updates')} updates, {len(d['log'])} logged steps>")
        if "experiment" in d:
            return f"<gradflow.ExperimentReport {d['experiment']}: {len(d.get('groups', []))} groups>"
        return f"<gradflow.ExperimentReport train-sweep: {len(d.get('runs', []))} runs, {len(d.get('groups', []))} groups>"


def analyze(model, x=None, cotangent=None, progress=False, **options):
    """``gradflow analyze`` on `model`: gradient norms and Jacobian products across depth.

    x: the input x_0, an (n, d) array (default: drawn from the seed, as the command does); cotangent: dL/dy of
    ``loss="dot"``, the output's shape. Options are the command's engine options: ``mode="explicit"|"matrix-free"|
    "streamed"|"auto"``, ``gradients_only=True``, ``spectrum=True``, ``top_k``, ``max_memory="2G"``, ... (not given:
    the command's defaults). progress: the command's progress lines on stderr. Returns a :class:`Report`, equal to
    ``gradflow analyze --json`` of the same options number for number.
    """
    if not isinstance(model, Model):
        raise TypeError("analyze(model, ...) takes a gradflow.Model")
    words = _args(model._options) + _args(options)
    return Report(_json.loads(_gradflow.analyze(words, x, cotangent, bool(progress))))


def jacobian(model, from_layer=0, to_layer=None, x=None):
    """The explicit Jacobian dx_to/dx_from at the network's own forward pass, ``gradflow jacobian``'s matrix:
    shape (n*d, n*d), row-major flattening of the (n, d) states; to_layer None: the output y. The array owns the
    library's buffer (no copy) and is writable."""
    if not isinstance(model, Model):
        raise TypeError("jacobian(model, ...) takes a gradflow.Model")
    return _gradflow.jacobian(_args(model._options), int(from_layer),
                              None if to_layer is None else int(to_layer), x)


def blas_kernel():
    """The BLAS kernel set this process's products run on ("OpenBLAS 0.3.21 Haswell"), as reports record it under
    "blas_kernel": results of two kernel sets differ in the last bits (docs/cluster.md)."""
    return _gradflow.blas_kernel()


def placement_display_name(name):
    """A placement as papers and gradflow's figures name it: ``placement_display_name("post") == "Post-LN"`` (the
    placement registry's display name; the name itself when no scheme has it)."""
    return _gradflow.placement_display_name(name)


def _experiment(command, progress, options):
    report, csv = _gradflow.experiment(command, _args(options), bool(progress))
    return ExperimentReport(_json.loads(report), csv)


def train(progress=False, **options):
    """``gradflow train``: a small causal language model trained in float64 (or in mixed precision:
    ``precision="bf16"``, ``loss_scale="dynamic"``) on a synthetic task, with per-layer gradient records
    (``placement="post"``, ``layers=6``, ``task="copy"``, ``steps=500``, ``lr=1e-2``, ...; docs/training.md). Returns an :class:`ExperimentReport`: the train report's JSON and its long CSV."""
    report, csv = _gradflow.train(_args(options), bool(progress))
    return ExperimentReport(_json.loads(report), csv)


def compare(progress=False, **options):
    """``gradflow compare``: placements x depths x seeds (``placements="post,pre"``, ``layers=[6, 12, 24]``,
    ``seeds=3``, and the model options); returns an :class:`ExperimentReport`."""
    return _experiment("compare", progress, options)


def sweep(progress=False, **options):
    """``gradflow sweep``: one option over values (``param="init-scale"``, ``values="1,0.5,inv-sqrt-2L"``, optionally
    ``param2``/``values2``); returns an :class:`ExperimentReport`."""
    return _experiment("sweep", progress, options)


def train_sweep(progress=False, **options):
    """``gradflow train-sweep``: trainings over placements x depths x warmups x learning rates; returns an
    :class:`ExperimentReport` (its ``runs`` and ``groups``)."""
    return _experiment("train-sweep", progress, options)
