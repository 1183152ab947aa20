#!/usr/bin/python3
"""Generates tests/lib/einsum_table.inc: einsum patterns with operand shapes and numpy's own
counts for them, for tests/lib/test_einsum_table.cpp (which needs no Python).

Run with Debian's python3-numpy (1.24):  /usr/bin/python3 tests/lib/einsum_table.py

Rows come from opt_einsum's test suite (tests/test_contract.py's `tests` list), numpy's
(numpy/core/tests/test_einsum.py: diagonals, traces, ellipses of different lengths, 0-d
operands), compositions numpy cannot write (no numpy counts for them), and random
equations in the spirit of opt_einsum's rand_equation (n operands, each index in about
`regularity` operands, n_out output indices), with diagonals and indices private to one
operand mixed in.

For each row numpy's counts are recomputed exactly from numpy's own functions
(numpy.core.einsumfunc: _parse_einsum_input, _find_contraction, _flop_count) along the path
numpy.einsum_path returns: `naive` (einsum_path's "Naive FLOP count") and `optimal` (the
sum of its per-step costs for optimize='optimal', which einsum_path prints plus 1 as its
"Optimized FLOP count"; the script checks both printed numbers against these).
"""
import random
import re
import string

import numpy as np
from numpy.core import einsumfunc as ef

OPT_EINSUM = [
    "a,->a", "ab,->ab", ",ab,->ab", ",,->",
    "a,ab,abc->abc", "a,b,ab->ab",
    "ea,fb,gc,hd,abcd->efgh", "ea,fb,abcd,gc,hd->efgh", "abcd,ea,fb,gc,hd->efgh",
    "acdf,jbje,gihb,hfac,gfac,gifabc,hfac", "cd,bdhe,aidb,hgca,gc,hgibcd,hgac",
    "abhe,hidj,jgba,hiab,gab", "bde,cdh,agdb,hica,ibd,hgicd,hiac",
    "chd,bde,agbc,hiad,hgc,hgi,hiad", "chd,bde,agbc,hiad,bdi,cgh,agdb", "bdhe,acad,hiab,agac,hibd",
    "ab,ab,c->", "ab,ab,c->c", "ab,ab,cd,cd->", "ab,ab,cd,cd->ac", "ab,ab,cd,cd->cd", "ab,ab,cd,cd,ef,ef->",
    "ab,cd,ef->abcdef", "ab,cd,ef->acdf", "ab,cd,de->abcde", "ab,cd,de->be", "ab,bcd,cd->abcd", "ab,bcd,cd->abd",
    "eb,cb,fb->cef", "dd,fb,be,cdb->cef", "bca,cdb,dbf,afc->", "dcc,fce,ea,dbf->ab", "fdf,cdd,ccd,afe->ae",
    "abcd,ad", "ed,fcd,ff,bcf->be", "baa,dcf,af,cde->be", "bd,db,eac->ace", "fff,fae,bef,def->abd",
    "efc,dbc,acf,fd->abe",
    "ab,ab", "ab,ba", "abc,abc", "abc,bac", "abc,cba",
    "ab,bc", "ab,cb", "ba,bc", "ba,cb", "abcd,cd", "abcd,ab", "abcd,cdef", "abcd,cdef->feba", "abcd,efdc",
    "aab,bc->ac", "ab,bcc->ac", "aab,bcc->ac", "baa,bcc->ac", "aab,ccb->ac",
    "aab,fa,df,ecc->bde", "ecb,fef,bad,ed->ac", "bcf,bbb,fbf,fc->", "bb,ff,be->e", "bcb,bb,fc,fff->",
    "fbb,dfd,fc,fc->", "afd,ba,cc,dc->bf", "adb,bc,fa,cfc->d", "bbd,bda,fc,db->acf", "dba,ead,cad->bce",
    "aef,fbc,dca->bde",
]

