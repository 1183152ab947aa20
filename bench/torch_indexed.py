#!/usr/bin/python3
"""get_at, get_at's gradient, cross_entropy forward and backward, concatenation and split:
einexpr beside its memory limit and beside torch, in one run.

Each run times einexpr_bench's workloads of bench/bench_indexed.cpp (einexpr and its limit,
measured in that process), then torch 1.13 on the same values at the same thread count:
F.embedding and index_select; aten's embedding_dense_backward (what nn.Embedding's backward
calls); F.cross_entropy(reduction='none') forward, and its backward alone (autograd.grad of
a retained graph); torch.cat; torch.split with .contiguous() on each part. Medians over the
run's repetitions; across runs the median of the per-run values.

    /usr/bin/python3 bench/torch_indexed.py [--bench build-rel/bench/einexpr_bench] [--runs 3]
"""
import argparse
import os
import statistics

import torch
import torch.nn.functional as F

from bench_runs import median_time, run_bench

THREADS = 2
V, D, B, S, ROWS = 50257, 768, 8, 1024, 8192


def pattern(*shape):
    n = 1
    for s in shape:
        n *= s
    i = torch.arange(n, dtype=torch.int64)
    return (((i * 7919) % 2048).to(torch.float32) / 1024.0 - 1.0).reshape(*shape)


def tokens(*shape):
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.int64) * 7919 + 17) % V).reshape(*shape)


WORKLOADS = {  # name in the table -> (einexpr_bench workload prefix, limit role, target)
    "get_at (embedding)": ("get_at ", "limit:memcpy", 0.9),
    "get_at's gradient": ("add_at grad ", "limit:memset+read", 0.9),
    "cross_entropy forward": ("cross_entropy b [v], b 8192x50257 f32 forward", "limit:read", 0.5),
    "cross_entropy backward": ("cross_entropy b [v], b 8192x50257 f32 backward", "limit:read", 0.5),
    "cross_entropy backward, against a copy": ("cross_entropy b [v], b 8192x50257 f32 backward", "limit:memcpy", None),
    "concatenation": ("concat ", "limit:memcpy", 0.9),
    "split, copied": ("split ", "limit:memcpy", 0.9),
}


def torch_calls():
    wte, tok = pattern(V, D), tokens(B, S)
    dy = pattern(B, S, D)
    logits, targets = pattern(ROWS, V), tokens(ROWS)
    x = logits.clone().requires_grad_(True)
    loss = F.cross_entropy(x, targets, reduction="none")
    dloss = pattern(ROWS)
    a, b2 = pattern(16, 1024, 1024), pattern(16, 3072, 1024)
    qkv = pattern(16 * 1024, 3 * 1024)
    return {
        "get_at (embedding)": [("F.embedding", lambda: F.embedding(tok, wte)),
                               ("index_select", lambda: torch.index_select(wte, 0, tok.reshape(-1)))],
        "get_at's gradient": [("embedding_dense_backward",
                               lambda: torch.ops.aten.embedding_dense_backward(dy, tok, V, -1, False))],
        "cross_entropy forward": [("F.cross_entropy", lambda: F.cross_entropy(logits, targets, reduction="none"))],
        "cross_entropy backward": [("autograd.grad", lambda: torch.autograd.grad(loss, x, dloss, retain_graph=True))],
        "concatenation": [("torch.cat", lambda: torch.cat([a, b2], 1))],
        "split, copied": [("split + contiguous", lambda: [t.contiguous() for t in torch.split(qkv, 1024, 1)])],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="build-rel/bench/einexpr_bench")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5, help="torch timings per call and run")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    calls = torch_calls()
    per_run = []
    # Google Benchmark's filter is a regex that takes no escapes: the names' brackets and
    # parentheses match as "." (any character)
    filt = "^(" + "|".join("".join("." if c in "[](){}*+?^$|\\" else c for c in w)
                           for w, _, _ in WORKLOADS.values()) + ")"
    for run in range(args.runs):
        load = os.getloadavg()[0]
        rows, context = run_bench(args.bench, filt, 3, 0.2)
        ein = {}
        for (workload, role, _), seconds, _ in rows:
            for name, (prefix, _, _) in WORKLOADS.items():
                if workload.startswith(prefix.strip()) and (prefix.endswith(" ") or workload == prefix):
                    ein.setdefault((name, role), []).append(seconds)
        ein = {k: statistics.median(v) for k, v in ein.items()}
        tor = {(name, label): median_time(f, args.repeats) for name, fs in calls.items() for label, f in fs}
        per_run.append((ein, tor, load))
        print(f"run {run + 1} of {args.runs} done (load average {load:.1f} at its start)", flush=True)

    def med(get):
        return statistics.median(get(r) for r in per_run)

    print(f"\ntorch {torch.__version__}, {THREADS} threads; {args.runs} run(s), medians; load averages at the "
          f"runs' starts: {', '.join(f'{r[2]:.1f}' for r in per_run)}\n")
    print("| op | einexpr | limit | of the limit | target | torch | torch ÷ einexpr |")
    print("|---|---|---|---|---|---|---|")
    for name, (_, limit, target) in WORKLOADS.items():
        # Beside the limit: einexpr writing into an owned output where the workload has one
        # ("out": no fresh pages for a 1.5 GiB result), else its plain call.
        role = "out" if (name, "out") in per_run[0][0] else "fresh"
        goal = f"≥ {target}" if target is not None else "(beside it)"
        e = med(lambda r: r[0][(name, "fresh")])
        lim = med(lambda r: r[0][(name, limit)])
        share = med(lambda r: r[0][(name, limit)] / r[0][(name, role)])
        if role == "out":
            print(f"| {name} (into an owned output) | {med(lambda r: r[0][(name, 'out')]) * 1e3:.2f} ms | "
                  f"{lim * 1e3:.2f} ms ({limit[6:]}) | {share:.2f} | {goal} | | |")
        for label, _ in calls.get(name, []):
            t = med(lambda r: r[1][(name, label)])
            speed = med(lambda r: r[1][(name, label)] / r[0][(name, "fresh")])
            print(f"| {name} | {e * 1e3:.2f} ms | {lim * 1e3:.2f} ms ({limit[6:]}) | {share:.2f} | {goal} | "
                  f"{t * 1e3:.2f} ms ({label}) | {speed:.2f}× |")


if __name__ == "__main__":
    main()
