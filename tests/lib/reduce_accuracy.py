#!/usr/bin/python3
"""Generates tests/lib/reduce_accuracy.inc: numpy's rounding error on f32 sums, means,
variances, logsumexps, dot products and normalizations, for tests/lib/test_reduce_accuracy.cpp
(which makes the same inputs and requires einexpr's error to be at most twice numpy's).

Run with Debian's python3-numpy (1.24):  /usr/bin/python3 tests/lib/reduce_accuracy.py
With --cli BUILD/lib/einexpr [--cli OTHER...] it also runs each case through the tool on .npy
files and prints numpy's and each tool's error side by side (before / after a change).

Inputs: splitmix64 (counter-based: value i is mix(seed + (i + 1)·0x9E3779B97F4A7C15)), top
53 bits as a double u in [0, 1), then one of five distributions, in double and rounded to
f32 once (so C++ makes the same bits):
  uniform   u                  symmetric  2u - 1            normal  u1 + u2 + u3 + u4 - 2
  offset    1000 + (2u - 1)    heavy      1 / (u + 1e-3) - 1 (positive, tail to 999)
Shapes: flat (4 Mi values, reduced to one), rows (1024 x 4096, each row reduced), strided
(4096 x 1024, the outer axis reduced: each output reads a column 1024 apart).
The exact value is computed from the same f32 values in float64 with math.fsum (sums) or
float64 two-pass (variance) and f64 exp/log; a case's error is the largest relative error
over its outputs: |got - exact| / |exact|. Normalizations (softmax, log_softmax, layer_norm,
rms_norm over 16 rows of 65536) against numpy's usual f32 formulas: the error is normwise,
max |got - exact| / max |exact|.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
N = 4 * 1024 * 1024
SHAPES = {"flat": (N,), "rows": (1024, 4096), "strided": (4096, 1024)}
DISTS = ["uniform", "symmetric", "normal", "offset", "heavy"]


def splitmix(seed, n):
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (np.arange(1, n + 1, dtype=np.uint64) * GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53


def make(dist, n, seed):
    if dist == "normal":
        u = splitmix(seed, 4 * n).reshape(n, 4)
        v = u[:, 0] + u[:, 1] + u[:, 2] + u[:, 3] - 2.0
    else:
        u = splitmix(seed, n)
        v = {"uniform": lambda: u, "symmetric": lambda: 2.0 * u - 1.0, "offset": lambda: 1000.0 + (2.0 * u - 1.0),
             "heavy": lambda: 1.0 / (u + 1e-3) - 1.0}[dist]()
    return v.astype(np.float32)


def exact(op, x64):
    """op over the last axis of x64 (float64 of the f32 values), per row, as float64."""
    rows = x64.reshape(-1, x64.shape[-1])
    out = []
    for r in rows:
        if op in ("sum", "mean"):
            s = math.fsum(r)
            out.append(s / len(r) if op == "mean" else s)
        elif op == "var":
            m = math.fsum(r) / len(r)
            out.append(math.fsum((r - m) ** 2) / (len(r) - 1))
        elif op == "logsumexp":
            m = r.max()
            out.append(m + math.log(math.fsum(np.exp(r - m))))
    return np.array(out)


def numpy_op(op, x, axis):
    if op == "sum":
        return np.sum(x, axis=axis)
    if op == "mean":
        return np.mean(x, axis=axis)
    if op == "var":
        return np.var(x, axis=axis, ddof=1)
    if op == "logsumexp":  # numpy has none: the usual f32 formula
        m = np.max(x, axis=axis, keepdims=True)
        return (np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))).astype(np.float32)
    raise ValueError(op)


def relerr(got, want):
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    want = np.asarray(want, dtype=np.float64).reshape(-1)
    return float(np.max(np.abs(got - want) / np.abs(want)))


def cases():
    """(name, dist, shape, op, seed) for every case; the reduced axis is the last for flat and
    rows, the first for strided."""
    seed = 1
    for shape in ("flat", "rows", "strided"):
        for dist in DISTS:
            for op in ("sum", "mean", "var", "logsumexp"):
                if op == "logsumexp" and dist in ("offset", "heavy"):
                    continue  # exp of 1000: the max-subtracted sum is 1-ish: nothing new
                yield f"{op} {shape} {dist}", dist, shape, op, seed
                seed += 1


def data(dist, shape, seed):
    return make(dist, N, seed).reshape(SHAPES[shape])


def reference(dist, shape, op, seed):
    x = data(dist, shape, seed)
    axis = 0 if shape == "strided" else -1
    x64 = x.astype(np.float64)
    want = exact(op, np.moveaxis(x64, axis, -1))
    return x, axis, want


def dot_cases():
    seed = 1000
    for dist in DISTS:
        yield f"dot flat {dist}", dist, seed
        seed += 2


NORM_ROWS, NORM_N = 16, 65536
EPS = {"layer_norm": 1e-5, "rms_norm": 1e-6}


def norm_cases():
    seed = 2000
    for kind in ("softmax", "log_softmax", "layer_norm", "rms_norm"):
        for dist in ("normal", "offset"):
            yield f"{kind} rows {dist}", dist, kind, seed
            seed += 1


def norm_numpy(kind, x):
    """The usual f32 formulas, along the last axis (numpy's sums pairwise)."""
    if kind in ("softmax", "log_softmax"):
        z = x - np.max(x, axis=-1, keepdims=True)
        s = np.sum(np.exp(z), axis=-1, keepdims=True)
        return np.exp(z) / s if kind == "softmax" else z - np.log(s)
    if kind == "layer_norm":
        m = np.mean(x, axis=-1, keepdims=True)
        v = np.mean((x - m) ** 2, axis=-1, keepdims=True)
        return (x - m) / np.sqrt(v + np.float32(EPS[kind]))
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(EPS[kind]))


