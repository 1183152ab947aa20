"""einexpr: einops-style tensor expressions, planned, costed and run by a C++ engine.

    import numpy as np, einexpr
    x = np.random.rand(2, 3, 4).astype(np.float32)
    y = np.random.rand(2, 5, 4).astype(np.float32)
    einexpr.einsum(x, y, "b s1 h, b s2 h -> b s1 s2")      # a numpy array of shape (2, 3, 5)
    einexpr.rearrange(x, "b s (h d) -> b h s d", h=2)      # a view of x: no copy
    einexpr.cost("einsum", "i j, j k -> i k", i=1024, j=1024, k=1024)["flops"]  # 2147483648
    m = einexpr.Program("examples/models/lecture2.ein", B=64)  # a model program (or its text)
    m.cost(optimizer="adam")["step_flops"]                   # `einexpr program cost ... --json`
    m.run(x=data, w1=w1, w2=w2)["loss"]                       # {output: array}
    t = m.trainer(optimizer="adam", lr=1e-3, w1=w1, w2=w2)   # then t.step(x=data) -> the loss

Inputs are numpy arrays (any strides; read through the buffer protocol, not copied) and
anything with __dlpack__ (torch tensors, not copied). Results are numpy arrays for numpy
inputs and torch tensors for torch inputs (the first input decides), and share memory with
the input wherever einexpr returns a view. Errors raise einexpr.Error subclasses with the
C++ library's messages. The GIL is released while einexpr computes.
"""
import json as _json
import os as _os
import sys as _sys

import numpy as _np

from ._einexpr import (AllocationError, ArgumentError, DeviceError, DTypeError, Error, IndexError, InternalError,
                       PatternError, ShapeError, Tensor, __version__, has_cuda)
from . import _einexpr as _core

__all__ = ["einsum", "rearrange", "reduce", "repeat", "map", "softmax", "log_softmax", "layer_norm", "rms_norm",
           "get_at", "add_at", "cross_entropy", "dropout", "pack", "unpack", "parse_shape", "cost", "explain", "ops",
           "Program", "Trainer",
           "Tensor", "Error", "PatternError", "ShapeError", "DTypeError", "DeviceError", "IndexError",
           "AllocationError", "InternalError", "ArgumentError", "__version__", "has_cuda"]


# ---- inputs ---------------------------------------------------------------------------

def _torch_module(x):
    """torch, when x is a torch tensor (torch is never imported here otherwise)."""
    torch = _sys.modules.get("torch")
    return torch if torch is not None and isinstance(x, torch.Tensor) else None


def _has_buffer(x):
    try:
        memoryview(x).release()
        return True
    except TypeError:
        return False


def _from_buffer(x):
    t = _core.from_buffer(x)
    if t is None:
        # Negative or odd strides, an unaligned pointer or a swapped byte order: einexpr
        # reads a native, aligned, C-ordered copy instead.
        a = _np.asarray(x)
        t = _core.from_buffer(_np.array(a, dtype=a.dtype.newbyteorder("="), order="C"))
    return t


def _from_torch(torch, x, what):
    if x.requires_grad:
        raise ArgumentError(f"{what} requires grad: einexpr does not record gradients; pass it .detach()ed")
    if x.dtype == torch.bool:
        # DLPack 0.6 has no bool; numpy shares a CPU bool tensor's memory instead.
        if x.device.type != "cpu":
            raise DTypeError(f"{what} is a bool tensor on {x.device}: DLPack 0.6 cannot carry bool; "
                             "convert it to an integer dtype first")
        return _from_buffer(x.numpy())
    if x.device.type == "cuda":
        torch.cuda.current_stream(x.device).synchronize()  # einexpr computes on its own stream
    return _core.from_dlpack(x.__dlpack__())


