"""Errors in Python's terms: the C++ library's remedies ("pass {"c", length}", ".to(DType::f32)")
become Python's ("pass c=LENGTH", ".astype(numpy.float32) (numpy) or .to(torch.float32)
(torch)") and the tool's its own ("give c=LEN", "save the .npy input as float32"), the rest of
the message the same; numpy's one-letter einsum patterns get einexpr's spelling; cost()'s
argument errors name Python's arguments, not the tool's NAME=LEN."""
import re

import numpy as np
import pytest

import einexpr
from conftest import run_cli

CPP = re.compile(r'DType::|Device::|Copy::|OpSpec::|ProgramOptions::|\{"\w+", length\}|\.to\(\) first')


def test_a_missing_length_is_a_keyword_argument(tmp_path):
    x = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(einexpr.ShapeError) as info:
        einexpr.repeat(x, "a b -> a b c")
    assert str(info.value) == ("repeat: the length of new axis c is not given (pass c=LENGTH)\n"
                               "  in repeat('a b -> a b c') on input of shape [2, 3] (f32)")
    assert info.value.reason == "repeat: the length of new axis c is not given (pass c=LENGTH)"
    np.save(tmp_path / "x.npy", x)
    status, _, err = run_cli("repeat", "a b -> a b c", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"))
    assert status == 1
    assert err == f"einexpr repeat: error: {info.value}\n".replace("(pass c=LENGTH)", "(give c=LEN)")


@pytest.mark.parametrize("call,python,cli", [
    (lambda: einexpr.reduce(np.arange(6).reshape(2, 3), "a b -> a", "mean"),
     "convert with .astype(numpy.float32) (numpy) or .to(torch.float32) (torch) first",
     "save the .npy input as float32 first"),
    (lambda: einexpr.map(np.zeros((2, 3), dtype=bool), "a b -> a b", "exp"),
     "convert with .astype() (numpy) or .to() (torch) first", None),
    (lambda: einexpr.einsum(np.zeros((2, 3)), np.zeros((3, 4), dtype=np.float32), "a b, b c -> a c"),
     "convert with .astype() (numpy) or .to() (torch) first", None),
    (lambda: einexpr.einsum(np.zeros((2, 3), dtype=bool), np.zeros((3, 4), dtype=bool), "a b, b c -> a c"),
     "convert with .astype(numpy.int64) (numpy) or .to(torch.int64) (torch) first", None),
])
def test_dtype_remedies_are_numpy_and_torch(call, python, cli):
    with pytest.raises(einexpr.DTypeError) as info:
        call()
    assert python in str(info.value)
    assert not CPP.search(str(info.value)), str(info.value)


def test_numpy_patterns_get_einexpr_spelling():
    x, w = np.ones((8, 4), np.float32), np.ones((4, 3), np.float32)
    with pytest.raises(einexpr.PatternError) as info:
        einexpr.einsum(x, w, "bd,dk->bk")
    assert str(info.value).endswith(
        "\n  einexpr's axes are names separated by spaces: numpy's 'bd,dk->bk' is 'b d, d k -> b k' here")
    np.testing.assert_allclose(einexpr.einsum(x, w, "b d, d k -> b k"), np.einsum("bd,dk->bk", x, w))


def test_cost_arguments_are_pythons():
    with pytest.raises(einexpr.ArgumentError) as info:
        einexpr.cost("map", "a b -> a b", a=2, b=3)
    assert "NAME=LEN" not in str(info.value) and "FUNCTION" not in str(info.value)
    assert 'cost("map", pattern, "gelu", ...)' in str(info.value)
    with pytest.raises(einexpr.ArgumentError) as info:
        einexpr.cost("einsum", "a b -> a", "mean", a=2, b=3)
    assert str(info.value) == ("unexpected argument 'mean': only reduce takes a reduction and map a function; "
                               "einsum takes axis lengths as keywords (name=length)")


def test_torch_remedies():
    torch = pytest.importorskip("torch")
    with pytest.raises(einexpr.DTypeError) as info:
        einexpr.reduce(torch.arange(6).reshape(2, 3), "a b -> a", "mean")
    assert ".to(torch.float32) (torch)" in str(info.value)
    y = einexpr.reduce(torch.arange(6).reshape(2, 3).to(torch.float32), "a b -> a", "mean")
    assert torch.equal(y, torch.tensor([1.0, 4.0]))
