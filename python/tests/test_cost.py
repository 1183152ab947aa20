"""einexpr.cost() is the object `einexpr cost --json` prints and einexpr.explain() the text
`einexpr explain` prints, for the same expression; counts beyond 2^64 stay exact ints; the
naive and numpy counts against numpy.einsum_path's, computed here on the same equations."""
import json
import re

import numpy as np

import pytest

import einexpr
from conftest import run_cli

EXPRESSIONS = [
    (("einsum", "b d, d k -> b k"), {"dtype": "bf16"}, {"b": 16384, "d": 32768, "k": 8192}, ["--dtype", "bf16"]),
    (("einsum", "i j, j k -> i k"), {"device": "a100"}, {"i": 4194304, "j": 4194304, "k": 4194304}, ["--device", "a100"]),
    (("reduce", "c (h h2) (w w2) -> c h w", "mean"), {}, {"c": 3, "h": 2, "h2": 20, "w": 3, "w2": 20}, []),
    (("rearrange", "b s (h d) -> b h s d"), {"dtype": "f16"}, {"b": 2, "s": 3, "h": 4, "d": 5}, ["--dtype", "f16"]),
    (("einsum", "b d, d k -> b k"), {"backward": True}, {"b": 4, "d": 8, "k": 2}, ["--backward"]),
    (("reduce", "a b -> a", "any"), {"dtype": "bool"}, {"a": 2, "b": 3}, ["--dtype", "bool"]),
    (("einsum", "i j, j -> i"), {"dtype": "i32"}, {"i": 5, "j": 7}, ["--dtype", "i32"]),
]


@pytest.mark.parametrize("expr,options,sizes,flags", EXPRESSIONS)
def test_cost_is_cost_json(expr, options, sizes, flags):
    got = einexpr.cost(*expr, **options, **sizes)
    status, out, err = run_cli("cost", *expr, *[f"{k}={v}" for k, v in sizes.items()], *flags, "--json")
    assert status == 0, err
    assert got == json.loads(out)


def test_cost_counts_are_exact_and_known():
    c = einexpr.cost("einsum", "i j, j k -> i k", i=4194304, j=4194304, k=4194304)
    assert c["flops"] == 2 * 4194304 ** 3  # 2^67: beyond 64 bits, still exact
    assert c["bytes_read"] == 4 * 2 * 4194304 ** 2
    assert c["formulas"]["flops"] == "2·i·j·k"
    assert c["roofline"]["device"] == "h100"
    c = einexpr.cost("reduce", "b s h -> b h", "sum", b=2, s=3, h=4, dtype="f64")
    assert c["reduction"] == "sum" and c["dtype"] == "f64"
    assert c["flops"] == 2 * 4 * (3 - 1)


def test_what_cannot_be_counted_is_none_with_a_reason():
    c = einexpr.cost("reduce", "a b -> a", "any", a=2, b=3, dtype="bool")
    assert c["flops"] == 2 * (3 - 1)
    assert c["backward"] is None and c["backward_flops"] is None and "bool" in c["backward_error"]
    assert c["roofline"] is None and "bool" in c["roofline_error"]
    c = einexpr.cost("einsum", "i j, j -> i", i=5, j=7, dtype="i32")
    # dA = dY ⊗ x, an outer product (1 per element); dx = dYᵀ·A, a matvec (2 per multiply-add)
    assert c["backward_flops"] == 5 * 7 + 2 * 5 * 7 and c["roofline"] is None


# (einexpr pattern, numpy subscripts, sizes): no axis private to one operand, where numpy's
# "Optimized FLOP count" (its model on its own optimal path) bounds flops_numpy + 1 from above.
NUMPY_PATHS = [
    ("b i, i j k, b k -> b j", "bi,ijk,bk->bj", {"b": 2, "i": 3, "j": 4, "k": 5}),
    ("i j, j k, k l -> i l", "ij,jk,kl->il", {"i": 7, "j": 3, "k": 6, "l": 2}),
    ("a b, b c, c d, d a ->", "ab,bc,cd,da->", {"a": 4, "b": 5, "c": 3, "d": 6}),
    ("b s h, b t h -> b s t", "bsh,bth->bst", {"b": 2, "s": 5, "t": 4, "h": 3}),
    ("i j, i j -> i", "ij,ij->i", {"i": 6, "j": 9}),
    ("i i -> i", "ii->i", {"i": 8}),
    ("i j ->", "ij->", {"i": 3, "j": 11}),
]


def numpy_counts(subscripts, sizes):
    """numpy.einsum_path's (naive, optimized) FLOP counts, from the text it prints."""
    inputs = subscripts.split("->")[0].split(",")
    arrays = [np.ones([sizes[c] for c in term]) for term in inputs]
    text = np.einsum_path(subscripts, *arrays, optimize="optimal")[1]
    naive = float(re.search(r"Naive FLOP count:\s+(\S+)", text).group(1))
    optimized = float(re.search(r"Optimized FLOP count:\s+(\S+)", text).group(1))
    return naive, optimized


@pytest.mark.parametrize("pattern,subscripts,sizes", NUMPY_PATHS)
def test_naive_and_numpy_counts_against_numpy(pattern, subscripts, sizes):
    naive, optimized = numpy_counts(subscripts, sizes)
    c = einexpr.cost("einsum", pattern, **{k: v for k, v in sizes.items() if k in pattern.split("->")[0]})
    assert c["naive_flops"] == naive  # the counts are small: numpy's 4 printed digits are exact
    assert c["flops_numpy"] + 1 <= optimized
    assert c["macs"] <= c["flops"]


def test_explain_is_the_tools():
    text = einexpr.explain("reduce", "c (h h2) (w w2) -> c h w", "mean", c=3, h=2, h2=20, w=3, w2=20)
    status, out, err = run_cli("explain", "reduce", "c (h h2) (w w2) -> c h w", "mean", "c=3", "h=2", "h2=20",
                               "w=3", "w2=20")
    assert status == 0, err
    assert text == out
    assert "reduce.mean" in text


def test_cost_errors():
    with pytest.raises(einexpr.Error, match="unknown op 'frobnicate'"):
        einexpr.cost("frobnicate", "a -> a", a=1)
    with pytest.raises(einexpr.ArgumentError, match="only reduce takes a reduction"):
        einexpr.cost("einsum", "a b -> a", "sum", a=1, b=2)
    with pytest.raises(einexpr.ShapeError, match="axis b is not given"):
        einexpr.cost("einsum", "a b -> a", a=1)
    with pytest.raises(einexpr.DTypeError, match="unknown dtype 'f17'"):
        einexpr.cost("einsum", "a b -> a", a=1, b=2, dtype="f17")
    with pytest.raises(einexpr.Error, match="unknown device 'tpu'"):
        einexpr.cost("einsum", "a b -> a", a=1, b=2, device="tpu")
