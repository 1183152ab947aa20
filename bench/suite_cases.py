"""The two published suites issue 33 measures against, reproduced with their sources and
converted to einexpr's row-major patterns.

HPTT's 57 permutations: springer13/hptt, benchmark/benchmark.sh (commit 9425386), each line
`./benchmark.exe DIM PERM... SIZE...`. HPTT is column-major (dimension 0 is the fastest) and
its reference (benchmark/reference.cpp, transpose_ref) writes B's dimension k from A's
dimension perm[k]: B's fastest dimension walks A's dimension perm[0]. In row-major terms A is
"a b c ..." with A's dimension i named letter[DIM-1-i] and sizes read backwards, and B lists
A's dimensions perm[DIM-1], ..., perm[0]. `check_hptt()` verifies the conversion with numpy
on small sizes against a transcription of transpose_ref's loop.

The TCCG benchmark's 48 contractions: HPAC/tccg, benchmark/benchmark.py (commit of the
mirror read for this file; `_fullbenchmark = 1`: 19 CCSD, 18 CCSD(T), 3 AO->MO, 8 InTensLi
cases), written C-A-B in column-major letters ("ij-ik-kj" is C[i,j] = A[i,k] B[k,j], i
fastest). Sizes follow generate(): labels normalized (normalize()), every index about
(200 MiB / 4 B)^(1/max rank) long, an index that is the first (stride-1) index of C, A or B
rounded up to a multiple of 24, any other to the nearer multiple of 4 (at least 4), and
InTensLi's "j" fixed at 24. In row-major einexpr each operand's letters are reversed.
"""
import math

# ---- HPTT: (perm, sizes), column-major, verbatim from benchmark/benchmark.sh ----
HPTT_LINES = """
2 1 0 7264 7264
2 1 0 43408 1216
2 1 0 1216 43408
3 0 2 1 368 384 384
3 0 2 1 2144 64 384
3 0 2 1 368 64 2307
3 1 0 2 384 384 355
3 1 0 2 2320 384 59
3 1 0 2 384 2320 59
3 2 1 0 384 355 384
3 2 1 0 2320 59 384
3 2 1 0 384 59 2320
4 0 3 2 1 80 96 75 96
4 0 3 2 1 464 16 75 96
4 0 3 2 1 80 16 75 582
4 2 1 3 0 96 75 96 75
4 2 1 3 0 608 12 96 75
4 2 1 3 0 96 12 608 75
4 2 0 3 1 96 75 96 75
4 2 0 3 1 608 12 96 75
4 2 0 3 1 96 12 608 75
4 1 0 3 2 96 96 75 75
4 1 0 3 2 608 96 12 75
4 1 0 3 2 96 608 12 75
4 3 2 1 0 96 75 75 96
4 3 2 1 0 608 12 75 96
4 3 2 1 0 96 12 75 608
5 0 4 2 1 3 32 48 28 28 48
5 0 4 2 1 3 176 8 28 28 48
5 0 4 2 1 3 32 8 28 28 298
5 3 2 1 4 0 48 28 28 48 28
5 3 2 1 4 0 352 4 28 48 28
5 3 2 1 4 0 48 4 28 352 28
5 2 0 4 1 3 48 28 48 28 28
5 2 0 4 1 3 352 4 48 28 28
5 2 0 4 1 3 48 4 352 28 28
5 1 3 0 4 2 48 48 28 28 28
5 1 3 0 4 2 352 48 4 28 28
5 1 3 0 4 2 48 352 4 28 28
5 4 3 2 1 0 48 28 28 28 48
5 4 3 2 1 0 352 4 28 28 48
5 4 3 2 1 0 48 4 28 28 352
6 0 3 2 5 4 1 16 32 15 32 15 15
6 0 3 2 5 4 1 48 10 15 32 15 15
6 0 3 2 5 4 1 16 10 15 103 15 15
6 3 2 0 5 1 4 32 15 15 32 15 15
6 3 2 0 5 1 4 112 5 15 32 15 15
6 3 2 0 5 1 4 32 5 15 112 15 15
6 2 0 4 1 5 3 32 15 32 15 15 15
6 2 0 4 1 5 3 112 5 32 15 15 15
6 2 0 4 1 5 3 32 5 112 15 15 15
6 3 2 5 1 0 4 32 15 15 32 15 15
6 3 2 5 1 0 4 112 5 15 32 15 15
6 3 2 5 1 0 4 32 5 15 112 15 15
6 5 4 3 2 1 0 32 15 15 15 15 32
6 5 4 3 2 1 0 112 5 15 15 15 32
6 5 4 3 2 1 0 32 5 15 15 15 112
"""

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def hptt_cases():
    """[(index 1..57, pattern, row-major sizes, HPTT's line)]."""
    cases = []
    for line in HPTT_LINES.strip().splitlines():
        v = [int(t) for t in line.split()]
        dim, perm, size = v[0], v[1:1 + v[0]], v[1 + v[0]:]
        assert len(size) == dim and sorted(perm) == list(range(dim)), line
        name = [LETTERS[dim - 1 - i] for i in range(dim)]  # A's dimension i
        src = " ".join(name[i] for i in reversed(range(dim)))
        dst = " ".join(name[perm[k]] for k in reversed(range(dim)))
        cases.append((len(cases) + 1, f"{src} -> {dst}", list(reversed(size)), line))
    assert len(cases) == 57
    return cases


