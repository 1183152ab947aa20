"""einexpr on torch tensors through DLPack: every op against torch on random data; results
are torch tensors sharing the input's memory exactly where einexpr returns a view; bf16 and
bool; and the inputs DLPack or einexpr cannot take are refused with einexpr's errors."""
import numpy as np
import pytest

import einexpr

torch = pytest.importorskip("torch")


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(20240611)


def randn(gen, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-5), (torch.bfloat16, 2e-2),
                                       (torch.float16, 2e-3)])
def test_einsum_matches_torch(gen, dtype, tol):
    q = randn(gen, 2, 3, 4, dtype=dtype)
    k = randn(gen, 2, 5, 4, dtype=dtype)
    got = einexpr.einsum(q, k, "b s1 h, b s2 h -> b s1 s2")
    assert isinstance(got, torch.Tensor)
    assert got.dtype == dtype
    want = torch.einsum("bxh,byh->bxy", q.double(), k.double())
    torch.testing.assert_close(got.double(), want, rtol=tol * 4, atol=tol * 4)
    # non-contiguous operands: transposed and sliced views
    kt = randn(gen, 2, 4, 10, dtype=dtype).transpose(1, 2)[:, ::2]
    got = einexpr.einsum(q, kt, "b s1 h, b s2 h -> b s1 s2")
    torch.testing.assert_close(got.double(), torch.einsum("bxh,byh->bxy", q.double(), kt.double()),
                               rtol=tol * 4, atol=tol * 4)


def test_rearrange_reduce_repeat_map_match_torch(gen):
    x = randn(gen, 2, 3, 8)
    torch.testing.assert_close(einexpr.rearrange(x, "b s (h d) -> b h s d", h=2),
                               x.reshape(2, 3, 2, 4).permute(0, 2, 1, 3))
    torch.testing.assert_close(einexpr.reduce(x, "b s h -> b h", "mean"), x.mean(dim=1))
    torch.testing.assert_close(einexpr.reduce(x.transpose(0, 2), "h s b -> b", "max"), x.amax(dim=(1, 2)))
    torch.testing.assert_close(einexpr.repeat(x[0], "s h -> c s h", c=3), x[0].expand(3, 3, 8))
    torch.testing.assert_close(einexpr.map(x, "gelu"), torch.nn.functional.gelu(x, approximate="tanh"))
    b = randn(gen, 8)
    torch.testing.assert_close(einexpr.map(x, b, "b s h, h -> b s h", "add"), x + b)
    i = torch.randint(-50, 50, (4, 5), generator=gen, dtype=torch.int64)
    assert torch.equal(einexpr.reduce(i, "a b -> b", "sum"), i.sum(dim=0))
    assert torch.equal(einexpr.einsum(i.int(), i.int(), "a b, a b -> a"), (i * i).sum(dim=1).int())


def test_views_share_memory_with_the_torch_input(gen):
    x = randn(gen, 2, 3, 8)
    view = einexpr.rearrange(x, "b s (h d) -> b h s d", h=2)
    x[1, 2, 5] = 42.0
    assert view[1, 1, 2, 1].item() == 42.0
    view[0, 0, 0, 0] = -7.0
    assert x[0, 0, 0].item() == -7.0
    lo, hi = x.data_ptr(), x.data_ptr() + x.numel() * x.element_size()
    assert lo <= view.data_ptr() < hi
    copy = einexpr.rearrange(x, "b s h -> (b h) s")
    assert not (lo <= copy.data_ptr() < hi)
    torch.testing.assert_close(copy, x.permute(0, 2, 1).reshape(16, 3))
    del x
    import gc
    gc.collect()
    assert view[0, 0, 0, 0].item() == -7.0  # the result keeps the memory alive


def test_bool_tensors(gen):
    m = torch.rand(3, 4, generator=gen) < 0.5
    got = einexpr.reduce(m, "i j -> i", "any")
    assert got.dtype == torch.bool
    assert torch.equal(got, m.any(dim=1))
    t = einexpr.rearrange(m, "i j -> j i")
    assert torch.equal(t, m.t())
    m[0, 1] = not m[0, 1].item()
    assert t[1, 0].item() == m[0, 1].item()  # a view through numpy's buffer


def test_torch_inputs_einexpr_cannot_take():
    with pytest.raises(einexpr.ArgumentError, match="requires grad.*detach"):
        einexpr.rearrange(torch.ones(2, 3, requires_grad=True), "a b -> b a")
    with pytest.raises(einexpr.DTypeError, match="DLPack dtype uint8 has no einexpr dtype"):
        einexpr.rearrange(torch.ones(2, 3, dtype=torch.uint8), "a b -> b a")
    with pytest.raises(einexpr.DTypeError, match="complex64"):
        einexpr.rearrange(torch.ones(2, 3, dtype=torch.complex64), "a b -> b a")
    with pytest.raises(einexpr.DTypeError, match="different dtypes"):
        einexpr.einsum(torch.ones(2, 3), torch.ones(3, dtype=torch.float64), "a b, b -> a")


