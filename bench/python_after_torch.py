#!/usr/bin/python3
"""einexpr in one Python process before and after torch has run (issue 34, item 1).

Times einexpr's ops on numpy arrays (the mean over at least --min-time seconds of calls, not
the median, which hides calls that stall), then runs torch on both cores (matmul, layer_norm,
sum: torch 1.13's OpenMP threads, which spin after each op), then times einexpr's ops again,
first right after that torch burst, then with one torch op before every einexpr call. Prints
one Markdown row per op: the means and after / before, the figure issue 34 bounds by 1.25.

    PYTHONPATH=build-rel/python /usr/bin/python3 bench/python_after_torch.py [--min-time 1]

Needs Debian's python3 with numpy and torch and a build with the Python module
(-DEINEXPR_PYTHON=ON or AUTO).
"""
import argparse
import os
import time

import numpy as np

import einexpr


def workloads(rng):
    x = rng.standard_normal((1024, 256), dtype=np.float32)
    w = rng.standard_normal((256, 64), dtype=np.float32)
    q = rng.standard_normal((8, 64, 64), dtype=np.float32)
    k = rng.standard_normal((8, 64, 64), dtype=np.float32)
    cube = rng.standard_normal((64, 64, 64), dtype=np.float32)
    rows = rng.standard_normal((256, 4096), dtype=np.float32)
    flat = rng.standard_normal(1 << 18, dtype=np.float32)
    norm = rng.standard_normal((1024, 1024), dtype=np.float32)
    return {
        "einsum b d, d k -> b k (1024x256x64)": lambda: einexpr.einsum(x, w, "b d, d k -> b k"),
        "einsum b s h, b t h -> b s t (8x64x64x64)": lambda: einexpr.einsum(q, k, "b s h, b t h -> b s t"),
        "rearrange a b c -> (c b a) (64^3, a copy)": lambda: einexpr.rearrange(cube, "a b c -> (c b a)"),
        "reduce b s -> b mean (256x4096)": lambda: einexpr.reduce(rows, "b s -> b", "mean"),
        "map gelu (256 Ki)": lambda: einexpr.map(flat, "gelu"),
        "layer_norm b [d] (1024x1024)": lambda: einexpr.layer_norm(norm, "b [d]"),
    }


def mean_time(fn, min_time, between=None):
    for _ in range(3):
        fn()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 10:
        if between is not None:
            between()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times), sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-time", type=float, default=1.0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    ops = workloads(rng)
    before = {name: mean_time(fn, args.min_time) for name, fn in ops.items()}

    import torch  # noqa: E402 (imported only now: "before" is a process that never saw torch)

    torch.set_num_threads(os.cpu_count())
    a = torch.randn(512, 512)
    t = torch.randn(1024, 1024)

    def torch_burst():
        torch.mm(a, a)
        torch.nn.functional.layer_norm(t, (1024,))
        t.sum(dim=1)

    for _ in range(20):
        torch_burst()
    after = {name: mean_time(fn, args.min_time) for name, fn in ops.items()}
    interleaved = {name: mean_time(fn, args.min_time, between=lambda: torch.mm(a, a)) for name, fn in ops.items()}

    print(f"einexpr {einexpr.__version__}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; means (medians) over >= {args.min_time} s")
    print()
    print("| op | before torch | after torch | after / before | one torch.mm before each call | that / before |")
    print("|---|---|---|---|---|---|")
    for name in ops:
        (b, bm), (x, xm), (i, im) = before[name], after[name], interleaved[name]
        print(f"| {name} | {b * 1e3:.3f} ms ({bm * 1e3:.3f}) | {x * 1e3:.3f} ms ({xm * 1e3:.3f}) | {x / b:.2f} "
              f"| {i * 1e3:.3f} ms ({im * 1e3:.3f}) | {i / b:.2f} |")


if __name__ == "__main__":
    main()