def norm_exact(kind, x):
    out = np.empty_like(x)
    for i, r in enumerate(x):
        if kind in ("softmax", "log_softmax"):
            z = r - r.max()
            s = math.fsum(np.exp(z))
            out[i] = np.exp(z) / s if kind == "softmax" else z - math.log(s)
        elif kind == "layer_norm":
            m = math.fsum(r) / len(r)
            v = math.fsum((r - m) ** 2) / len(r)
            out[i] = (r - m) / math.sqrt(v + EPS[kind])
        else:
            out[i] = r / math.sqrt(math.fsum(r * r) / len(r) + EPS[kind])
    return out


def normwise(got, want):
    """max |got - exact| / max |exact|: outputs near 0 (a layer norm's) make elementwise
    relative errors meaningless."""
    return float(np.max(np.abs(np.asarray(got, np.float64) - want)) / np.max(np.abs(want)))


def run_cli(cli, args):
    r = subprocess.run([cli] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)


def cli_reduce(cli, x, axis, op, tmp):
    np.save(os.path.join(tmp, "x.npy"), x)
    pattern = {("flat", -1): "n ->", ("rows", -1): "r n -> r", ("strided", 0): "n r -> r"}[
        ("flat" if x.ndim == 1 else ("rows" if axis == -1 else "strided"), axis)]
    args = ["reduce", pattern, op, os.path.join(tmp, "x.npy"), "-o", os.path.join(tmp, "y.npy")]
    run_cli(cli, args)
    return np.load(os.path.join(tmp, "y.npy"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", action="append", default=[], help="einexpr binaries to compare")
    args = parser.parse_args()
    rows = []
    table = []
    tmp = tempfile.mkdtemp()
    for name, dist, shape, op, seed in cases():
        x, axis, want = reference(dist, shape, op, seed)
        e = relerr(numpy_op(op, x, axis), want)
        rows.append('{"%s", "%s", "%s", "%s", %d, %.6e},' % (name, dist, shape, op, seed, e))
        line = [name, e] + [relerr(cli_reduce(c, x, axis, op, tmp), want) for c in args.cli]
        table.append(line)
    for name, dist, seed in dot_cases():
        x, y = make(dist, N, seed), make(dist, N, seed + 1)
        want = math.fsum(x.astype(np.float64) * y.astype(np.float64))
        e = relerr(np.einsum("i,i->", x, y), [want])
        rows.append('{"%s", "%s", "flat", "dot", %d, %.6e},' % (name, dist, seed, e))
        got = []
        for c in args.cli:
            np.save(os.path.join(tmp, "x.npy"), x)
            np.save(os.path.join(tmp, "y.npy"), y)
            run_cli(c, ["einsum", "i, i ->", os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy"), "-o",
                        os.path.join(tmp, "z.npy")])
            got.append(relerr(np.load(os.path.join(tmp, "z.npy")), [want]))
        table.append([name, e] + got)
    for name, dist, kind, seed in norm_cases():
        x = make(dist, NORM_ROWS * NORM_N, seed).reshape(NORM_ROWS, NORM_N)
        want = norm_exact(kind, x.astype(np.float64))
        e = normwise(norm_numpy(kind, x), want)
        rows.append('{"%s", "%s", "norm", "%s", %d, %.6e},' % (name, dist, kind, seed, e))
        got = []
        for c in args.cli:
            np.save(os.path.join(tmp, "x.npy"), x)
            run_cli(c, [kind, "r [n]", os.path.join(tmp, "x.npy"), "-o", os.path.join(tmp, "y.npy")])
            got.append(normwise(np.load(os.path.join(tmp, "y.npy")), want))
        table.append([name, e] + got)
    here = os.path.dirname(os.path.abspath(__file__))
    if not args.cli:
        with open(os.path.join(here, "reduce_accuracy.inc"), "w") as f:
            f.write("// Generated by tests/lib/reduce_accuracy.py with numpy %s; do not edit.\n" % np.__version__)
            f.write("// {case, distribution, shape, op, seed, numpy's largest relative error}\n")
            f.write("\n".join(rows) + "\n")
    else:
        print("%-28s %12s" % ("case", "numpy") + "".join(" %12s" % os.path.basename(os.path.dirname(os.path.dirname(c)))
                                                     for c in args.cli))
        for line in table:
            print("%-28s %12.3e" % (line[0], line[1]) + "".join(" %12.3e" % v for v in line[2:]))


if __name__ == "__main__":
    main()