def _tensor(x, what):
    """(einexpr tensor viewing x, the kind of result x asks for)."""
    if isinstance(x, Tensor):
        return x, "einexpr"
    torch = _torch_module(x)
    if torch is not None:
        return _from_torch(torch, x, what), "torch"
    if isinstance(x, _np.ndarray) or _has_buffer(x):
        return _from_buffer(x), "numpy"
    if hasattr(x, "__dlpack__"):
        return _core.from_dlpack(x.__dlpack__()), "dlpack"
    raise ArgumentError(f"{what} is a {type(x).__module__}.{type(x).__qualname__}: einexpr takes numpy arrays, "
                        "torch tensors and objects with __dlpack__")


def _is_number(x):
    return isinstance(x, (int, float, _np.integer, _np.floating)) and not isinstance(x, (bool, _np.bool_))


def _tensors(xs, what):
    """The operands as einexpr tensors; a Python or numpy number is a 0-d operand of the first
    tensor operand's dtype (einexpr.map(x, 0.125, "b s, -> b s", "mul"))."""
    pairs = [None if _is_number(x) else _tensor(x, f"{what} {i + 1}") for i, x in enumerate(xs)]
    tensors = [p for p in pairs if p is not None]
    if not tensors:
        raise ArgumentError(f"every {what} is a number: give at least one array or tensor")
    like, kind = tensors[0]
    ts = [_core.scalar_like(float(x), like) if p is None else p[0] for x, p in zip(xs, pairs)]
    return ts, kind


# ---- outputs --------------------------------------------------------------------------

def _result(t, kind):
    """t as the kind of object its input was, sharing t's memory."""
    if kind == "einexpr":
        return t
    if kind == "torch":
        import torch
        if t.dtype == "bool":
            if t.device != "cpu":
                raise DTypeError(f"a bool result on {t.device} cannot pass through DLPack 0.6")
            return torch.from_numpy(_np.asarray(t))
        return torch.utils.dlpack.from_dlpack(t.__dlpack__())
    if t.device != "cpu":
        return t  # a GPU result for a non-torch DLPack input: take it with your library's from_dlpack
    if t.dtype not in _NUMPY_DTYPES:  # before the buffer protocol, which cannot refuse it cleanly
        raise DTypeError(f"numpy has no {t.dtype}: give torch tensors to get torch results")
    return _np.asarray(t)


_NUMPY_DTYPES = ("f64", "f32", "f16", "i64", "i32", "bool")


# ---- arguments ------------------------------------------------------------------------

def _pattern(pattern, what="pattern"):
    if not isinstance(pattern, str):
        raise ArgumentError(f"the {what} must be a str, not {type(pattern).__name__}")
    return pattern


def _lengths(lengths):
    out = []
    for name, value in lengths.items():
        if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
            raise ArgumentError(f"axis length {name}={value!r} is not an integer")
        out.append((name, int(value)))
    return out


# ---- the ops --------------------------------------------------------------------------

def einsum(*tensors_and_pattern, **lengths):
    """einsum(x, y, ..., pattern, **lengths): numpy.einsum's semantics with einops' names.

    einsum(x, y, "b s1 h, b s2 h -> b s1 s2"); an axis missing from the output is summed, a
    repeated one takes the diagonal; compositions work in operands ("b (h d), h d k -> b k").
    """
    if len(tensors_and_pattern) < 2:
        raise ArgumentError("einsum(x, y, ..., pattern): give the operands, then the pattern")
    *xs, pattern = tensors_and_pattern
    if isinstance(xs[0], str) and not isinstance(pattern, str):
        raise ArgumentError("einsum takes the pattern last, as einops does: einsum(x, y, pattern)")
    ts, kind = _tensors(xs, "operand")
    return _result(_core.einsum(ts, _pattern(pattern), _lengths(lengths)), kind)


def _outputs(pattern):
    """How many outputs a pattern names: several after "->" split a concatenation."""
    return pattern.split("->", 1)[1].count(",") + 1 if "->" in pattern else 1


