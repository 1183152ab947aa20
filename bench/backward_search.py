#!/usr/bin/env python3
"""How long `einexpr cost einsum` takes (forward + every gradient's order search) on random
many-operand einsums, and the backward FLOPs it reports, for one or more einexpr binaries.

    bench/backward_search.py BUILD/lib/einexpr [OTHER/lib/einexpr ...] [--repeat 3]

Each einsum: n operands of 2-4 axes drawn from about 0.8·n names of length 2-5 (seeded),
two output axes. `explain` times the forward plan alone. Prints a Markdown table: per
binary, the median wall time of `cost` and its backward FLOPs."""
import argparse
import random
import re
import statistics
import subprocess
import time


def problem(n, seed):
    rng = random.Random(seed)
    names = [f"x{i}" for i in range(max(4, int(n * 0.8)))]
    ops = [" ".join(rng.sample(names, rng.choice([2, 3, 3, 4]))) for _ in range(n)]
    sizes = [f"{a}={rng.choice([2, 3, 4, 5])}" for a in names]
    return ", ".join(ops) + " -> " + " ".join(names[:2]), sizes


def timed(cmd, repeat):
    times, out = [], ""
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd[:3])}: {r.stderr.strip()}")
        out = r.stdout
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="12,16,20,24,30")
    ap.add_argument("--seeds", default="1,2")
    a = ap.parse_args()
    head = "| operands | seed | forward plan (explain) |"
    for i, _ in enumerate(a.binaries):
        head += f" cost, binary {i + 1} | backward FLOPs, binary {i + 1} |"
    print(head)
    print("|---" * (3 + 2 * len(a.binaries)) + "|")
    for n in map(int, a.sizes.split(",")):
        for seed in map(int, a.seeds.split(",")):
            pattern, sizes = problem(n, seed)
            fwd, _ = timed([a.binaries[0], "explain", "einsum", pattern, *sizes], a.repeat)
            row = f"| {n} | {seed} | {fwd:.3f} s |"
            for b in a.binaries:
                t, out = timed([b, "cost", "einsum", pattern, *sizes], a.repeat)
                m = re.search(r"^\s*backward\s+\S+\s+\S+\s+(\d+)", out, re.M)
                row += f" {t:.3f} s | {m.group(1) if m else '?'} |"
            print(row, flush=True)


if __name__ == "__main__":
    main()
