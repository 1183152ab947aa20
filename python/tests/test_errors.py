"""einexpr's errors in Python: the classes (all einexpr.Error, ArgumentError also a
TypeError), the same messages as the C++ library and the tool print, PatternError's
position, and arguments that are not arrays, strings or integers."""
import numpy as np
import pytest

import einexpr
from conftest import run_cli


def test_classes():
    for cls in (einexpr.PatternError, einexpr.ShapeError, einexpr.DTypeError, einexpr.DeviceError,
                einexpr.AllocationError, einexpr.InternalError, einexpr.ArgumentError):
        assert issubclass(cls, einexpr.Error)
    assert issubclass(einexpr.Error, RuntimeError)
    assert issubclass(einexpr.ArgumentError, TypeError)
    assert einexpr.PatternError.__module__ == "einexpr"


def test_pattern_error_has_the_caret_and_the_position():
    x = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(einexpr.PatternError) as info:
        einexpr.rearrange(x, "b (h d -> b h d")
    e = info.value
    assert e.position == 2
    assert e.pattern == "b (h d -> b h d"
    assert str(e) == ("unbalanced parenthesis: '(' is never closed at position 2\n"
                      "  b (h d -> b h d\n"
                      "    ^\n"
                      "  in rearrange('b (h d -> b h d') on input of shape [2, 3] (f32)")
    assert e.reason == "unbalanced parenthesis: '(' is never closed"


@pytest.mark.parametrize("args,cls", [
    (("rearrange", "a (b -> b a"), einexpr.PatternError),
    (("rearrange", "a b -> b c"), einexpr.PatternError),
    (("rearrange", "(a b) c -> a b c", "a=5"), einexpr.ShapeError),
    (("reduce", "a b -> a c", "sum"), einexpr.PatternError),
    (("reduce", "a b -> a", "prod"), None),  # no error: checked below to be the same too
])
def test_messages_are_the_tools(tmp_path, args, cls):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "x.npy", x)
    op, pattern, *rest = args
    lengths = {k: int(v) for k, v in (r.split("=") for r in rest if "=" in r)}
    reduction = [r for r in rest if "=" not in r]
    def call():
        if op == "reduce":
            return einexpr.reduce(x, pattern, reduction[0], **lengths)
        return einexpr.rearrange(x, pattern, **lengths)

    status, out, err = run_cli(op, pattern, *reduction, str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"),
                               *[r for r in rest if "=" in r])
    if cls is None:
        assert status == 0, err
        np.testing.assert_array_equal(call(), np.load(tmp_path / "y.npy"))
        return
    with pytest.raises(cls) as info:
        call()
    assert status == 1
    assert err == f"einexpr {op}: error: {info.value}\n"


def test_arguments_of_the_wrong_kind():
    x = np.zeros((2, 3), dtype=np.float32)
    with pytest.raises(einexpr.ArgumentError, match="the input is a builtins.list: einexpr takes numpy arrays"):
        einexpr.rearrange([[1.0, 2.0]], "a b -> b a")
    with pytest.raises(TypeError, match="operand 2 is a builtins.object"):
        einexpr.einsum(x, object(), "a b, b -> a")
    with pytest.raises(einexpr.ArgumentError, match="the pattern must be a str, not int"):
        einexpr.rearrange(x, 3)
    with pytest.raises(einexpr.ArgumentError, match="pattern last"):
        einexpr.einsum("a b -> b a", x)
    with pytest.raises(einexpr.ArgumentError, match="axis length h=2.5 is not an integer"):
        einexpr.rearrange(x, "a (h w) -> a h w", h=2.5)
    with pytest.raises(einexpr.ArgumentError, match="axis length h=True"):
        einexpr.rearrange(x, "a (h w) -> a h w", h=True)
    with pytest.raises(einexpr.ArgumentError, match=r"map\(x, function\)"):
        einexpr.map(x, x, "relu")
    with pytest.raises(einexpr.DTypeError, match="not uint8"):
        einexpr.rearrange(np.zeros(3, dtype=np.uint8), "a -> a")
    with pytest.raises(einexpr.DTypeError, match="not complex128"):
        einexpr.rearrange(np.zeros(3, dtype=np.complex128), "a -> a")
    with pytest.raises(einexpr.DTypeError, match="not uint8"):
        einexpr.rearrange(b"abc", "a -> a")  # bytes are a buffer of unsigned bytes


def test_errors_leave_the_inputs_as_they_were():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    before = x.copy()
    with pytest.raises(einexpr.ShapeError):
        einexpr.einsum(x, x, "a b, a c -> b c", c=4)
    np.testing.assert_array_equal(x, before)
    assert x.flags.writeable