def rearrange(x, pattern, **lengths):
    """rearrange(x, "b s (h d) -> b h s d", h=8): a view of x wherever its strides allow.

    rearrange([x, y], "b s1 d, b s2 d -> b (s1 + s2) d") concatenates (einx's '+'), one copy
    per input; rearrange(qkv, "b s (q + k + v) -> b s q, b s k, b s v", q=64, k=64) splits into
    a tuple (views where the strides allow; the lengths of all parts but one given)."""
    pattern = _pattern(pattern)
    if isinstance(x, (list, tuple)) and "," in pattern.split("->", 1)[0]:
        ts, kind = _tensors(list(x), "input")
        return _result(_core.concatenate(ts, pattern, _lengths(lengths)), kind)
    t, kind = _tensor(x, "the input")
    if _outputs(pattern) > 1:
        return tuple(_result(u, kind) for u in _core.split(t, pattern, _lengths(lengths)))
    return _result(_core.rearrange(t, pattern, _lengths(lengths)), kind)


def reduce(x, pattern, reduction, *, correction=1, **lengths):
    """reduce(x, "b s h -> b h", "mean"): sum, mean, max, min, prod (any, all on bool), and on
    floats var and std (divided by n - correction; 1 by default, as torch) and logsumexp."""
    t, kind = _tensor(x, "the input")
    if isinstance(correction, bool) or not isinstance(correction, int) or correction < 0:
        raise ArgumentError(f"correction must be a non-negative int, not {correction!r}")
    return _result(_core.reduce(t, _pattern(pattern), _pattern(reduction, "reduction"), _lengths(lengths),
                                correction), kind)


def repeat(x, pattern, **lengths):
    """repeat(x, "h w -> c h w", c=3): a stride-0 view of x where it only adds axes."""
    t, kind = _tensor(x, "the input")
    return _result(_core.repeat(t, _pattern(pattern), _lengths(lengths)), kind)


def map(x, *args, **lengths):  # noqa: A001 (einexpr.map, as in C++)
    """map(x, "relu") elementwise; map(x, "b s (h d) -> b h s d", "gelu", h=8) around a
    rearrange; map(x, y, "b s h, h -> b s h", "add") with named broadcasting.

    Unary: relu gelu gelu_erf exp log square sqrt rsqrt neg abs sigmoid tanh silu reciprocal
    erf softplus. Binary: add sub mul div maximum minimum.
    """
    if len(args) == 1 and not lengths:
        t, kind = _tensor(x, "the input")
        return _result(_core.map_unary(t, _pattern(args[0], "function")), kind)
    if len(args) == 2 and isinstance(args[0], str):
        t, kind = _tensor(x, "the input")
        return _result(_core.map_pattern(t, _pattern(args[0]), _pattern(args[1], "function"), _lengths(lengths)),
                       kind)
    if len(args) == 3 and not lengths:
        (t, u), kind = _tensors([x, args[0]], "operand")
        return _result(_core.map_binary(t, u, _pattern(args[1]), _pattern(args[2], "function")), kind)
    if len(args) == 1 and _is_number(x):
        raise ArgumentError("map(x, function): x is a number; give an array or tensor")
    raise ArgumentError("map(x, function), map(x, pattern, function, **lengths) or map(x, y, pattern, function)")


def _normalize(x, pattern, kind, eps, lengths):
    t, rkind = _tensor(x, "the input")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise ArgumentError(f"eps must be a non-negative number, not {eps!r}")
    return _result(_core.normalize(t, _pattern(pattern), kind, float(eps), _lengths(lengths)), rkind)


def softmax(x, pattern, **lengths):
    """softmax(x, "b h q [k]"): exp(x - max) / sum along the bracketed axes (einx's notation)."""
    return _normalize(x, pattern, "softmax", 0.0, lengths)


def log_softmax(x, pattern, **lengths):
    """log_softmax(x, "b h q [k]"): x - max - log(sum exp(x - max)) along the bracketed axes."""
    return _normalize(x, pattern, "log_softmax", 0.0, lengths)