def hptt_reference(a_colmajor_flat, size, perm):
    """transpose_ref (alpha 1, beta 0) on a flat column-major A: B flat, column-major."""
    dim = len(size)
    stride_a = [1] * dim
    for i in range(1, dim):
        stride_a[i] = stride_a[i - 1] * size[i - 1]
    inner = size[perm[0]]
    outer = math.prod(size) // inner
    b = [None] * math.prod(size)
    for j in range(outer):
        off, rest = 0, j
        for i in range(1, dim):
            idx = rest % size[perm[i]]
            rest //= size[perm[i]]
            off += idx * stride_a[perm[i]]
        for i in range(inner):
            b[j * inner + i] = a_colmajor_flat[off + i * stride_a[perm[0]]]
    return b


def apply_pattern(x, pattern):
    """numpy: the row-major pattern 'a b c -> c a b' applied to x."""
    src, dst = [s.split() for s in pattern.split("->")]
    return x.transpose([src.index(n) for n in dst])


def check_hptt():
    """The conversion against transpose_ref on small sizes (2..4 per dimension): raises on a mismatch."""
    import numpy as np
    for index, pattern, _, line in hptt_cases():
        v = [int(t) for t in line.split()]
        dim, perm = v[0], v[1:1 + v[0]]
        size = [2 + (i % 3) for i in range(dim)]  # column-major sizes, all different where dim allows
        n = math.prod(size)
        flat = list(range(n))
        b = hptt_reference(flat, size, perm)
        a_row = np.array(flat).reshape(list(reversed(size)))  # column-major A read row-major: reversed dims
        got = np.ascontiguousarray(apply_pattern(a_row, pattern)).ravel().tolist()
        assert got == b, (index, pattern, line)


# ---- TCCG: the 48 contractions of benchmark.py with _fullbenchmark = 1 ----
TCCG_CCSD = ["ij-ik-kj", "ij-ikl-ljk", "ij-kil-lkj", "ijk-ikl-lj", "ijk-il-jlk", "ijk-ilk-jl", "ijk-ilk-lj",
             "ijk-ilmk-mjl", "ijkl-imjn-lnkm", "ijkl-imjn-nlmk", "ijkl-imkn-jnlm", "ijkl-imkn-njml",
             "ijkl-imln-jnkm", "ijkl-imln-njmk", "ijkl-imnj-nlkm", "ijkl-imnk-njml", "ijkl-minj-nlmk",
             "ijkl-mink-jnlm", "ijkl-minl-njmk"]
TCCG_AO2MO = ["aqrs-pa-pqrs", "abrs-qb-aqrs", "abcs-rc-abrs"]
TCCG_INTENSLI = ["abj-bka-kj", "ajb-kba-jk", "abjc-cbka-kj", "ajbc-ckba-jk", "abjc-kbac-jk", "abjcd-dkbac-jk",
                 "adbjc-cbdka-kj", "ajbdc-ckbad-jk"]
