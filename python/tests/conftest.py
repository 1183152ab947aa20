"""Shared helpers: seeded random arrays in every layout einexpr must read without copying
(or, for negative and odd strides, by copying), and the built `einexpr` tool for comparing
messages and cost JSON with what the command line prints."""
import os
import subprocess

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def random_array(rng, shape, dtype=np.float32):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def layouts(a):
    """a (C order) and views of the same values with other strides: Fortran order, a
    transposed view transposed back, a strided slice of a larger array, and negative strides."""
    yield "c", a
    yield "fortran", np.asfortranarray(a)
    yield "transposed", np.ascontiguousarray(a.T).T
    big = np.zeros(tuple(2 * n + 1 for n in a.shape), dtype=a.dtype)
    view = big[tuple(slice(1, None, 2) for _ in a.shape)]
    view[...] = a
    yield "strided", view
    flipped = np.ascontiguousarray(a[tuple(slice(None, None, -1) for _ in a.shape)])
    yield "negative", flipped[tuple(slice(None, None, -1) for _ in a.shape)]


def run_cli(*args):
    """Runs the built einexpr tool; returns (exit status, stdout, stderr)."""
    cli = os.environ.get("EINEXPR_CLI")
    if not cli:
        pytest.skip("EINEXPR_CLI is not set (ctest sets it to the built tool)")
    r = subprocess.run([cli, *args], capture_output=True, text=True, check=False)
    return r.returncode, r.stdout, r.stderr
