#!/usr/bin/python3
"""Recomputation under a memory limit: what `--recompute auto` chooses, how close its search
comes, and a training run under the limit beside one that keeps everything, same run.

Models: examples/models/gpt2_train.ein (one GPT-2-style block with embeddings, tied head and
cross_entropy) and the same block stacked L times (this script writes that file: every block
statement and param once per layer, layer l reading layer l-1's output; the model language
has no layer loop yet). For each model and size:

  1. `program cost --json` without recomputation: the step's peak P (params, Adam's state,
     inputs, activations, gradients, temporaries);
  2. `program cost --recompute auto --memory-limit M` for each limit M asked (fractions of P),
     with --search-budget 0 (the greedy choice alone), the default (20000 timelines of branch
     and bound after it) and --big-budget: the FLOPs each makes again, whether the search
     proved its choice optimal, and how long it took; a limit no choice fits is reported with
     the smallest peak the search found;
  3. `program train --steps N --json` without recomputation and with `--recompute auto` at the
     first fitting limit: the losses (equal bit for bit or not), peak_bytes_predicted and
     peak_bytes_measured against the limit, recompute_flops, the median step time of each.

    /usr/bin/python3 bench/bench_recompute.py [--einexpr build-rel/lib/einexpr] [--steps 4]
        [--threads 2] [--big-budget 200000] [--json OUT]

Needs Debian's python3 with numpy. Inputs and params are drawn with numpy (seed 0).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
GPT2 = os.path.join(ROOT, "examples", "models", "gpt2_train.ein")
BLOCK_PARAMS = ["ln1_g", "ln1_b", "w_q", "b_q", "w_k", "w_v", "b_v", "w_o", "b_o", "ln2_g", "ln2_b", "w_fc", "b_fc",
                "w_proj", "b_proj"]
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def outside_quotes(line, fn):
    """`line` with fn applied to each identifier outside "..." strings."""
    parts = line.split('"')
    for i in range(0, len(parts), 2):
        parts[i] = IDENT.sub(lambda m: fn(m.group(0)), parts[i])
    return '"'.join(parts)


def stacked(layers):
    """gpt2_train.ein with its block (layer norm 1 .. the MLP's residual y) `layers` times."""
    lines = open(GPT2).read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("# ---- layer norm 1"))
    end = next(i for i, l in enumerate(lines) if l.startswith("y = map(h, m1"))
    made = {l.split(" = ")[0] for l in lines[start:end + 1] if re.match(r"^\w+ = ", l)}
    out = []
    for l in lines[:start]:
        m = re.match(r"^param (\w+): (.*)$", l)
        if m and m.group(1) in BLOCK_PARAMS:
            out += [f"param {m.group(1)}{k}: {m.group(2)}" for k in range(layers)]
        else:
            out.append(l)
    for k in range(layers):
        def rename(w, k=k):
            if w in made or w in BLOCK_PARAMS:
                return f"{w}{k}"
            if w == "x":
                return "x" if k == 0 else f"y{k - 1}"
            return w
        out += [outside_quotes(l, rename) for l in lines[start:end + 1] if l.strip() and not l.startswith("#")]
    out += [outside_quotes(l, lambda w: f"y{layers - 1}" if w == "y" else w) for l in lines[end + 1:]]
    return "\n".join(out) + "\n"


def run(cmd, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r


def tensors(einexpr, path, sizes):
    """{name: (role, shape, dtype)} of the inputs and params, from `program check`."""
    out = run([einexpr, "program", "check", path] + sizes).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"^\s+(\w+)\s+(input|param)\s+\[(.*)\] (\w+)", line)
        if m:
            shape = tuple(int(d.split("=")[1]) for d in m.group(3).split(", ") if d)
            found[m.group(1)] = (m.group(2), shape, m.group(4))
    return found


def write_inputs(einexpr, path, sizes, folder):
    rng = np.random.default_rng(0)
    v = int(dict(s.split("=") for s in sizes)["V"])
    args = []
    for name, (role, shape, dtype) in tensors(einexpr, path, sizes).items():
        if dtype == "i64":
            a = rng.integers(0, v, shape)
        elif name == "mask":
            a = np.triu(np.full(shape, -1e9, dtype=np.float32), 1)
        elif re.match(r"ln\w*_g\d*$", name):
            a = (1 + 0.02 * rng.standard_normal(shape)).astype(np.float32)
        else:
            a = (0.02 * rng.standard_normal(shape)).astype(np.float32)
        np.save(os.path.join(folder, name + ".npy"), a)
        args.append(f"{name}={os.path.join(folder, name + '.npy')}")
    return args


