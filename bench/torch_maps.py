#!/usr/bin/python3
"""einexpr's elementwise maps and normalizations beside memcpy and beside torch, in one run.

Each run times einexpr_bench's "map ..." workloads (bench/bench_maps.cpp: einexpr writing
into an owned output ("out") and returning a new tensor ("fresh"), memcpy of the same bytes)
and bench/bench_norms.cpp's softmax and layer_norm along the last axis of (65536, 1024)), then
torch 1.13 on the same values (bench_f32's pattern over 256 MiB of f32) at the same thread
count: torch's out= form (torch.exp(x, out=y); aten's _softmax.out; layer_norm has none, so
its plain call) beside "out", and the plain call, which allocates its result, beside "fresh". Times are medians over the run's repetitions; across
runs the table shows the median of the per-run values, so each ratio compares two numbers
measured minutes apart at most.

    /usr/bin/python3 bench/torch_maps.py [--bench build-rel/bench/einexpr_bench] [--runs 3]
                                         [--functions gelu_erf,exp]

Needs Debian's python3 with numpy and torch (python3-torch); prints a Markdown table.
"""
import argparse
import os
import statistics

import torch

from bench_runs import median_time, run_bench

THREADS = 2
ELEMENTS = 64 << 20  # 256 MiB of f32
FUNCTIONS = ["gelu", "gelu_erf", "gelu_erf_wide", "tanh", "exp", "sigmoid", "silu", "relu", "square", "softmax", "layer_norm"]
ROWS, COLS = 65536, 1024  # the normalizations' shape (ELEMENTS in all)
TARGETS = {"relu": 0.9, "square": 0.9}  # of memcpy; the others 0.5
WIDE = " in [-16, 16)"  # gelu_erf_wide: the same values times 16 (bench/bench_maps.cpp)


def torch_calls(x, y, x_wide):
    """function -> (out= call writing y, plain call returning a new tensor)."""
    nn = torch._C._nn
    x2, y2 = x.view(ROWS, COLS), y.view(ROWS, COLS)
    return {
        "gelu": (lambda: nn.gelu(x, approximate="tanh", out=y), lambda: nn.gelu(x, approximate="tanh")),
        "gelu_erf": (lambda: nn.gelu(x, out=y), lambda: nn.gelu(x)),
        "gelu_erf_wide": (lambda: nn.gelu(x_wide, out=y), lambda: nn.gelu(x_wide)),
        "tanh": (lambda: torch.tanh(x, out=y), lambda: torch.tanh(x)),
        "exp": (lambda: torch.exp(x, out=y), lambda: torch.exp(x)),
        "sigmoid": (lambda: torch.sigmoid(x, out=y), lambda: torch.sigmoid(x)),
        "silu": (lambda: nn.silu(x, out=y), lambda: nn.silu(x)),
        "relu": (lambda: torch.clamp_min(x, 0, out=y), lambda: torch.relu(x)),
        "square": (lambda: torch.square(x, out=y), lambda: torch.square(x)),
        "softmax": (lambda: torch.ops.aten._softmax.out(x2, -1, False, out=y2), lambda: torch.softmax(x2, -1)),
        "layer_norm": (lambda: torch.nn.functional.layer_norm(x2, (COLS,), eps=1e-5),
                       lambda: torch.nn.functional.layer_norm(x2, (COLS,), eps=1e-5)),
    }


def run_einexpr(binary, repetitions, functions):
    """{(function, role): median seconds} from one einexpr_bench run of the workloads of `functions`."""
    def workload(f):
        if f in ("softmax", "layer_norm"):
            return f"{f} "
        if f == "gelu_erf_wide":
            return "map gelu_erf 256 MiB f32 in "  # Google Benchmark's regex: no escapes
        return f"map {f} 256 MiB f32 [|]"
    rows, context = run_bench(binary, f"^({'|'.join(workload(f) for f in functions)})", repetitions, 0.2)
    times = {}
    for (workload, role, _), seconds, _ in rows:
        words = workload.split()
        function = words[1] if words[0] == "map" else words[0]
        if workload.endswith(WIDE):
            function += "_wide"
        times.setdefault((function, role), []).append(seconds)
    return {k: statistics.median(v) for k, v in times.items()}, context


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="build-rel/bench/einexpr_bench")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=7, help="torch timings per call and run")
    parser.add_argument("--functions", default=",".join(FUNCTIONS),
                        help="comma-separated subset of: " + ", ".join(FUNCTIONS))
    args = parser.parse_args()
    functions = args.functions.split(",")
    unknown = [f for f in functions if f not in FUNCTIONS]
    if unknown:
        parser.error(f"unknown function(s) {', '.join(unknown)}; known: {', '.join(FUNCTIONS)}")
    torch.set_num_threads(THREADS)
    i = torch.arange(ELEMENTS, dtype=torch.int64)
    x = ((i * 7919) % 2048).to(torch.float32) / 1024.0 - 1.0  # bench/harness.cpp's pattern_f32
    del i
    y = torch.empty_like(x)
    calls = torch_calls(x, y, x * 16 if "gelu_erf_wide" in functions else None)  # 256 MiB more only when asked
    per_run = []
    for run in range(args.runs):
        load = os.getloadavg()[0]
        ein, context = run_einexpr(args.bench, 3, functions)
        tor = {}
        for f in functions:
            out_call, fresh_call = calls[f]
            tor[(f, "out")] = median_time(out_call, args.repeats)
            tor[(f, "fresh")] = median_time(fresh_call, args.repeats)
        per_run.append((ein, tor, load))
        print(f"run {run + 1} of {args.runs} done (load average {load:.1f} at its start)", flush=True)

    def med(get):
        return statistics.median(get(r) for r in per_run)

    print(f"\ntorch {torch.__version__}, {THREADS} threads; Google Benchmark library: "
          f"{context.get('library_build_type', '?')}; {args.runs} run(s), medians; load averages at the "
          f"runs' starts: {', '.join(f'{r[2]:.1f}' for r in per_run)}\n")
    print("| function | einexpr out | memcpy | stream copy | of the limit | target | torch out= | einexpr ÷ torch (out) "
          "| einexpr fresh | torch fresh | einexpr ÷ torch (fresh) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for f in functions:
        e_out = med(lambda r: r[0][(f, "out")])
        memcpy = med(lambda r: r[0][(f, "limit:memcpy")])
        stream = med(lambda r: r[0][(f, "limit:stream")])
        # the limit: the faster copy of the same bytes in that run
        share = med(lambda r: min(r[0][(f, "limit:memcpy")], r[0][(f, "limit:stream")]) / r[0][(f, "out")])
        t_out = med(lambda r: r[1][(f, "out")])
        speed_out = med(lambda r: r[1][(f, "out")] / r[0][(f, "out")])
        e_fresh = med(lambda r: r[0][(f, "fresh")])
        t_fresh = med(lambda r: r[1][(f, "fresh")])
        speed_fresh = med(lambda r: r[1][(f, "fresh")] / r[0][(f, "fresh")])
        print(f"| {f} | {e_out * 1e3:.1f} ms | {memcpy * 1e3:.1f} ms | {stream * 1e3:.1f} ms | {share:.2f} | "
              f"≥ {TARGETS.get(f, 0.5)} | "
              f"{t_out * 1e3:.1f} ms | {speed_out:.2f}× | {e_fresh * 1e3:.1f} ms | {t_fresh * 1e3:.1f} ms | "
              f"{speed_fresh:.2f}× |")


if __name__ == "__main__":
    main()
