#!/usr/bin/env python3
"""einexpr's contraction order beside numpy.einsum_path's greedy and optimal, in one run.

Writes random einsums (rand_equation below, in the spirit of opt_einsum's
rand_equation(n, regularity=3, n_out=2), index sizes 2-6) and matrix chains, asks
einexpr_order_bench (built from bench/bench_order.cpp) for its order and planning time,
computes numpy's counts for the same problems in this process, and prints a Markdown table.

numpy's model (numpy/core/einsumfunc.py, 1.24): a step costs the product of the sizes of
every index it touches times op_factor = max(1, n_terms - 1) + (1 if it sums an index);
for a pairwise step that is 2·prod or 1·prod, the same as einexpr's convention when no
operand holds an index private to it (true here: every summed index is in two operands).
numpy prints sum(costs) + 1 as its "Optimized FLOP count"; this table gives sum(costs).
numpy's 'greedy' and 'optimal' take a memory limit, by default the largest input or output:
under it 'optimal' is not the optimum, and a greedy that finds no pair within it contracts
everything left in one step (op_factor = terms - 1 + 1). Both are run with that default and
with no limit ('greedy, no limit' is opt_einsum's greedy: the comparison the targets use).
Usage: order_compare.py BUILD_DIR [--quick]   (/usr/bin/python3: Debian's numpy)
"""
import json
import random
import statistics
import subprocess
import sys
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


def numpy_counts(ops, out, sizes):
    sets = [set(o) for o in ops]
    idx = dict(enumerate(sizes))
    default = max([1] + [_size(o, sizes) for o in ops] + [_size(out, sizes)])
    r = {}
    t0 = time.perf_counter()
    r["greedy_nolimit"] = numpy_count(_greedy_path(sets, set(out), idx, float("inf")), ops, out, sizes)
    r["greedy_ms"] = (time.perf_counter() - t0) * 1e3
    r["greedy_default"] = numpy_count(_greedy_path(sets, set(out), idx, default), ops, out, sizes)
    if len(ops) <= 8:
        r["optimal_default"] = numpy_count(_optimal_path(sets, set(out), idx, default), ops, out, sizes)
    if len(ops) <= 6:
        r["optimal_nolimit"] = numpy_count(_optimal_path(sets, set(out), idx, float("inf")), ops, out, sizes)
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


def problems(quick):
    ns = [8, 10, 12, 16, 20, 25, 30, 40, 64]
    seeds = range(1, 3 if quick else 6)
    for n in ns:
        for seed in seeds:
            yield ("rand n=%d seed=%d" % (n, seed),) + rand_equation(n, 3, 2, seed)
    for n in [10, 30, 64]:
        yield ("chain n=%d" % n,) + matrix_chain(n, n)


def fmt(x):
    return "%.4g" % x


def main():
    build = sys.argv[1]
    quick = "--quick" in sys.argv
    probs = list(problems(quick))
    lines = ["%s|%s|%s|%s" % (label, ",".join(" ".join(map(str, o)) for o in ops), " ".join(map(str, out)),
                              " ".join(map(str, sizes))) for label, ops, out, sizes in probs]
    run = subprocess.run([build + "/bench/einexpr_order_bench", "--repeat", "5" if quick else "11"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    ours = [json.loads(l) for l in run.stdout.splitlines()]
    print("| problem | einexpr FLOPs | search | exact | plan time median (min) | numpy greedy, no limit |"
          " numpy greedy, default limit | numpy optimal, default limit | optimum (exhaustive, n ≤ 10) |"
          " einexpr / numpy greedy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    by_n = {}
    for (label, ops, out, sizes), o in zip(probs, ours):
        r = numpy_counts(ops, out, sizes)
        flops = int(o["flops"])
        opt = exhaustive(ops, out, sizes) if len(ops) <= 10 else None
        g = r["greedy_nolimit"][0]
        gd, gk = r["greedy_default"]
        od = r.get("optimal_default")
        print("| %s | %d | %s | %s | %s ms (%s) | %d | %d%s | %s | %s | %s |" % (
            label, flops, o["method"], "yes" if o["exact"] else "no", fmt(o["median_ms"]), fmt(o["min_ms"]), g, gd,
            " (one k-ary step)" if gk else "", "%d%s" % (od[0], " (k-ary)" if od[1] else "") if od else "-",
            opt if opt is not None else "-", fmt(flops / g)))
        assert opt is None or flops == opt, (label, flops, opt)
        by_n.setdefault(label.split(" seed")[0], []).append((o, flops, g))
    print()
    print("| problems | planning time, median of the medians | slowest median | proven optimal | ≤ numpy greedy |")
    print("|---|---|---|---|---|")
    for key, rows in by_n.items():
        med = statistics.median(o["median_ms"] for o, _, _ in rows)
        worst = max(o["median_ms"] for o, _, _ in rows)
        exact = sum(1 for o, _, _ in rows if o["exact"])
        better = sum(1 for _, f, g in rows if f <= g)
        print("| %s (%d) | %s ms | %s ms | %d of %d | %d of %d |" % (key, len(rows), fmt(med), fmt(worst), exact,
                                                                   len(rows), better, len(rows)))


if __name__ == "__main__":
    main()