def cost(einexpr, path, sizes, more):
    t0 = time.perf_counter()
    r = run([einexpr, "program", "cost", path] + sizes + ["--optimizer", "adam", "--device", "cpu", "--json"] + more,
            check=False)
    took = time.perf_counter() - t0
    if r.returncode != 0:
        m = re.search(r"smallest peak found is (\d+)", r.stderr)
        return {"fits": False, "smallest_peak_bytes": int(m.group(1)) if m else None, "error": r.stderr.strip(),
                "search_s": took}
    j = json.loads(r.stdout)
    return {"fits": True, "peak_bytes": int(j["memory"]["peak_bytes"]), "recompute_flops": int(j["recompute_flops"]),
            "step_flops": int(j["step_flops"]), "forward_flops": int(j["forward_flops"]),
            "optimal": j["recompute"].get("optimal"), "tried": j["recompute"].get("tried"),
            "kept": j["recompute"].get("checkpoints"), "search_s": took}


def train(einexpr, path, sizes, inputs, steps, threads, more, out):
    r = run([einexpr, "program", "train", path] + sizes + inputs + ["--steps", str(steps), "--optimizer", "adam",
            "--lr", "1e-3", "--threads", str(threads), "--json", "-o", out] + more)
    j = json.loads(r.stdout)
    times = [s["time_s"] for s in j["steps"]][1:]
    return {"losses": [s["loss"] for s in j["steps"]], "median_step_s": statistics.median(times),
            "peak_bytes_predicted": j["peak_bytes_predicted"], "peak_bytes_measured": j["peak_bytes_measured"],
            "recompute_flops": int(j["recompute_flops"]), "flops_per_step": int(j["flops_per_step"]), "mfu": j["mfu"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--einexpr", default=os.path.join(ROOT, "build-rel", "lib", "einexpr"))
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--big-budget", type=int, default=200000)
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    gpt = ["S=128", "T=128", "D=256", "H=8", "K=32", "F=1024", "V=1024"]
    cases = [("gpt2_train.ein, 1 block", 1, ["B=4"] + gpt, [0.93, 0.9, 0.87]),
             ("gpt2_train.ein stacked, 4 blocks", 4, ["B=32"] + gpt, [0.5])]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for what, layers, sizes, fractions in cases:
            path = GPT2 if layers == 1 else os.path.join(tmp, f"gpt2_{layers}.ein")
            if layers > 1:
                open(path, "w").write(stacked(layers))
            full = cost(a.einexpr, path, sizes, [])
            print(f"== {what}  {' '.join(sizes)}  adam f32: no-recompute peak {full['peak_bytes']} bytes, "
                  f"step {full['step_flops'] / 1e9:.3f} GFLOP (forward {full['forward_flops'] / 1e9:.3f})")
            case = {"model": what, "sizes": sizes, "no_recompute": full, "limits": []}
            fitting = None
            for f in fractions:
                limit = int(full["peak_bytes"] * f)
                row = {"fraction": f, "limit": limit}
                for label, budget in (("greedy", 0), ("default", None), ("big", a.big_budget)):
                    more = ["--recompute", "auto", "--memory-limit", str(limit)]
                    if budget is not None:
                        more += ["--search-budget", str(budget)]
                    row[label] = cost(a.einexpr, path, sizes, more)
                case["limits"].append(row)
                parts = []
                for label in ("greedy", "default", "big"):
                    c = row[label]
                    parts.append(f"{label} " + (f"{c['recompute_flops'] / 1e6:.2f} MFLOP{' (optimal)' if c['optimal'] else ''} "
                                                f"in {c['search_s']:.2f} s" if c["fits"]
                                                else f"no fit (smallest {c['smallest_peak_bytes']})"))
                print(f"  limit {f:.2f}·P = {limit}: " + "; ".join(parts))
                if fitting is None and row["default"]["fits"]:
                    fitting = limit
            if fitting is not None:
                folder = os.path.join(tmp, f"in{layers}")
                os.makedirs(folder)
                inputs = write_inputs(a.einexpr, path, sizes, folder)
                keep = train(a.einexpr, path, sizes, inputs, a.steps, a.threads, [], os.path.join(tmp, f"keep{layers}"))
                auto = train(a.einexpr, path, sizes, inputs, a.steps, a.threads,
                             ["--recompute", "auto", "--memory-limit", str(fitting)], os.path.join(tmp, f"auto{layers}"))
                same = keep["losses"] == auto["losses"]
                print(f"  train {a.steps} steps: keep-all peak predicted {keep['peak_bytes_predicted']} measured "
                      f"{keep['peak_bytes_measured']}, {keep['median_step_s'] * 1e3:.1f} ms/step, mfu {keep['mfu']:.3f}")
                print(f"  train under {fitting}: peak predicted {auto['peak_bytes_predicted']} measured "
                      f"{auto['peak_bytes_measured']}, recompute {auto['recompute_flops'] / 1e6:.1f} MFLOP, "
                      f"{auto['median_step_s'] * 1e3:.1f} ms/step, mfu {auto['mfu']:.3f}; losses equal bit for bit: {same}")
                case["train"] = {"limit": fitting, "keep": keep, "auto": auto, "losses_equal": same}
            results.append(case)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