TCCG_CCSD_T = ["abcijk-ijma-mkbc", "abcijk-ijmb-mkac", "abcijk-ijmc-mkab", "abcijk-ikma-mjbc", "abcijk-ikmb-mjac",
               "abcijk-ikmc-mjab", "abcijk-jkma-mibc", "abcijk-jkmb-miac", "abcijk-jkmc-miab", "abcijk-eiab-jkec",
               "abcijk-eiac-jkeb", "abcijk-eibc-jkea", "abcijk-ejab-ikec", "abcijk-ejac-ikeb", "abcijk-ejbc-ikea",
               "abcijk-ekab-ijec", "abcijk-ekac-ijeb", "abcijk-ekbc-ijea"]
TENSOR_BYTES = 200.0 * 2 ** 20
MULTIPLE_STRIDE1 = 24
MULTIPLE = 4


def tccg_normalize(tc):
    """benchmark.py's normalize(): C's labels become a, b, ... in order, then A's contracted ones."""
    c, a, b = tc.split("-")
    cur = "A"
    for i in range(len(c)):
        pa = a.find(c[i])
        if pa != -1:
            a = a.replace(a[pa], cur)
        pb = b.find(c[i])
        if pb != -1:
            b = b.replace(b[pb], cur)
        c = c.replace(c[i], cur)
        cur = chr(ord(cur) + 1)
    for i in range(len(a)):
        if c.find(a[i]) == -1:
            pb = b.find(a[i])
            if pb != -1:
                b = b.replace(b[pb], cur)
            a = a.replace(a[i], cur)
            cur = chr(ord(cur) + 1)
    return (c + "-" + a + "-" + b).lower()


def tccg_sizes(test, fixed, element_bytes=4):
    """generate()'s sizes for the original test string and benchmark sizes `fixed` (original labels)."""
    norm = tccg_normalize(test)
    sizes = {norm[test.find(c)]: v for c, v in fixed.items()}
    tensors = norm.split("-")
    max_dim = max(len(t) for t in tensors)
    avg = pow(TENSOR_BYTES / element_bytes, 1.0 / max_dim)
    for idx in sorted(set(norm) - {"-"}):
        if idx in sizes:
            continue
        if idx in (tensors[0][0], tensors[1][0], tensors[2][0]):
            sizes[idx] = int((avg + MULTIPLE_STRIDE1 - 1) / MULTIPLE_STRIDE1) * MULTIPLE_STRIDE1
        else:
            up = int((avg + MULTIPLE - 1) / MULTIPLE) * MULTIPLE
            down = max(MULTIPLE, int(avg / MULTIPLE) * MULTIPLE)
            sizes[idx] = up if abs(avg - up) < abs(avg - down) else down
    return norm, sizes


def tccg_cases():
    """[(suite, index, TCCG string (normalized, column-major), row-major einsum pattern, sizes)]."""
    out = []
    for suite, tests, fixed in [("intensli", TCCG_INTENSLI, {"j": 24}), ("ao2mo", TCCG_AO2MO, {}),
                                ("ccsd", TCCG_CCSD, {}), ("ccsd_t", TCCG_CCSD_T, {})]:
        for i, test in enumerate(tests):
            norm, sizes = tccg_sizes(test, fixed)
            c, a, b = norm.split("-")
            pattern = f"{' '.join(reversed(a))}, {' '.join(reversed(b))} -> {' '.join(reversed(c))}"
            out.append((suite, i, norm, pattern, sizes))
    assert len(out) == 48
    return out


if __name__ == "__main__":
    check_hptt()
    for index, pattern, sizes, line in hptt_cases():
        print(f"hptt {index:2d}  {pattern:28s} {'x'.join(map(str, sizes)):24s} # {line}")
    for suite, i, norm, pattern, sizes in tccg_cases():
        big = max(math.prod(sizes[c] for c in t) for t in norm.split("-")) * 4 / 2 ** 20
        print(f"tccg {suite}{i:<3d} {norm:18s} {pattern:34s} "
              f"{' '.join(f'{k}={v}' for k, v in sorted(sizes.items()))}  largest {big:.0f} MiB")
