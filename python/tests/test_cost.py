"""einexpr.cost() is the object `einexpr cost --json` prints and einexpr.explain() the text
`einexpr explain` prints, for the same expression; counts beyond 2^64 stay exact ints."""
import json

import pytest

import einexpr
from conftest import run_cli

EXPRESSIONS = [
    (("einsum", "b d, d k -> b k"), {"dtype": "bf16"}, {"b": 16384, "d": 32768, "k": 8192}, ["--dtype", "bf16"]),
    (("einsum", "i j, j k -> i k"), {"device": "a100"}, {"i": 4194304, "j": 4194304, "k": 4194304}, ["--device", "a100"]),
    (("reduce", "c (h h2) (w w2) -> c h w", "mean"), {}, {"c": 3, "h": 2, "h2": 20, "w": 3, "w2": 20}, []),
    (("rearrange", "b s (h d) -> b h s d"), {"dtype": "f16"}, {"b": 2, "s": 3, "h": 4, "d": 5}, ["--dtype", "f16"]),
    (("einsum", "b d, d k -> b k"), {"backward": True}, {"b": 4, "d": 8, "k": 2}, ["--backward"]),
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
    with pytest.raises(einexpr.ArgumentError, match="only reduce takes a REDUCTION"):
        einexpr.cost("einsum", "a b -> a", "sum", a=1, b=2)
    with pytest.raises(einexpr.ShapeError, match="axis b is not given"):
        einexpr.cost("einsum", "a b -> a", a=1)
    with pytest.raises(einexpr.DTypeError, match="unknown dtype 'f17'"):
        einexpr.cost("einsum", "a b -> a", a=1, b=2, dtype="f17")
    with pytest.raises(einexpr.Error, match="unknown device 'tpu'"):
        einexpr.cost("einsum", "a b -> a", a=1, b=2, device="tpu")
