#!/usr/bin/python3
"""TCCG's 48 contractions (bench/suite_cases.py) through einexpr, beside one GEMM of the same
flattened m, n, k through the same BLAS, numpy.einsum(optimize=True) and torch.einsum, in one run.

For each case, einexpr_suite_bench (bench/bench_suite.cpp) times in rounds, every role once a
round: einsum_into a preallocated output ("out"), einsum returning a new tensor ("fresh"),
and the limit: sgemm on already-laid-out [m, k] x [k, n] f32 matrices through OpenBLAS, with
its own threads and as row blocks over OpenMP threads (the faster of the two per round);
right after, in this process, numpy.einsum(..., optimize=True) and torch.einsum on random
f32 operands of the same shapes (torch at the same thread count; numpy's BLAS as it is set).
Ratios: "of GEMM" is the median over rounds of GEMM time / einexpr time within the round,
"min" the ratio of the rounds' minima; against numpy and torch, their median over einexpr's.
`einexpr explain` shows the plan each case takes (--plans prints them). The benchmark runs
with OMP_WAIT_POLICY=passive, so the limit's OpenMP threads do not spin on einexpr's cores.

    /usr/bin/python3 bench/tccg_contractions.py [--bench build-rel/bench/einexpr_suite_bench]
        [--cases 0-47] [--rounds 3] [--repeats 3] [--no-peers] [--json FILE]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import time

import numpy as np

from suite_cases import tccg_cases

THREADS = 2


def parse_cases(spec, n):
    if not spec:
        return list(range(n))
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def mnk(pattern, sizes):
    (a, b), c = [s.split() for s in pattern.split("->")[0].split(",")], pattern.split("->")[1].split()
    m = math.prod(sizes[x] for x in a if x in c)
    n = math.prod(sizes[x] for x in b if x in c)
    k = math.prod(sizes[x] for x in a if x not in c)
    return m, n, k


def median_time(f, repeats):
    f()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts)


def peers(pattern, sizes, repeats, torch):
    sides = [s.split() for s in pattern.split("->")[0].split(",")]
    out = pattern.split("->")[1].split()
    letters = {n: chr(ord("a") + i) for i, n in enumerate(sorted(set(sum(sides, []) + out)))}
    eq = ",".join("".join(letters[n] for n in s) for s in sides) + "->" + "".join(letters[n] for n in out)
    rng = np.random.default_rng(1)
    a = rng.standard_normal([sizes[n] for n in sides[0]], dtype=np.float32)
    b = rng.standard_normal([sizes[n] for n in sides[1]], dtype=np.float32)
    r = {"numpy": median_time(lambda: np.einsum(eq, a, b, optimize=True), repeats)}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        r["torch"] = median_time(lambda: torch.einsum(eq, ta, tb), repeats)
    return r


def gemm_ratio(times, role):
    """(median over rounds of the faster GEMM / role within the round, ratio of minima)."""
    g = [min(x, y) for x, y in zip(times["gemm_openblas"], times["gemm_split_rows"])]
    e = times[role]
    return statistics.median(x / y for x, y in zip(g, e)), min(g) / min(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build-rel/bench/einexpr_suite_bench")
    ap.add_argument("--cases", default="")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    torch = None
    if not args.no_peers:
        import torch as torch_module
        torch = torch_module
        torch.set_num_threads(THREADS)
    cases = tccg_cases()
    records = []
    load0 = os.getloadavg()[0]
    for index in parse_cases(args.cases, len(cases)):
        suite, i, norm, pattern, sizes = cases[index]
        m, n, k = mnk(pattern, sizes)
        lengths = " ".join(f"{x}={v}" for x, v in sorted(sizes.items()))
        req = f"einsum|{pattern}|{lengths}|{m} {n} {k}|{args.rounds}\n"
        # passive: the limit's OpenMP threads sleep when done instead of spinning on the cores
        # einexpr's next role needs (bench/RESULTS.md, "HPTT's 57 permutations on Zen 5")
        res = subprocess.run([args.bench], input=req, capture_output=True, text=True, check=True,
                             env=dict(os.environ, EINEXPR_BENCH_THREADS=str(THREADS), OMP_WAIT_POLICY="passive"))
        rec = json.loads(res.stdout.splitlines()[0])
        if "error" in rec:
            raise SystemExit(f"case {index}: {rec['error']}")
        rec.update(index=index, suite=f"{suite}{i}", tccg=norm, sizes=sizes, load=os.getloadavg()[0])
        if not args.no_peers:
            rec["peers"] = peers(pattern, sizes, args.repeats, torch)
        records.append(rec)
        # each case's row and the JSON as soon as it is measured: a run cut short keeps them
        print(f"case {index} ({suite}{i}) done: {table_row(rec, args.no_peers)}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(records, f, indent=1)
    print(f"\n{THREADS} threads, {args.rounds} rounds; load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    head = "| # | TCCG | einsum (row-major) | m×n×k | GEMM GFLOP/s | out of GEMM (min) | fresh of GEMM (min) |"
    if not args.no_peers:
        head += " einexpr ms | numpy ms | torch ms | ÷ numpy | ÷ torch |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for rec in records:
        print(table_row(rec, args.no_peers))


def table_row(rec, no_peers):
    t = rec["times"]
    assert rec["checked"], rec["index"]
    o, omin = gemm_ratio(t, "out")
    fr, fmin = gemm_ratio(t, "fresh")
    g = min(min(t["gemm_openblas"]), min(t["gemm_split_rows"]))
    m, n, k = rec["mnk"]
    row = (f"| {rec['index']} | {rec['suite']} `{rec['tccg']}` | `{rec['pattern']}` | {m}×{n}×{k} | "
           f"{rec['flops'] / g / 1e9:.0f} | {o:.2f} ({omin:.2f}) | {fr:.2f} ({fmin:.2f}) |")
    if not no_peers:
        e = statistics.median(t["fresh"])
        p = rec["peers"]
        row += (f" {e * 1e3:.1f} | {p['numpy'][0] * 1e3:.1f} | {p['torch'][0] * 1e3:.1f} | "
                f"{p['numpy'][0] / e:.2f}× | {p['torch'][0] / e:.2f}× |")
    return row


if __name__ == "__main__":
    main()
