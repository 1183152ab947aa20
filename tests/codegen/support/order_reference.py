"""References for einexpr's contraction order (codegen/order), in Python, apart from it.

rand_equation: random einsums in the spirit of opt_einsum's rand_equation(n, regularity,
n_out); matrix_chain; exhaustive: the optimum over every tree; numpy_counts: what
numpy.einsum_path's 'greedy' and 'optimal' pay on the same problem. Used by
make_order_table.py (the committed test table) and bench/order_compare.py.

numpy's model (numpy/core/einsumfunc.py, 1.24): a step costs the product of the sizes of
every index it touches times op_factor = max(1, n_terms - 1) + (1 if it sums an index);
for a pairwise step that is 2·prod or 1·prod, the same as einexpr's convention when no
operand holds an index private to it (true here: every summed index is in two operands).
numpy prints sum(costs) + 1 as its "Optimized FLOP count"; numpy_counts gives sum(costs).
numpy's 'greedy' and 'optimal' take a memory limit, by default the largest input or output:
under it 'optimal' is not the optimum, and a greedy that finds no pair within it contracts
everything left in one step (op_factor = terms - 1 + 1). Both are run with that default and
with no limit (greedy with no limit is the rule opt_einsum's greedy uses too: pairs that
share an index first, the one removing the most memory, then the cheapest).
Run with /usr/bin/python3 (Debian's numpy).
"""
import random
import time

from numpy.core.einsumfunc import _find_contraction, _flop_count, _greedy_path, _optimal_path


def rand_equation(n, reg, n_out, seed, dmin=2, dmax=6):
    """n operands; n*reg/2 indices each in two operands; n_out output indices in one."""
    rng = random.Random(seed)
    num = n * reg // 2 + n_out
    sizes = [rng.randint(dmin, dmax) for _ in range(num)]
    slots = []
    for i in range(num):
        slots += [i] if i < n_out else [i, i]
    rng.shuffle(slots)
    ops = [[] for _ in range(n)]
    for k, ix in enumerate(slots):
        where = k if k < n else rng.randrange(n)
        while ix in ops[where]:
            where = rng.randrange(n)
        ops[where].append(ix)
    return ops, list(range(n_out)), sizes


def matrix_chain(n, seed, dmin=2, dmax=64):
    rng = random.Random(seed)
    d = [rng.randint(dmin, dmax) for _ in range(n + 1)]
    return [[i, i + 1] for i in range(n)], [0, n], d


def numpy_count(path, ops, out, sizes):
    """numpy's count of its own path (sum of costs), and whether a step took > 2 terms."""
    sets = [set(o) for o in ops]
    idx = dict(enumerate(sizes))
    total, kary = 0, False
    for con in path:
        con = tuple(sorted(con, reverse=True))
        _, sets, removed, contract = _find_contraction(con, sets, set(out))
        total += _flop_count(contract, removed, len(con), idx)
        kary = kary or len(con) > 2
    return total, kary


def numpy_counts(ops, out, sizes, optimal_nolimit_max=6):
    """numpy's (count, took a k-ary step) for its paths: greedy and optimal, with its default
    memory limit and with none (optimal: up to 8 and optimal_nolimit_max operands, it is
    factorial: about a minute at 8 with no limit)."""
    idx = dict(enumerate(sizes))
    default = max([1] + [_size(o, sizes) for o in ops] + [_size(out, sizes)])

    def run(search, limit):
        return numpy_count(search([set(o) for o in ops], set(out), idx, limit), ops, out, sizes)

    r = {}
    t0 = time.perf_counter()
    r["greedy_nolimit"] = run(_greedy_path, float("inf"))
    r["greedy_ms"] = (time.perf_counter() - t0) * 1e3
    r["greedy_default"] = run(_greedy_path, default)
    if len(ops) <= 8:
        r["optimal_default"] = run(_optimal_path, default)
    if len(ops) <= optimal_nolimit_max:
        r["optimal_nolimit"] = run(_optimal_path, float("inf"))
    return r


def _size(ix, sizes):
    p = 1
    for i in ix:
        p *= sizes[i]
    return p


def exhaustive(ops, out, sizes):
    """The optimum over every tree (dynamic programming over all subsets and splits)."""
    n = len(ops)
    full = (1 << n) - 1
    ax = [set() for _ in range(full + 1)]
    for s in range(1, full + 1):
        low = s & -s
        ax[s] = ax[s ^ low] | set(ops[low.bit_length() - 1])
    res = [ax[s] & (set(out) | ax[full ^ s]) for s in range(full + 1)]
    cost = [0] * (full + 1)
    for s in range(1, full + 1):
        if s & (s - 1) == 0:
            continue
        low, best, t = s & -s, None, (s - 1) & s
        while t:
            if t & low:
                u = s ^ t
                w = res[t] | res[u]
                c = cost[t] + cost[u] + (2 if w - res[s] else 1) * _size(w, sizes)
                best = c if best is None or c < best else best
            t = (t - 1) & s
        cost[s] = best
    return cost[full]


