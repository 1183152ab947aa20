"""einexpr on numpy arrays: every op against numpy on random data in every layout and
dtype; results are numpy arrays that share the input's memory exactly where einexpr
returns a view; read-only arrays give read-only views."""
import numpy as np
import pytest

import einexpr
from conftest import layouts, random_array

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32]


def tolerance(dtype, terms=1):
    return {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5,
            np.dtype(np.float16): 2e-3}.get(np.dtype(dtype), 0) * max(terms, 1)


def close(got, want, dtype, terms=1):
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.dtype(dtype)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=tolerance(dtype, terms), atol=tolerance(dtype, terms))


EINSUMS = [
    # einexpr pattern, numpy subscripts, shapes, terms per output element
    ("i j, j k -> i k", "ij,jk->ik", [(4, 5), (5, 6)], 5),
    ("b s1 h, b s2 h -> b s1 s2", "bxh,byh->bxy", [(2, 3, 4), (2, 5, 4)], 4),
    ("i i -> i", "ii->i", [(4, 4)], 1),
    ("i j ->", "ij->", [(3, 4)], 12),
    ("i, j -> i j", "i,j->ij", [(3,), (4,)], 1),
    ("a b, b c, c d -> a d", "ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)], 12),
    ("... i, i j -> ... j", "...i,ij->...j", [(2, 3, 4), (4, 5)], 4),
]


@pytest.mark.parametrize("pattern,subscripts,shapes,terms", EINSUMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_einsum_matches_numpy(rng, pattern, subscripts, shapes, terms, dtype):
    arrays = [random_array(rng, s, dtype) for s in shapes]
    want = np.einsum(subscripts, *[a.astype(np.float64) for a in arrays])
    for name, first in layouts(arrays[0]):
        got = einexpr.einsum(first, *arrays[1:], pattern)
        close(got, want, dtype, terms)


REARRANGES = [
    ("b s (h d) -> b h s d", {"h": 2}, (2, 3, 8), lambda x: x.reshape(2, 3, 2, 4).transpose(0, 2, 1, 3)),
    ("a b c -> c a b", {}, (2, 3, 4), lambda x: x.transpose(2, 0, 1)),
    ("a b c -> (a c) b", {}, (2, 3, 4), lambda x: x.transpose(0, 2, 1).reshape(8, 3)),
    ("(a b) c -> a b c", {"a": 3}, (6, 4), lambda x: x.reshape(3, 2, 4)),
    ("a b -> a 1 b ()", {}, (3, 4), lambda x: x.reshape(3, 1, 4, 1)),
]


@pytest.mark.parametrize("pattern,lengths,shape,numpy_op", REARRANGES)
@pytest.mark.parametrize("dtype", DTYPES + [np.bool_])
def test_rearrange_matches_numpy(rng, pattern, lengths, shape, numpy_op, dtype):
    a = random_array(rng, shape, dtype)
    for name, x in layouts(a):
        got = einexpr.rearrange(x, pattern, **lengths)
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(got, numpy_op(a))


REDUCES = [
    ("b s h -> b h", "sum", (2, 3, 4), lambda x: x.sum(axis=1), 3),
    ("b s h -> b h", "mean", (2, 3, 4), lambda x: x.mean(axis=1), 3),
    ("c (h h2) (w w2) -> c h w", "max", (3, 4, 6), lambda x: x.reshape(3, 2, 2, 3, 2).max(axis=(2, 4)), 1),
    ("a b -> b", "min", (5, 3), lambda x: x.min(axis=0), 1),
    ("a b -> a", "prod", (3, 4), lambda x: x.prod(axis=1), 4),
]


@pytest.mark.parametrize("pattern,reduction,shape,numpy_op,terms,dtype", [
    (*row, dtype) for row in REDUCES for dtype in (np.float64, np.float32, np.int64)
    if not (row[1] == "mean" and dtype == np.int64)])  # an integer mean keeps its dtype in einexpr
def test_reduce_matches_numpy(rng, pattern, reduction, shape, numpy_op, terms, dtype):
    a = random_array(rng, shape, dtype)
    lengths = {"h2": 2, "w2": 2} if "h2" in pattern else {}
    want = numpy_op(a.astype(np.float64))
    for name, x in layouts(a):
        close(einexpr.reduce(x, pattern, reduction, **lengths), want.astype(dtype) if np.dtype(dtype).kind == "i" else want,
              dtype, terms)


def test_repeat_and_map_match_numpy(rng):
    a = random_array(rng, (3, 4))
    np.testing.assert_array_equal(einexpr.repeat(a, "h w -> c h w", c=3), np.broadcast_to(a, (3, 3, 4)))
    np.testing.assert_array_equal(einexpr.repeat(a, "h w -> h (w r)", r=2), np.repeat(a, 2, axis=1))
    close(einexpr.map(a, "relu"), np.maximum(a, 0), np.float32)
    close(einexpr.map(a, "exp"), np.exp(a.astype(np.float64)), np.float32)
    b = random_array(rng, (4,))
    for name, x in layouts(a):
        close(einexpr.map(x, b, "h w, w -> h w", "mul"), a.astype(np.float64) * b, np.float32)


def test_views_share_memory_and_copies_do_not(rng):
    a = random_array(rng, (2, 3, 8))
    view = einexpr.rearrange(a, "b s (h d) -> b h s d", h=2)
    assert np.shares_memory(view, a)
    a[1, 2, 5] = 42.0
    assert view[1, 1, 2, 1] == 42.0  # the same memory, seen through the view
    view[0, 0, 0, 0] = -7.0
    assert a[0, 0, 0] == -7.0
    copy = einexpr.rearrange(a, "b s h -> (b h) s")  # no strides can express it
    assert not np.shares_memory(copy, a)
    np.testing.assert_array_equal(copy, a.transpose(0, 2, 1).reshape(16, 3))
    assert np.shares_memory(einexpr.repeat(a, "b s h -> b s h r", r=3), a)  # stride 0
    assert np.shares_memory(einexpr.einsum(a[0], "s h -> h s"), a)
    assert not np.shares_memory(einexpr.reduce(a, "b s h -> b h", "sum"), a)
    assert not np.shares_memory(einexpr.einsum(a, a, "b s h, b t h -> b s t"), a)


def test_results_keep_their_memory_alive(rng):
    a = random_array(rng, (4, 5))
    want = a.T.copy()
    view = einexpr.rearrange(a, "i j -> j i")
    del a
    import gc
    gc.collect()
    np.testing.assert_array_equal(view, want)


def test_read_only_arrays_compute_and_their_views_stay_read_only(rng):
    a = random_array(rng, (3, 4))
    a.setflags(write=False)
    view = einexpr.rearrange(a, "i j -> j i")
    assert np.shares_memory(view, a)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0, 0] = 1.0
    s = einexpr.reduce(a, "i j -> j", "sum")
    assert s.flags.writeable
    np.testing.assert_allclose(s, a.sum(axis=0), rtol=1e-5)
    b = np.broadcast_to(random_array(rng, (4,)), (3, 4))  # read-only, stride 0
    np.testing.assert_allclose(einexpr.einsum(a, b, "i j, i j -> j"), (a * b).sum(axis=0), rtol=1e-5)


def test_other_layouts_are_copied_correctly(rng):
    a = random_array(rng, (3, 4), np.float64)
    big_endian = a.astype(">f8")
    np.testing.assert_array_equal(einexpr.rearrange(big_endian, "i j -> j i"), a.T)
    raw = np.zeros(3 * 4 * 8 + 1, dtype=np.uint8)
    misaligned = raw[1:].view(np.float64).reshape(3, 4)
    misaligned[...] = a
    assert not misaligned.flags.aligned
    np.testing.assert_array_equal(einexpr.rearrange(misaligned, "i j -> j i"), a.T)
    np.testing.assert_array_equal(einexpr.rearrange(a[::-1, ::2], "i j -> j i"), a[::-1, ::2].T)


def test_zero_d_and_empty_arrays(rng):
    s = np.array(2.5, dtype=np.float32)
    out = einexpr.rearrange(s, "->")
    assert out.shape == () and out == 2.5
    np.testing.assert_array_equal(einexpr.repeat(s, "-> r", r=3), [2.5, 2.5, 2.5])
    e = np.zeros((0, 3), dtype=np.float32)
    assert einexpr.rearrange(e, "a b -> b a").shape == (3, 0)
    np.testing.assert_array_equal(einexpr.reduce(e, "a b -> b", "sum"), np.zeros(3))


def test_pack_unpack_parse_shape(rng):
    x = random_array(rng, (2, 3, 5))
    y = random_array(rng, (2, 5))
    packed, shapes = einexpr.pack([x, y], "b * h")
    assert shapes == [(3,), ()]
    np.testing.assert_array_equal(packed, np.concatenate([x, y[:, None, :]], axis=1))
    x2, y2 = einexpr.unpack(packed, shapes, "b * h")
    np.testing.assert_array_equal(x2, x)
    np.testing.assert_array_equal(y2, y)
    assert np.shares_memory(x2, packed)
    assert einexpr.parse_shape(x, "b _ h") == {"b": 2, "h": 5}


def test_result_dtypes_are_numpys_own(rng):
    for dtype in DTYPES + [np.bool_]:
        a = random_array(rng, (3, 4), dtype)
        got = einexpr.rearrange(a, "i j -> (i j)")
        assert got.dtype == a.dtype and got.dtype.type is a.dtype.type  # int64 is np.int64, not np.longlong


def test_bool_arrays(rng):
    a = random_array(rng, (3, 4), np.bool_)
    np.testing.assert_array_equal(einexpr.reduce(a, "i j -> i", "any"), a.any(axis=1))
    np.testing.assert_array_equal(einexpr.reduce(a, "i j -> j", "all"), a.all(axis=0))
    assert einexpr.rearrange(a, "i j -> j i").dtype == np.bool_


def test_results_let_go_of_their_inputs(rng):
    import gc
    import sys
    a = random_array(rng, (4, 6))
    before = sys.getrefcount(a)
    view = einexpr.rearrange(a, "i (j k) -> j i k", k=2)
    assert sys.getrefcount(a) > before  # the view holds a's buffer
    copy = einexpr.einsum(a, a, "i j, k j -> i k")
    with pytest.raises(einexpr.ShapeError):
        einexpr.rearrange(a, "i (j k) -> i j k", k=5)  # a refused call holds nothing either
    del view, copy
    gc.collect()
    assert sys.getrefcount(a) == before
