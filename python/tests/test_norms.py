"""Normalizations along bracketed axes, var/std with torch's correction, logsumexp and maps
around a rearrange, from Python: against numpy's float64 formulas and torch's functions on
random data, for numpy arrays and torch tensors alike."""
import numpy as np
import pytest

import einexpr


@pytest.fixture
def rng():
    return np.random.default_rng(20261124)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_normalizations_match_numpy(rng):
    x = rng.standard_normal((3, 4, 5)) * 3.0
    np.testing.assert_allclose(einexpr.softmax(x, "a b [c]"), _softmax(x, 2), rtol=1e-12)
    np.testing.assert_allclose(einexpr.softmax(x, "a [b] c"), _softmax(x, 1), rtol=1e-12)
    np.testing.assert_allclose(einexpr.log_softmax(x, "[a b] c"),
                               np.log(_softmax(x.reshape(12, 5), 0)).reshape(3, 4, 5), rtol=1e-12)
    mean = x.mean(axis=2, keepdims=True)
    var = x.var(axis=2, keepdims=True)  # population variance, as torch's layer_norm
    np.testing.assert_allclose(einexpr.layer_norm(x, "a b [c]"), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(einexpr.layer_norm(x, "a b [c]", eps=0.5), (x - mean) / np.sqrt(var + 0.5),
                               rtol=1e-12)
    ms = (x * x).mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(einexpr.rms_norm(x, "a [b c]"), x / np.sqrt(ms + 1e-6), rtol=1e-12)
    # a composition in the pattern, its length given by name
    y = rng.standard_normal((2, 12)).astype(np.float32)
    got = einexpr.softmax(y, "b [(h d)]", h=3)
    assert got.dtype == np.float32 and got.shape == (2, 12)
    np.testing.assert_allclose(got, _softmax(y.astype(np.float64), 1), rtol=1e-5)


def test_var_std_logsumexp_and_map_with_a_pattern(rng):
    x = rng.standard_normal((4, 6))
    np.testing.assert_allclose(einexpr.reduce(x, "a b -> a", "var"), x.var(axis=1, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(einexpr.reduce(x, "a b -> b", "std", correction=0), x.std(axis=0), rtol=1e-12)
    np.testing.assert_allclose(einexpr.reduce(x, "a b -> a", "logsumexp"),
                               np.log(np.exp(x).sum(axis=1)), rtol=1e-12)
    got = einexpr.map(x, "a (h d) -> h a d", "tanh", h=2)
    np.testing.assert_allclose(got, np.tanh(x).reshape(4, 2, 3).transpose(1, 0, 2), rtol=1e-12)


def test_bad_arguments_are_refused(rng):
    x = rng.standard_normal((2, 3))
    with pytest.raises(einexpr.PatternError, match="brackets"):
        einexpr.softmax(x, "a b")
    with pytest.raises(einexpr.ArgumentError, match="eps"):
        einexpr.layer_norm(x, "a [b]", eps=-1.0)
    with pytest.raises(einexpr.ArgumentError, match="correction"):
        einexpr.reduce(x, "a b -> a", "var", correction=-1)
    with pytest.raises(einexpr.ArgumentError):
        einexpr.map(x, x)
    with pytest.raises(einexpr.ShapeError):
        einexpr.softmax(x, "a [b c]")


def test_normalizations_match_torch():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(2, 5, 8, generator=gen)
    for got, want in [
        (einexpr.softmax(x, "b s [d]"), torch.softmax(x, -1)),
        (einexpr.log_softmax(x, "b [s] d"), torch.log_softmax(x, 1)),
        (einexpr.layer_norm(x, "b s [d]"), torch.nn.functional.layer_norm(x, (8,))),
        (einexpr.layer_norm(x, "b [s d]"), torch.nn.functional.layer_norm(x, (5, 8))),
        (einexpr.reduce(x, "b s d -> b s", "var"), torch.var(x, -1)),
        (einexpr.reduce(x, "b s d -> b d", "std", correction=0), torch.std(x, 1, unbiased=False)),
        (einexpr.reduce(x, "b s d -> b", "logsumexp"), torch.logsumexp(x, (1, 2))),
        (einexpr.map(x, "b s d -> b d s", "gelu_erf"), torch.nn.functional.gelu(x).transpose(1, 2)),
    ]:
        assert isinstance(got, torch.Tensor)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_affine_norms_match_torch():
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(2, 5, 8, generator=gen, dtype=torch.float64)
    g, b = torch.randn(8, generator=gen, dtype=torch.float64), torch.randn(8, generator=gen, dtype=torch.float64)
    g2, b2 = torch.randn(5, 8, generator=gen, dtype=torch.float64), torch.randn(5, 8, generator=gen, dtype=torch.float64)
    rms = x * torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-6) * g
    for got, want in [
        (einexpr.layer_norm(x, "b s [d]", weight=g, bias=b), torch.nn.functional.layer_norm(x, (8,), g, b)),
        (einexpr.layer_norm(x, "b [s d]", weight=g2, bias=b2), torch.nn.functional.layer_norm(x, (5, 8), g2, b2)),
        (einexpr.layer_norm(x, "b s [d]", weight=g), torch.nn.functional.layer_norm(x, (8,), g)),
        (einexpr.rms_norm(x, "b s [d]", weight=g), rms),
    ]:
        assert isinstance(got, torch.Tensor)
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    # numpy in, numpy out; a weight of the wrong shape names the dims it must cover
    got = einexpr.layer_norm(x.numpy(), "b s [d]", weight=g.numpy(), bias=b.numpy())
    np.testing.assert_allclose(got, torch.nn.functional.layer_norm(x, (8,), g, b).numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(einexpr.ShapeError, match="layer_norm's gain .tensor 2. has shape \\[5\\] but the bracketed dims"):
        einexpr.layer_norm(x, "b s [d]", weight=torch.ones(5, dtype=torch.float64))
    with pytest.raises(einexpr.ArgumentError, match="bias needs a weight"):
        einexpr.layer_norm(x, "b s [d]", bias=b)
