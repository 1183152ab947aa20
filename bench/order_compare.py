#!/usr/bin/python3
"""einexpr's contraction order beside numpy.einsum_path's greedy and optimal, in one run.

Writes random einsums (rand_equation(n, 3, 2, seed), index sizes 2-6, seeds 1-5) of 8 to 64
operands and three matrix chains, asks einexpr_order_bench (bench/bench_order.cpp) for its
order and planning time (wall and CPU, median of 11 runs), its heuristic alone and its
greedy alone, computes numpy's counts for the same problems in this process (numpy's model
and how its counts convert: tests/codegen/support/order_reference.py), and prints Markdown
tables for bench/RESULTS.md.
Usage: /usr/bin/python3 bench/order_compare.py BUILD_DIR [--quick]
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "codegen", "support"))
from order_reference import exhaustive, matrix_chain, numpy_counts, rand_equation  # noqa: E402


def problems(quick):
    for n in [8, 10, 12, 16, 20, 25, 30, 40, 64]:
        for seed in range(1, 3 if quick else 6):
            yield ("rand n=%d seed=%d" % (n, seed),) + rand_equation(n, 3, 2, seed)
    for n in [10, 30, 64]:
        yield ("chain n=%d" % n,) + matrix_chain(n, n)


def run(build, probs, args):
    lines = ["%s|%s|%s|%s" % (label, ",".join(" ".join(map(str, o)) for o in ops), " ".join(map(str, out)),
                              " ".join(map(str, sizes))) for label, ops, out, sizes in probs]
    r = subprocess.run([os.path.join(build, "bench", "einexpr_order_bench")] + args, input="\n".join(lines) + "\n",
                       capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.splitlines()]


def fmt(x):
    return "%.3g" % x


def main():
    build, quick = sys.argv[1], "--quick" in sys.argv
    probs = list(problems(quick))
    repeat = "3" if quick else "11"
    ours = run(build, probs, ["--repeat", repeat])
    heur = run(build, probs, ["--repeat", "1", "--heuristic"])
    greedy = run(build, probs, ["--repeat", "1", "--greedy"])
    print("| problem | einexpr FLOPs | search | proven optimal | plan time, wall (CPU) | heuristic alone |"
          " einexpr greedy | numpy greedy | numpy greedy, default limit | numpy optimal, default limit |"
          " optimum (every tree) | einexpr / numpy greedy | numpy greedy time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    groups = {}
    for (label, ops, out, sizes), o, h, g in zip(probs, ours, heur, greedy):
        r = numpy_counts(ops, out, sizes)
        flops = int(o["flops"])
        opt = exhaustive(ops, out, sizes) if len(ops) <= 10 else None
        ng = r["greedy_nolimit"][0]
        gd, gk = r["greedy_default"]
        od = r.get("optimal_default")
        assert opt is None or flops == opt, (label, flops, opt)
        print("| %s | %d | %s | %s | %s ms (%s) | %s | %s | %d | %d%s | %s | %s | %s | %s ms |" % (
            label, flops, o["method"], "yes" if o["exact"] else "no", fmt(o["median_ms"]), fmt(o["cpu_median_ms"]),
            h["flops"], g["flops"], ng, gd, " (k-ary last step)" if gk else "",
            "%d%s" % (od[0], " (k-ary)" if od[1] else "") if od else "-", opt if opt is not None else "-",
            fmt(flops / ng), fmt(r["greedy_ms"])))
        groups.setdefault(label.split(" seed")[0], []).append((o, flops, ng, int(h["flops"])))
    print()
    print("| problems | plan time, median of medians: wall (CPU) | slowest median: wall (CPU) | proven optimal |"
          " ≤ numpy greedy | heuristic alone = einexpr |")
    print("|---|---|---|---|---|---|")
    for key, rows in groups.items():
        wall = statistics.median(o["median_ms"] for o, *_ in rows)
        cpu = statistics.median(o["cpu_median_ms"] for o, *_ in rows)
        worst = max(rows, key=lambda r: r[0]["median_ms"])[0]
        print("| %s (%d) | %s ms (%s) | %s ms (%s) | %d of %d | %d of %d | %d of %d |" % (
            key, len(rows), fmt(wall), fmt(cpu), fmt(worst["median_ms"]), fmt(worst["cpu_median_ms"]),
            sum(1 for o, *_ in rows if o["exact"]), len(rows), sum(1 for _, f, g, _h in rows if f <= g), len(rows),
            sum(1 for _, f, _g, hh in rows if hh == f), len(rows)))


if __name__ == "__main__":
    main()