def _affine(x, pattern, kind, eps, parts, lengths):
    """A normalization with its gain (and bias): one plan, as the model language's statement."""
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise ArgumentError(f"eps must be a non-negative number, not {eps!r}")
    tensors, kind_of = _tensors([x] + parts, "operand")
    return _result(_core.normalize_affine(tensors, _pattern(pattern), kind, float(eps), _lengths(lengths)), kind_of)


def layer_norm(x, pattern, eps=1e-5, *, weight=None, bias=None, **lengths):
    """layer_norm(x, "b s [d]"): (x - mean) / sqrt(var + eps) along the bracketed axes, the
    population variance as torch's layer_norm. weight= and bias= (shaped as x's bracketed dims,
    as torch's over normalized_shape) add the affine part in the same plan:
    layer_norm(x, "b s [d]", weight=g, bias=b) is torch's F.layer_norm(x, (d,), g, b)."""
    if weight is None and bias is None:
        return _normalize(x, pattern, "layer_norm", eps, lengths)
    if weight is None:
        raise ArgumentError("layer_norm's bias needs a weight (give ones for none)")
    return _affine(x, pattern, "layer_norm", eps, [weight] + ([] if bias is None else [bias]), lengths)


def rms_norm(x, pattern, eps=1e-6, *, weight=None, **lengths):
    """rms_norm(x, "b s [d]"): x / sqrt(mean(x^2) + eps) along the bracketed axes; weight= (shaped
    as the bracketed dims) multiplies the result in the same plan (LLaMA's RMSNorm)."""
    if weight is None:
        return _normalize(x, pattern, "rms_norm", eps, lengths)
    return _affine(x, pattern, "rms_norm", eps, [weight], lengths)


def get_at(table, indices, pattern, **lengths):
    """get_at(wte, tokens, "[v] d, b s -> b s d"): the table's rows at integer indices (int64 or
    int32), einx's notation with the indexed axis in brackets; an embedding lookup. An index
    outside the axis raises einexpr.IndexError (also a Python IndexError)."""
    (t, i), kind = _tensors([table, indices], "operand")
    return _result(_core.get_at(t, i, _pattern(pattern), _lengths(lengths)), kind)


def add_at(table, indices, updates, pattern, **lengths):
    """add_at(table, idx, updates, "[v] d, b s, b s d -> [v] d"): a new table with each update
    added at its index (repeated indices add up); get_at's gradient."""
    (t, i, u), kind = _tensors([table, indices, updates], "operand")
    return _result(_core.add_at(t, i, u, _pattern(pattern), _lengths(lengths)), kind)


def cross_entropy(logits, targets, pattern, *, ignore_index=-100, **lengths):
    """cross_entropy(logits, targets, "b s [v], b s -> b s"): the loss at every position, as
    torch's F.cross_entropy(reduction='none'), fused (no log-probabilities materialized); a
    target equal to ignore_index gives 0."""
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, _np.integer)):
        raise ArgumentError(f"ignore_index must be an int, not {ignore_index!r}")
    (x, t), kind = _tensors([logits, targets], "operand")
    return _result(_core.cross_entropy(x, t, _pattern(pattern), int(ignore_index), _lengths(lengths)), kind)


def dropout(x, p, seed):
    """dropout(x, 0.1, seed): x with each element zeroed with probability p and the others scaled
    by 1/(1-p), as torch's F.dropout in training; the mask is drawn from the seed alone
    (SplitMix64), the same for one seed on the CPU, the GPU and any thread count. p = 0 gives x."""
    seed = _int(seed, "seed")
    if not -2**63 <= seed < 2**64:
        raise ArgumentError(f"seed must be a 64-bit integer, not {seed}")
    (t,), kind = _tensors([x], "operand")
    return _result(_core.dropout(t, _float(p, "p"), seed - 2**64 if seed >= 2**63 else seed), kind)


def ops():
    """The names of einexpr's ops, as cost() and explain() take them."""
    return list(_core.op_names())


