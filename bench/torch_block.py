#!/usr/bin/python3
"""einexpr's transformer block beside torch's, same weights, same run, outputs compared.

The block is issue 15's GPT-2-style pre-norm block (B=4, S=128, D=256, 8 heads of 32, MLP
1024, causal): examples/models/gpt2_block_norm.ein, compiled once and run by einexpr_bench's
"block ..." workload (bench/bench_block.cpp), beside the block's matrix products alone
through OpenBLAS (limit:gemm). This script draws the weights (torch.manual_seed), writes them
as .npy files for the benchmark (EINEXPR_BLOCK_DIR), runs it, reads back the output einexpr
computed, and times torch's block written with torch.nn.functional on the same tensors at
the same thread count, in no_grad mode. Each run alternates the two; the table shows medians
over runs of per-run medians, and the largest difference between the two outputs and from
torch's float64 block.

    /usr/bin/python3 bench/torch_block.py [--bench build-rel/bench/einexpr_bench] [--runs 3]

Needs Debian's python3 with numpy and torch (python3-torch); prints a Markdown table.
"""
import argparse
import math
import os
import re
import statistics
import tempfile

import numpy as np
import torch
import torch.nn.functional as fn

from bench_runs import median_time, run_bench

THREADS = 2
AXES = {"B": 4, "S": 128, "T": 128, "D": 256, "H": 8, "K": 32, "F": 1024}
PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "models", "gpt2_block_norm.ein")


def declared_tensors(path):
    """[(name, role, shape)] of the program's inputs and params, in order."""
    out = []
    for line in open(path):
        m = re.match(r"\s*(input|param)\s+(\w+)\s*:\s*([^#]*)", line)
        if not m:
            continue
        shape = []
        for dim in re.findall(r"\([^)]*\)|\w+", m.group(3)):
            shape.append(math.prod(AXES[a] for a in dim.strip("()").split()))
        out.append((m.group(2), m.group(1), shape))
    return out


def make_weights(seed=0):
    torch.manual_seed(seed)
    t = {}
    for name, role, shape in declared_tensors(PROGRAM):
        if name == "mask":
            s = AXES["S"]
            t[name] = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        elif name == "scale":
            t[name] = torch.full((AXES["H"],), 1.0 / math.sqrt(AXES["K"]))
        else:
            v = torch.randn(shape)
            t[name] = v / math.sqrt(shape[0]) if role == "param" and len(shape) == 2 else v
    return t


def torch_block(t):
    """y of gpt2_block_norm.ein, written with torch.nn.functional (the dtype of t's tensors)."""
    B, S, D, H, K = AXES["B"], AXES["S"], AXES["D"], AXES["H"], AXES["K"]
    x = t["x"]
    ln1 = fn.layer_norm(x, (D,), t["ln1_g"], t["ln1_b"], eps=1e-5)

    def heads(w, b):
        return (ln1 @ w + b).view(B, S, H, K).transpose(1, 2)  # B H S K

    q, k, v = heads(t["w_q"], t["b_q"]), heads(t["w_k"], t["b_k"]), heads(t["w_v"], t["b_v"])
    s = (q @ k.transpose(-1, -2)) * t["scale"].view(1, H, 1, 1) + t["mask"]
    p = torch.softmax(s, dim=-1)
    o = (p @ v).transpose(1, 2).reshape(B, S, H * K)
    h = x + (o @ t["w_o"] + t["b_o"])
    ln2 = fn.layer_norm(h, (D,), t["ln2_g"], t["ln2_b"], eps=1e-5)
    g = fn.gelu(ln2 @ t["w_fc"] + t["b_fc"], approximate="tanh")
    return h + (g @ t["w_proj"] + t["b_proj"])


def run_einexpr(binary, directory, repetitions):
    """{role: median seconds, "flops:" + role: FLOPs} of one einexpr_bench run of the block."""
    rows, _ = run_bench(binary, "^block ", repetitions, 0.3, {"EINEXPR_BLOCK_DIR": directory})
    times = {}
    for (_, role, _), seconds, b in rows:
        times.setdefault(role, []).append(seconds)
        times.setdefault("flops:" + role, []).append(b["flops"])
    return {k: statistics.median(v) for k, v in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="build-rel/bench/einexpr_bench")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=30, help="torch timings per run")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    t = make_weights()
    with torch.no_grad():
        want64 = torch_block({k: v.double() for k, v in t.items()})
        want32 = torch_block(t)
    per_run = []
    with tempfile.TemporaryDirectory() as d:
        for name, v in t.items():
            np.save(os.path.join(d, name + ".npy"), v.numpy())
        for run in range(args.runs):
            load = os.getloadavg()[0]
            ein = run_einexpr(args.bench, d, 3)
            y = torch.from_numpy(np.load(os.path.join(d, "y_einexpr.npy")))
            with torch.no_grad():
                tor = median_time(lambda: torch_block(t), args.repeats)
            per_run.append((ein, tor, load, y))
            print(f"run {run + 1} of {args.runs} done (load average {load:.1f} at its start)", flush=True)

    def med(get):
        return statistics.median(get(r) for r in per_run)

    e, g, tt = med(lambda r: r[0]["run"]), med(lambda r: r[0]["limit:gemm"]), med(lambda r: r[1])
    speed = med(lambda r: r[1] / r[0]["run"])
    of_limit = med(lambda r: r[0]["limit:gemm"] / r[0]["run"])
    flops = per_run[0][0]["flops:run"]
    y = per_run[-1][3]
    d32 = (y - want32).abs().max().item()
    d64 = (y.double() - want64).abs().max().item()
    t64 = (want32.double() - want64).abs().max().item()
    print(f"\ntorch {torch.__version__}, {THREADS} threads; {args.runs} run(s), medians; load averages at the "
          f"runs' starts: {', '.join(f'{r[2]:.1f}' for r in per_run)}\n")
    print("| workload | einexpr | GEMMs alone (OpenBLAS) | of the limit | torch | einexpr ÷ torch | target "
          "| einexpr GFLOP/s | max \\|einexpr − torch f32\\| | max \\|einexpr − torch f64\\| | max \\|torch f32 − torch f64\\| |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| gpt2_block_norm B=4 S=128 D=256 H=8 F=1024 f32 | {e * 1e3:.2f} ms | {g * 1e3:.2f} ms | {of_limit:.2f} "
          f"| {tt * 1e3:.2f} ms | {speed:.2f}× | ≥ 1.2× | {flops / e / 1e9:.1f} | {d32:.2e} | {d64:.2e} | {t64:.2e} |")


if __name__ == "__main__":
    main()