def test_numpy_and_torch_results_follow_the_first_input(gen):
    x = randn(gen, 3, 4)
    y = np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)
    assert isinstance(einexpr.einsum(x, y, "i j, j k -> i k"), torch.Tensor)
    assert isinstance(einexpr.einsum(y.T, x.T, "k j, j i -> k i"), np.ndarray)


class OnlyDLPack:
    """An object offering nothing but the DLPack protocol (as CuPy or JAX arrays do)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None):
        return self.tensor.__dlpack__()

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def test_any_dlpack_object_is_read_in_place(gen):
    x = randn(gen, 3, 4)
    got = einexpr.rearrange(OnlyDLPack(x), "a b -> b a")
    assert isinstance(got, np.ndarray)  # a CPU result for a non-torch input is a numpy array
    x[1, 2] = 5.0
    assert got[2, 1] == 5.0
    np.testing.assert_array_equal(got, x.numpy().T)
    s = einexpr.einsum(OnlyDLPack(x), OnlyDLPack(x), "a b, a b -> a")
    np.testing.assert_allclose(s, (x * x).sum(dim=1).numpy(), rtol=1e-5)


def test_a_capsule_is_consumed_once(gen):
    capsule = randn(gen, 2).__dlpack__()
    t = einexpr._einexpr.from_dlpack(capsule)
    assert t.shape == (2,)
    with pytest.raises(einexpr.Error, match="each can be consumed once"):
        einexpr._einexpr.from_dlpack(capsule)
    # einexpr tensors go out through DLPack to numpy as well as to torch
    np.testing.assert_array_equal(np.from_dlpack(t), np.asarray(t))


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-5), (torch.bfloat16, 3e-2)])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_indexed_ops_match_torch(gen, dtype, tol, index_dtype):
    wte = randn(gen, 11, 6, dtype=dtype)
    tok = torch.randint(0, 11, (3, 4), generator=gen).to(index_dtype)
    got = einexpr.get_at(wte, tok, "[v] d, b s -> b s d")
    assert isinstance(got, torch.Tensor) and got.dtype == dtype
    torch.testing.assert_close(got, torch.nn.functional.embedding(tok.long(), wte), rtol=0, atol=0)
    upd = randn(gen, 3, 4, 6, dtype=dtype)
    want = wte.double().index_add(0, tok.long().reshape(-1), upd.double().reshape(-1, 6))
    torch.testing.assert_close(einexpr.add_at(wte, tok, upd, "[v] d, b s, b s d -> [v] d").double(), want,
                               rtol=tol, atol=tol * 4)
    logits = 3 * randn(gen, 3, 4, 11, dtype=dtype)
    targets = torch.randint(0, 11, (3, 4), generator=gen).to(index_dtype)
    targets[0, 1] = -100
    want = torch.nn.functional.cross_entropy(logits.double().permute(0, 2, 1), targets.long(), reduction="none")
    torch.testing.assert_close(einexpr.cross_entropy(logits, targets, "b s [v], b s -> b s").double(), want,
                               rtol=tol, atol=tol * 10)
    # a strided table: columns of a transposed one
    wt = randn(gen, 6, 11, dtype=dtype).T
    torch.testing.assert_close(einexpr.get_at(wt, tok, "[v] d, b s -> b s d"),
                               torch.nn.functional.embedding(tok.long(), wt), rtol=0, atol=0)


def test_concatenation_split_and_numbers_match_torch(gen):
    a, b = randn(gen, 2, 3, 4), randn(gen, 2, 5, 4)
    torch.testing.assert_close(einexpr.rearrange([a, b], "b s1 d, b s2 d -> b (s1 + s2) d"), torch.cat([a, b], 1))
    qkv = randn(gen, 2, 3, 9)
    q, k, v = einexpr.rearrange(qkv, "b s (q + k + v) -> b s q, b s k, b s v", q=2, k=3)
    for got, want in zip((q, k, v), torch.split(qkv, [2, 3, 4], 2)):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert q.data_ptr() == qkv.data_ptr()  # a view, as torch.split's
    torch.testing.assert_close(einexpr.map(a, 0.125, "b s d, -> b s d", "mul"), a * 0.125)
    torch.testing.assert_close(einexpr.einsum(a, 2, "b s d, -> b d"), 2 * a.sum(1))
    with pytest.raises(einexpr.IndexError, match="index 11 at position") as info:
        einexpr.get_at(randn(gen, 11, 2), torch.tensor([11]), "[v] d, n -> n d")
    assert isinstance(info.value, IndexError)
    assert "get_at" in einexpr.ops() and "cross_entropy" in einexpr.ops()
    cost = einexpr.cost("cross_entropy", "b [v], b -> b", b=8, v=100)
    assert cost["flops"] == 4 * 8 * 100 + 8