def pack(tensors, pattern):
    """pack([x, y], "b * h") -> (packed, shapes): einops.pack; give shapes to unpack."""
    ts, kind = _tensors(list(tensors), "tensor")
    packed, shapes = _core.pack(ts, _pattern(pattern))
    return _result(packed, kind), [tuple(s) for s in shapes]


def unpack(packed, packed_shapes, pattern):
    """unpack(packed, shapes, "b * h") -> [x, y]: einops.unpack; the results are views of packed."""
    t, kind = _tensor(packed, "the packed tensor")
    shapes = [list(s) for s in packed_shapes]
    return [_result(u, kind) for u in _core.unpack(t, shapes, _pattern(pattern))]


def parse_shape(x, pattern):
    """parse_shape(x, "b _ h") -> {"b": 2, "h": 4}: einops.parse_shape; "_" skips a dim."""
    t, _ = _tensor(x, "the input")
    return dict(_core.parse_shape(t, _pattern(pattern)))


def cost(op, pattern, reduction=None, *, dtype="f32", device="h100", backward=False, ignore_index=-100, **sizes):
    """What an expression costs, from axis sizes alone: the object `einexpr cost --json` prints.

    cost("einsum", "b d, d k -> b k", b=16384, d=32768, k=8192, dtype="bf16")["flops"]
    Fields: op, pattern, dtype, reduction (reduce), sizes, flops, flops_exact, naive_flops,
    flops_numpy, macs, bytes_read, bytes_written, bytes_planned, peak_extra_bytes, intensity,
    intensity_exact, formulas, steps, backward_flops, backward_bytes, backward (backward=True)
    and roofline. Counts are exact Python ints, however large. Where a count cannot be given
    (bool has no gradient; the device tables list no peak for bool and integers; naive_flops
    or flops_numpy 2^128 or more, as numpy's naive count of a 64-operand einsum) the field is
    None beside backward_error, roofline_error, naive_flops_error or flops_numpy_error.
    """
    text = _core.cost_json(_pattern(op, "op"), _pattern(pattern), _pattern(reduction or "", "reduction"),
                           _lengths(sizes), _pattern(dtype, "dtype"), _pattern(device, "device"), bool(backward),
                           int(ignore_index))
    return _json.loads(text)


def explain(op, pattern, reduction=None, *, dtype="f32", **sizes):
    """The plan of an expression, step by step, with each step's FLOPs and bytes (as `einexpr explain`)."""
    return _core.explain_text(_pattern(op, "op"), _pattern(pattern), _pattern(reduction or "", "reduction"),
                              _lengths(sizes), _pattern(dtype, "dtype"))


# ---- model programs -------------------------------------------------------------------

def _recompute(recompute, checkpoints, memory_limit):
    """(mode, checkpoints given, checkpoints, memory limit) for the core, "" where not given."""
    if checkpoints is not None and (isinstance(checkpoints, str) or not isinstance(checkpoints, (list, tuple))):
        raise ArgumentError(f"checkpoints must be a list of statement results, not {checkpoints!r}")
    if memory_limit is not None and (isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, str))):
        raise ArgumentError(f"memory_limit must be a byte count (an int, or a str such as '24MiB'), not {memory_limit!r}")
    return (_pattern(recompute or "", "recompute"), checkpoints is not None,
            [_pattern(c, "checkpoints") for c in (checkpoints or [])],
            "" if memory_limit is None else _pattern(str(memory_limit), "memory_limit"))


def _named(tensors, what):
    """[(name, einexpr tensor)] and the kind of result the first asks for."""
    named, kind = [], "numpy"
    for i, (name, x) in enumerate(tensors.items()):
        t, k = _tensor(x, f"{what} '{name}'")
        named.append((name, t))
        if i == 0:
            kind = k
    return named, kind


def _float(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float, _np.integer, _np.floating)):
        raise ArgumentError(f"{what} must be a number, not {value!r}")
    return float(value)