# numpy's test_einsum.py (views, sums, traces, ellipses, scalars), as (equation, shapes).
NUMPY = [
    ("i->", [(5,)]), ("ii->", [(4, 4)]), ("ii->i", [(4, 4)]), ("ij->", [(3, 4)]), ("ij->i", [(3, 4)]),
    ("ij->j", [(3, 4)]), ("ij->ji", [(3, 4)]), ("ijk->kji", [(2, 3, 4)]), ("iij->j", [(3, 3, 4)]),
    ("iji->j", [(3, 4, 3)]), ("iii->i", [(3, 3, 3)]), ("iii->", [(3, 3, 3)]),
    ("...ii->...i", [(2, 3, 3)]), ("ii...->...", [(3, 3, 2)]), ("...ii->...", [(2, 2, 3, 3)]),
    ("i...i->...", [(3, 2, 3)]), ("...i->...", [(2, 3, 4)]), ("...->...", [(2, 3)]),
    ("i,i->", [(7,), (7,)]), ("i,i->i", [(7,), (7,)]), ("i,j->ij", [(3,), (4,)]), ("ij,j->i", [(3, 4), (4,)]),
    ("ij,i->j", [(3, 4), (3,)]), ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk->", [(3, 4), (4, 5)]),
    ("ijk,jil->kl", [(3, 4, 5), (4, 3, 2)]), ("ijk,ijk->", [(2, 3, 4), (2, 3, 4)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ji->", [(3, 4), (4, 3)]), ("ij,jk,ki->", [(2, 3), (3, 4), (4, 2)]), ("ii,i->i", [(3, 3), (3,)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]), ("...i,...i->...i", [(2, 3), (3,)]), ("i...,i->...", [(3, 2, 2), (3,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("...ij,...jk->...ik", [(1, 3, 4), (2, 4, 5)]),
    ("ij...,jk...->ik...", [(3, 4, 2), (4, 5, 2)]), ("...j,j->...", [(2, 1, 4), (4,)]),
    ("i,->i", [(5,), ()]), (",i->i", [(), (5,)]), (",->", [(), ()]), ("ab,->ab", [(2, 3), ()]),
    (",ab,->ab", [(), (2, 3), ()]), ("i,,i->", [(4,), (), (4,)]), ("->", [()]),
    ("ijk,ik->ijk", [(2, 3, 4), (2, 4)]), ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("ijkl,kl->ij", [(2, 3, 4, 5), (4, 5)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("bi,ijk,bk->bj", [(2, 3), (3, 4, 5), (2, 5)]),
]

# einexpr's compositions (numpy cannot write them: no numpy counts).
COMPOSITIONS = [
    ("b (h d), h d k -> b k", [(2, 6), (2, 3, 4)]),
    ("(a b) c, c -> a b", [(6, 4), (4,)]),
    ("i (j k), j -> i k", [(2, 12), (3,)]),
    ("b s (h d), b t (h d) -> b h s t", [(2, 3, 8), (2, 4, 8)]),
    ("(i j), j k -> i k", [(6,), (3, 4)]),
    ("a (b c), (c b) d -> a d", [(2, 6), (6, 3)]),
]
COMPOSITION_LENGTHS = {0: "h=2", 1: "a=2", 2: "j=3", 3: "h=2", 4: "i=2", 5: "b=2"}

LETTERS = string.ascii_lowercase


def einexpr_side(side):
    """numpy 'ab...c' -> einexpr 'a b ... c' (letters as axis names)."""
    return " ".join(["..." if t == "." else t for t in side.replace("...", ".")])


def einexpr_pattern(eq):
    lhs, rhs = eq.split("->")
    return ", ".join(einexpr_side(s) for s in lhs.split(",")) + " -> " + einexpr_side(rhs)


def explicit(eq):
    """numpy's implicit output: the letters used once, sorted."""
    if "->" in eq:
        return eq
    letters = eq.replace(",", "")
    return eq + "->" + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))


def size_of(axes, dims):
    n = 1
    for a in axes:
        n *= dims[a]
    return n


def einexpr_cost_of_path(input_sets, output_set, path, dims):
    """What numpy's path costs in einexpr's convention (codegen/cost/convention.hpp): axes
    in one operand only and not in the output summed first (n_in - n_out each), then each
    pairwise step sums what only one side holds and nothing later needs (n_in - n_out), and
    contracts the rest: 2·∏ when it sums an axis, 1·∏ when it only multiplies."""
    sets = [set(s) for s in input_sets]
    total = 0
    for i, s in enumerate(sets):
        others = set(output_set).union(*[t for j, t in enumerate(sets) if j != i])
        kept = {a for a in s if a in others}
        if kept != s:
            total += size_of(s, dims) - size_of(kept, dims)
        sets[i] = kept
    for inds in path[1:]:
        if len(inds) != 2:
            return None  # numpy contracted more than two at once: no pairwise equivalent
        i, j = sorted(inds, reverse=True)
        x, y = sets.pop(i), sets.pop(j)
        keep = set(output_set).union(*sets)
        xk = {a for a in x if a in y or a in keep}
        yk = {a for a in y if a in x or a in keep}
        u = xk | yk
        sums = any(a not in keep for a in u)
        total += (size_of(x, dims) - size_of(xk, dims)) + (size_of(y, dims) - size_of(yk, dims))
        total += (2 if sums else 1) * size_of(u, dims)
        sets.append(u & keep)
    return total


def numpy_counts(eq, arrays):
    """(naive, optimal-path sum, that path in einexpr's convention) as numpy.einsum_path
    computes them, exactly."""
    path, text = np.einsum_path(eq, *arrays, optimize="optimal")
    inputs, output, ops = ef._parse_einsum_input([eq] + list(arrays))
    input_list = inputs.split(",")
    input_sets = [set(x) for x in input_list]
    output_set = set(output)
    indices = set(inputs.replace(",", ""))
    dims = {}
    for tnum, term in enumerate(input_list):
        sh = ops[tnum].shape
        for cnum, char in enumerate(term):
            d = sh[cnum]
            if char in dims and dims[char] != 1 and d == 1:
                continue
            dims[char] = d
    inner = (sum(len(x) for x in input_sets) - len(indices)) > 0
    naive = ef._flop_count(indices, inner, len(input_list), dims)
    einexpr = einexpr_cost_of_path(input_sets, output_set, path, dims) if len(input_list) > 2 else -1
    total = 0
    sets = list(input_sets)
    for inds in path[1:]:
        inds = tuple(sorted(inds, reverse=True))
        out_inds, sets, removed, contracted = ef._find_contraction(inds, sets, output_set)
        total += ef._flop_count(contracted, removed, len(inds), dims)
    m = re.search(r"Naive FLOP count:\s*(\S+)", text)
    assert abs(float(m.group(1)) - naive) <= 1e-3 * max(naive, 1), (eq, m.group(1), naive)
    m = re.search(r"Optimized FLOP count:\s*(\S+)", text)
    assert abs(float(m.group(1)) - (total + 1)) <= 1e-3 * (total + 1), (eq, m.group(1), total)
    return naive, total, -1 if einexpr is None else einexpr


def shapes_for(eq, rng, low=2, high=4):
    lhs = eq.split("->")[0]
    size = {c: rng.randint(low, high) for c in set(lhs) if c != ","}
    return [tuple(size[c] for c in term) for term in lhs.split(",")]


def rand_equation(n, rng, regularity=3, n_out=2, diagonal=False, private=False):
    """Each of about n*regularity/2 indices in ~regularity operands; n_out kept."""
    n_ind = max(2, (n * regularity) // 2)
    letters = list(LETTERS[:n_ind])
    terms = [[] for _ in range(n)]
    for c in letters:
        for t in rng.sample(range(n), min(n, rng.randint(2, regularity))):
            terms[t].append(c)
    for t in terms:
        if not t:
            t.append(rng.choice(letters))
    if private:
        extra = LETTERS[n_ind]
        terms[rng.randrange(n)].append(extra)
        letters.append(extra)
    if diagonal:
        t = terms[rng.randrange(n)]
        t.append(t[0])
    used = sorted(set("".join("".join(t) for t in terms)))
    out = rng.sample(used, min(n_out, len(used)))
    if private and extra in out:
        out.remove(extra)
    return ",".join("".join(t) for t in terms) + "->" + "".join(out)


def naive_work(eq, shapes):
    size = {}
    for term, sh in zip(eq.split("->")[0].split(","), shapes):
        for c, d in zip(term.replace("...", ""), sh[len(sh) - len(term.replace("...", "")):] if "..." in term else sh):
            size[c] = max(size.get(c, 1), d)
    w = 1
    for d in size.values():
        w *= d
    return w


def main():
    rng = random.Random(20261123)
    rows = []  # (einexpr pattern, shapes, lengths, naive, optimal, optimal in einexpr's convention, source)
    for eq in OPT_EINSUM:
        eq = explicit(eq)
        shapes = shapes_for(eq, rng)
        arrays = [np.ones(s) for s in shapes]
        rows.append((einexpr_pattern(eq), shapes, "", *numpy_counts(eq, arrays), "opt_einsum"))
    for eq, shapes in NUMPY:
        arrays = [np.ones(s) for s in shapes]
        rows.append((einexpr_pattern(eq), shapes, "", *numpy_counts(eq, arrays), "numpy"))
    for i, (pattern, shapes) in enumerate(COMPOSITIONS):
        rows.append((pattern, shapes, COMPOSITION_LENGTHS[i], -1, -1, -1, "composition"))
    seen = set()
    for n in [3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 8, 8] * 7:
        for _ in range(20):
            eq = rand_equation(n, rng, diagonal=rng.random() < 0.3, private=rng.random() < 0.3)
            shapes = shapes_for(eq, rng, 2, 3 if n > 5 else 4)
            if eq in seen or naive_work(eq, shapes) > 60000:
                continue
            seen.add(eq)
            arrays = [np.ones(s) for s in shapes]
            rows.append((einexpr_pattern(eq), shapes, "", *numpy_counts(eq, arrays), "random"))
            break
    with open("tests/lib/einsum_table.inc", "w") as f:
        f.write("// Generated by tests/lib/einsum_table.py with numpy " + np.__version__ + "; do not edit.\n")
        f.write("// {pattern, operand shapes, given lengths, numpy naive FLOPs, numpy optimal-path FLOPs\n")
        f.write("//  (einsum_path prints it + 1), numpy's optimal path in einexpr's convention (3+ operands),\n")
        f.write("//  source}; -1: numpy cannot write the pattern, or the count does not apply.\n")
        for pattern, shapes, lengths, naive, optimal, einexpr, source in rows:
            sh = ", ".join("{" + ", ".join(str(d) for d in s) + "}" for s in shapes)
            f.write(f'{{"{pattern}", {{{sh}}}, "{lengths}", {naive}, {optimal}, {einexpr}, "{source}"}},\n')
    print(len(rows), "rows")


if __name__ == "__main__":
    main()
