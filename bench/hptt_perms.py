#!/usr/bin/python3
"""HPTT's 57 permutations (bench/suite_cases.py) through einexpr, beside a streaming copy of the
same bytes (the limit), numpy and torch, in one run.

For each case, einexpr_suite_bench (bench/bench_suite.cpp) times in rounds, every role once a
round: rearrange_into a preallocated tensor ("out"), rearrange returning a new one ("fresh"),
a streaming-store copy of the same bytes ("stream", the limit) and memcpy, in f32 (and f64,
bf16 with --dtypes); right after, in this process, numpy's np.copyto(out, x.transpose(p))
and np.ascontiguousarray(x.transpose(p)) and torch's out.copy_(x.permute(p)) and
x.permute(p).contiguous() on the same f32 values (bench_f32's pattern), torch at the same
thread count (numpy copies on one thread). Ratios: "of stream" is the median over rounds of
stream time / einexpr time within the round, "min" the ratio of the rounds' minima; against
numpy and torch, their median over einexpr's median. The benchmark runs with
OMP_WAIT_POLICY=passive, so the limit roles' OpenMP threads do not spin on the cores the next
role needs.

    /usr/bin/python3 bench/hptt_perms.py [--bench build-rel/bench/einexpr_suite_bench]
        [--cases 1,2,40-57] [--dtypes f32,f64,bf16] [--rounds 7] [--repeats 3] [--no-peers]
        [--json FILE]

Prints a Markdown table; --json keeps every measured time.
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np

from suite_cases import check_hptt, hptt_cases

THREADS = 2


def parse_cases(spec, n):
    if not spec:
        return list(range(1, n + 1))
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def pattern_f32(shape):
    """bench/harness.cpp's pattern_f32: ((i * 7919) % 2048) / 1024 - 1 in row-major order."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 7919) % 2048).astype(np.float32) / np.float32(1024) - np.float32(1)).reshape(shape)


def median_time(f, repeats):
    f()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts)


def peers(pattern, sizes, repeats, torch):
    src, dst = [s.split() for s in pattern.split("->")]
    perm = [src.index(n) for n in dst]
    x = pattern_f32(sizes)
    out = np.empty([sizes[p] for p in perm], dtype=np.float32)
    r = {"numpy out": median_time(lambda: np.copyto(out, x.transpose(perm)), repeats),
         "numpy fresh": median_time(lambda: np.ascontiguousarray(x.transpose(perm)), repeats)}
    assert np.array_equal(out, x.transpose(perm))
    if torch is not None:
        tx, tout = torch.from_numpy(x), torch.from_numpy(out)
        r["torch out"] = median_time(lambda: tout.copy_(tx.permute(perm)), repeats)
        r["torch fresh"] = median_time(lambda: tx.permute(perm).contiguous(), repeats)
    return r


def ratios(times, role, cpu=False):
    """(median over rounds of stream / role within the round, min stream / min role); of
    the calls' CPU times with cpu (einexpr_suite_bench's "ROLE cpu")."""
    suffix = " cpu" if cpu else ""
    s, e = times["stream" + suffix], times[role + suffix]
    return statistics.median(a / b for a, b in zip(s, e)), min(s) / min(e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default="build-rel/bench/einexpr_suite_bench")
    ap.add_argument("--cases", default="")
    ap.add_argument("--dtypes", default="f32")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeats", type=int, default=3, help="numpy/torch timings per call")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--json", default="")
    ap.add_argument("--cpu", action="store_true", help="also the ratios of CPU times")
    args = ap.parse_args()
    check_hptt()
    torch = None
    if not args.no_peers:
        import torch as torch_module
        torch = torch_module
        torch.set_num_threads(THREADS)
    cases = hptt_cases()
    dtypes = args.dtypes.split(",")
    records = []
    load0 = os.getloadavg()[0]
    for index in parse_cases(args.cases, len(cases)):
        _, pattern, sizes, line = cases[index - 1]
        req = f"permute|{pattern}|{' '.join(map(str, sizes))}|{','.join(dtypes)}|{args.rounds}\n"
        # passive: the limit roles' OpenMP threads sleep when done instead of spinning on the
        # cores einexpr's next role needs (spinning, they cost its two-thread ratios 0.05-0.1,
        # and up to 0.3 where the memory is fast: bench/RESULTS.md)
        env = dict(os.environ, EINEXPR_BENCH_THREADS=str(THREADS), OMP_WAIT_POLICY="passive")
        res = subprocess.run([args.bench], input=req, capture_output=True, text=True, check=True, env=env)
        rec = json.loads(res.stdout.splitlines()[0])
        if "error" in rec:
            raise SystemExit(f"case {index}: {rec['error']}")
        rec.update(index=index, hptt=line, load=os.getloadavg()[0])
        if not args.no_peers:
            rec["peers"] = peers(pattern, sizes, args.repeats, torch)
        records.append(rec)
        print(f"case {index} done", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    print(f"\n{THREADS} threads, {args.rounds} rounds; load average {load0:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end\n")
    head = "| # | pattern | sizes |"
    for dt in dtypes:
        head += f" {dt} out of stream (min) | {dt} fresh of stream (min) |"
        if args.cpu:
            head += f" {dt} out, CPU time (min) |"
    if not args.no_peers:
        head += " stream GB/s | einexpr out ms | numpy out ms | torch out ms | ÷ numpy (out) | ÷ torch (out) | ÷ numpy (fresh) | ÷ torch (fresh) |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for rec in records:
        row = f"| {rec['index']} | `{rec['pattern']}` | {rec['sizes'].replace(' ', '×')} |"
        for dt in dtypes:
            t = rec[dt]["times"]
            assert rec[dt]["checked"], (rec["index"], dt)
            o, omin = ratios(t, "out")
            fr, fmin = ratios(t, "fresh")
            row += f" {o:.2f} ({omin:.2f}) | {fr:.2f} ({fmin:.2f}) |"
            if args.cpu:
                c, cmin = ratios(t, "out", cpu=True)
                row += f" {c:.2f} ({cmin:.2f}) |"
        if not args.no_peers:
            t = rec["f32"]["times"]
            p = rec["peers"]
            e_out, e_fresh = statistics.median(t["out"]), statistics.median(t["fresh"])
            gbs = 2 * rec["f32"]["bytes"] / min(t["stream"]) / 1e9
            row += (f" {gbs:.1f} | {e_out * 1e3:.1f} | {p['numpy out'][0] * 1e3:.1f} | {p['torch out'][0] * 1e3:.1f} | "
                    f"{p['numpy out'][0] / e_out:.1f}× | {p['torch out'][0] / e_out:.1f}× | "
                    f"{p['numpy fresh'][0] / e_fresh:.1f}× | {p['torch fresh'][0] / e_fresh:.1f}× |")
        print(row)


if __name__ == "__main__":
    main()