def _int(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise ArgumentError(f"{what} must be an integer, not {value!r}")
    return int(value)


def _seed(value):
    value = _int(value, "seed")
    if not 0 <= value < 2**64:
        raise ArgumentError(f"seed must be in [0, 2**64), not {value}")
    return value


class Program:
    """A model program (docs/programs.md's language): Program(path_or_text, **sizes).

    A str naming an existing file, one line ending in ".ein", or an os.PathLike is read as
    that file; any other str is the program's text (named "<program>" in messages). sizes override the program's axis
    lengths (B=64). A program that does not parse raises einexpr.Error with the line, the
    column and a caret; shapes are checked by check() and whenever the program is planned.

        m = einexpr.Program("examples/models/lecture2.ein", B=64)
        m.check()                                   # None, or raises
        m.cost(optimizer="adam")["step_flops"]      # `einexpr program cost FILE B=64 --json`
        m.run(x=x, w1=w1, w2=w2)["loss"]            # {output name: array}
        t = m.trainer(optimizer="adam", lr=1e-3, w1=w1, w2=w2)
        loss = t.step(x=x)                          # forward, backward, update: the loss
    """

    def __init__(self, path_or_text, **sizes):
        if isinstance(path_or_text, _os.PathLike):
            source, is_file = _os.fspath(path_or_text), True
            if not isinstance(source, str):
                source = _os.fsdecode(source)
        elif isinstance(path_or_text, str):
            # One line ending in .ein is a path even when no such file exists (then "cannot read").
            one_line_ein = "\n" not in path_or_text and path_or_text.endswith(".ein")
            source, is_file = path_or_text, one_line_ein or _os.path.isfile(path_or_text)
        else:
            raise ArgumentError(f"Program takes a path or the program's text, not {type(path_or_text).__name__}")
        self._core = _core.Program(source, is_file, _lengths(sizes))

    @property
    def file(self):
        """The path the program was read from, or "<program>" for text."""
        return self._core.file

    @property
    def inputs(self):
        """The names of the program's inputs (data), in declaration order."""
        return [n for n, kind in self._core.declarations() if kind == "input"]

    @property
    def params(self):
        """The names of the program's params (trainable), in declaration order."""
        return [n for n, kind in self._core.declarations() if kind == "param"]

    @property
    def outputs(self):
        """The names of the program's outputs (its output lines, else its last statement)."""
        return list(self._core.outputs())

    def shapes(self, dtype="f32"):
        """{name: (shape, dtype)} of every input and param, planned with the sizes (dtype for
        those declared without one): what run() and trainer() take."""
        return {name: (tuple(shape), dt) for name, shape, dt in self._core.shapes(_pattern(dtype, "dtype"))}

    def __repr__(self):
        return f"einexpr.Program({self.file!r})"

    def check(self):
        """Plans the program with its sizes: None, or einexpr.Error at the line and column of
        the first fault (`einexpr program check`)."""
        self._core.check()

    def cost(self, optimizer="sgd", mixed_precision=False, dtype="f32", device="h100", recompute=None,
             checkpoints=None, memory_limit=None):
        """A training step's cost from the sizes alone: the object `einexpr program cost FILE
        NAME=LEN... --json` prints (forward, backward and optimizer FLOPs and bytes, memory,
        each statement with its gradients, the roofline on `device`, the 6·N·P estimate).
        dtype is that of tensors declared without one. recompute, checkpoints, memory_limit:
        what the backward keeps, as trainer() takes them."""
        text = self._core.cost_json(_pattern(optimizer, "optimizer"), bool(mixed_precision), _pattern(dtype, "dtype"),
                                    _pattern(device, "device"), _recompute(recompute, checkpoints, memory_limit))
        return _json.loads(text)

    def run(self, **inputs):
        """Runs the program on every input and param by name: {output name: array}, numpy
        arrays for numpy inputs and torch tensors for torch ones (the first input decides).
        The given shapes bind the axes (sizes and the axes line must agree with them); the
        plan is kept for the next run with the same shapes and dtypes."""
        named, kind = _named(inputs, "input")
        return {name: _result(t, kind) for name, t in self._core.run(named)}

    def trainer(self, optimizer="sgd", lr=1e-3, momentum=0.9, weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8,
                dtype=None, mixed_precision=False, micro_batches=1, batch_axis="B", recompute=None, checkpoints=None,
                memory_limit=None, seed=0, **params):
        """A Trainer of the program, whose one output is the loss (a 0-d float), from every
        param's initial value (copied). optimizer: sgd, momentum, adam or adamw, step for step
        torch.optim's (momentum is momentum's; betas and eps adam's and adamw's). dtype is that
        of inputs declared without one: by default the params' dtype (f32 or f64).
        mixed_precision: bf16 / f16 params updated through f32 master weights. micro_batches:
        each step's inputs cut into that many parts along batch_axis, their gradients summed
        into one update (the loss the mean of the parts'). What the backward keeps:
        recompute "none" (everything it reads), "checkpoints" (only `checkpoints`, a list of
        statement results, or else the file's checkpoint lines; every other tensor it reads
        made again from them; []: only the loss) or "auto" (chosen so the step holds at most
        memory_limit bytes, an int or "24MiB", with the fewest FLOPs made again); by default
        the file's checkpoint lines, else none. seed: dropout's random stream (the same seed, the
        same masks on any machine)."""
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ArgumentError(f"betas must be a pair (beta1, beta2), not {betas!r}")
        named, kind = _named(params, "param")
        if dtype is None:
            dtypes = {t.dtype for _, t in named}
            dtype = dtypes.pop() if len(dtypes) == 1 else "f32"
        core = self._core.trainer(_pattern(optimizer, "optimizer"), _float(lr, "lr"), _float(momentum, "momentum"),
                                  _float(weight_decay, "weight_decay"), _float(betas[0], "betas[0]"),
                                  _float(betas[1], "betas[1]"), _float(eps, "eps"), _pattern(dtype, "dtype"),
                                  bool(mixed_precision), _int(micro_batches, "micro_batches"),
                                  _pattern(batch_axis, "batch_axis"), _recompute(recompute, checkpoints, memory_limit),
                                  _seed(seed), named)
        return Trainer(core, "torch" if kind == "torch" else "numpy")


class Trainer:
    """Program.trainer()'s result: forward, backward and update planned once, in one arena.

    step(**inputs) trains one step on the program's inputs and returns the loss (before the
    update); parameters() and gradients() are numpy copies; steps counts the steps taken."""

    def __init__(self, core, kind="numpy"):
        self._core = core
        self._kind = kind

    def step(self, **inputs):
        """One step on every input by name: forward, backward, update. Returns the loss as a
        float. A NaN or infinite loss raises einexpr.Error, the params left as they were."""
        named, _ = _named(inputs, "input")
        return self._core.step(named)

    def parameters(self):
        """{param name: array}, copies of the params now: numpy arrays, or torch tensors where
        the trainer's params were given as torch tensors (bf16 ones included)."""
        return {name: _result(t, self._kind) for name, t in self._core.parameters()}

    def gradients(self):
        """{param name: array}, copies of each param's gradient in the last step (a param the
        loss does not depend on has none), numpy or torch as parameters()."""
        return {name: _result(t, self._kind) for name, t in self._core.gradients()}

    @property
    def steps(self):
        """The steps taken."""
        return self._core.steps

    @property
    def optimizer(self):
        return self._core.optimizer

    @property
    def peak_bytes_predicted(self):
        """What the trainer allocated: the arena, the params, the optimizer's state, the
        program's numbers. A step allocates nothing more."""
        return self._core.peak_bytes_predicted

    @property
    def arena_bytes(self):
        return self._core.arena_bytes

    @property
    def recompute_flops(self):
        """The forward FLOPs a step does again (checkpoints); 0 when everything is kept."""
        return self._core.recompute_flops

    def __repr__(self):
        return f"einexpr.Trainer(optimizer={self.optimizer!r}, steps={self.steps})"
