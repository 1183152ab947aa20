#!/usr/bin/python3
"""`program run` of a zoo model beside torch eager's same model, same weights, same run, outputs compared.

GPT-2 small's forward with its loss (examples/models/gpt2.ein: 12 layers, D=768, 12 heads of
64, MLP 3072, V=50257, learned positions, the head tied to wte) at B=1, S=T=1024 in f32, on 2
threads. The script draws the weights (numpy, seed 0: matrices and tables ~ N(0, 0.02²), gains
~ 1 + N(0, 0.1²), biases ~ N(0, 0.02²), random token ids and targets, the causal mask with -inf
above the diagonal), writes them as .npy files, runs einexpr_bench's "model gpt2.ein" workload
(bench/bench_block.cpp: the file compiled once into a CompiledProgram, then run; its loss
written back), and times torch's model (tests/lib/data/make_train_torch.py's gpt2l_forward,
written with torch.nn.functional, no_grad) on the same tensors at the same thread count.
Each run alternates the two; the table shows medians over runs of per-run medians, the
losses' difference, and each from torch's float64 loss.

    /usr/bin/python3 bench/torch_zoo.py [--bench build-rel/bench/einexpr_bench] [--runs 3] [--repeats 3]

Needs Debian's python3 with numpy and torch (python3-torch); prints a Markdown table.
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np
import torch

from bench_runs import median_time, run_bench

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib", "data"))
import make_train_torch  # noqa: E402  (gpt2.ein's torch twin)

THREADS = 2
AXES = {"L": 12, "B": 1, "S": 1024, "T": 1024, "D": 768, "H": 12, "K": 64, "F": 3072, "V": 50257}
PROGRAM = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "models", "gpt2.ein"))
VECTORS_ONE = {"ln1_g", "ln2_g", "lnf_g"}  # gains: around 1


def make_weights(seed=0):
    """{name: numpy array} of gpt2.ein's inputs and params at AXES, in its declaration order."""
    rng = np.random.default_rng(seed)
    L, B, S, D, H, K, F, V = (AXES[a] for a in "L B S D H K F V".split())
    hk = H * K
    shapes = {"wte": (V, D), "wpe": (S, D), "ln1_g": (L, D), "ln1_b": (L, D), "w_q": (L, D, hk), "b_q": (L, hk),
              "w_k": (L, D, hk), "b_k": (L, hk), "w_v": (L, D, hk), "b_v": (L, hk), "w_o": (L, hk, D), "b_o": (L, D),
              "ln2_g": (L, D), "ln2_b": (L, D), "w_fc": (L, D, F), "b_fc": (L, F), "w_proj": (L, F, D),
              "b_proj": (L, D), "lnf_g": (D,), "lnf_b": (D,)}
    out = {"tok": rng.integers(0, V, (B, S), dtype=np.int64), "tgt": rng.integers(0, V, (B, S), dtype=np.int64),
           "mask": np.triu(np.full((S, S), -np.inf, dtype=np.float32), k=1)}
    for name, shape in shapes.items():
        if name in VECTORS_ONE:
            out[name] = (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            out[name] = (0.02 * rng.standard_normal(shape)).astype(np.float32)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="build-rel/bench/einexpr_bench")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3, help="timings of each per run")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    w = make_weights()
    t32 = {k: torch.from_numpy(v) for k, v in w.items()}
    t64 = {k: (v.double() if v.is_floating_point() else v) for k, v in t32.items()}
    with torch.no_grad():
        want64 = make_train_torch.gpt2l_forward(t64, AXES).item()
        want32 = make_train_torch.gpt2l_forward(t32, AXES).item()
    per_run = []
    with tempfile.TemporaryDirectory() as d:
        for name, v in w.items():
            np.save(os.path.join(d, name + ".npy"), v)
        env = {"EINEXPR_MODEL_FILE": PROGRAM, "EINEXPR_MODEL_DIR": d,
               "EINEXPR_MODEL_AXES": " ".join(f"{a}={n}" for a, n in AXES.items())}
        for run in range(args.runs):
            load = os.getloadavg()[0]
            rows, _ = run_bench(args.bench, "^model ", args.repeats, 0.3, env)
            ein = statistics.median(seconds for (_, role, _), seconds, _ in rows if role == "run")
            flops = rows[0][2]["flops"]
            loss = float(np.load(os.path.join(d, "out_einexpr.npy")))
            with torch.no_grad():
                tor = median_time(lambda: make_train_torch.gpt2l_forward(t32, AXES), args.repeats)
            per_run.append((ein, tor, load, loss))
            print(f"run {run + 1} of {args.runs} done (load average {load:.1f} at its start)", flush=True)
    e = statistics.median(r[0] for r in per_run)
    tt = statistics.median(r[1] for r in per_run)
    speed = statistics.median(r[1] / r[0] for r in per_run)
    loss = per_run[-1][3]
    print(f"\ntorch {torch.__version__}, {THREADS} threads; {args.runs} run(s), medians; load averages at the runs' "
          f"starts: {', '.join(f'{r[2]:.1f}' for r in per_run)}\n")
    print("| workload | einexpr | torch | torch ÷ einexpr | target | einexpr GFLOP/s | einexpr loss | torch f32 loss "
          "| torch f64 loss |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| gpt2.ein forward + loss, GPT-2 small, B=1 S=1024 f32 | {e:.3f} s | {tt:.3f} s | {speed:.2f}× | ≥ 1.2× "
          f"| {flops / e / 1e9:.1f} | {loss:.7f} | {want32:.7f} | {want64:.7f} |")


if __name__ == "__main__":
    main()
