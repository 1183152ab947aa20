#!/usr/bin/python3
"""`einexpr program train` beside torch eager's identical training step, same weights, same run.

Two models of examples/models/, f32, Adam (torch.optim.Adam's hyperparameters on both sides):

  - lecture2.ein at its file's sizes (B=1024 D=256 E=256 K=64): loss = mean(square(x w1 w2));
  - gpt2_train.ein, the 1-layer GPT-2-style language model (token ids, get_at embeddings,
    layer_norm, causal attention with the mask an input, GELU MLP, the head tied to wte,
    cross_entropy) at B=4 S=T=128 D=256 H=8 K=32 F=1024 and V=1024 (--vocab). The file's
    score scale is the number 1/sqrt(8) whatever K is; torch uses the same number (its twin,
    tests/lib/data/make_train_torch.py, whose model code this follows).

For each model the script draws the inputs and initial params with numpy, writes them as .npy
files to a temporary folder, runs `einexpr program train ... --steps N --json --threads T`,
and in the same run trains torch's model (torch.set_num_threads(T)) from the same values for
the same N steps, alternating the two for --rounds rounds. Each torch step is
zero_grad(set_to_none=True), the forward, loss.backward(), opt.step(). It prints per model:

  - the median step time of each (the first step of every round skipped) and torch ÷ einexpr;
  - einexpr's flops_per_step, roofline_time_s and mfu (as its JSON prints them: against the
    'cpu' device the CLI uses, i.e. the calibration cached in ~/.cache/einexpr or the
    $EINEXPR_CPU_DEVICE file given by --cpu-device), the median step's MFU against that peak,
    and whether any step ran faster than the roofline bound;
  - einexpr's peak_bytes_predicted and peak_bytes_measured;
  - torch's peak for one step: after a warm-up step (so Adam's state exists), the grads set
    to None, then one step (forward, backward, opt.step) under torch.profiler with
    profile_memory=True; the peak is the bytes live before the step that the training holds
    (params and Adam's state: exp_avg, exp_avg_sq, step) plus the highest running sum of the
    CPU allocations and frees the profiler recorded during the step (events at the same
    microsecond: frees first, which can only lower torch's figure). Inputs are counted on
    neither side (einexpr's peak is what the trainer allocates; the inputs are the caller's);
  - the largest relative difference between the two runs' losses over the steps.

    /usr/bin/python3 bench/bench_train.py [--einexpr build-rel/lib/einexpr] [--steps 30]
        [--rounds 2] [--models lecture2,gpt2] [--threads 2] [--cpu-device FILE | --calibrate N]
        [--quiet-wait S] [--json OUT]

On a 2-vCPU machine torch's step time depends several-fold on libgomp's spinning beside
OpenBLAS's threads: set GOMP_SPINCOUNT for the whole command (e.g. 10000 or 0) and say which;
einexpr's own thread pool ignores it. Needs Debian's python3 with numpy and torch (python3-torch).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MODELS_DIR = os.path.join(ROOT, "examples", "models")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib", "data"))
import make_train_torch  # noqa: E402  (gpt2_train.ein's torch twin, tests/lib/data/)

GPT2_MASKED = make_train_torch.GPT2_MASKED  # the mask above the diagonal (finite, as the twin's)


def default_cli():
    for build in ("build-rel", "build"):
        path = os.path.join(ROOT, build, "lib", "einexpr")
        if os.path.exists(path):
            return path
    return os.path.join(ROOT, "build", "lib", "einexpr")


# ---- the models: (sizes, [(name, kind, numpy array)] in the file's declaration order, torch forward) ----


def lecture2_model(args):
    sizes = {"B": 1024, "D": 256, "E": 256, "K": 64}
    B, D, E, K = sizes["B"], sizes["D"], sizes["E"], sizes["K"]
    r = np.random.default_rng(2)
    values = [
        ("x", "input", r.standard_normal((B, D)).astype(np.float32)),
        ("w1", "param", (r.standard_normal((D, E)) / math.sqrt(D)).astype(np.float32)),
        ("w2", "param", (r.standard_normal((E, K)) / math.sqrt(E)).astype(np.float32)),
    ]

    def forward(t):
        h1 = t["x"] @ t["w1"]
        h2 = h1 @ t["w2"]
        return torch.square(h2).mean()

    return "lecture2.ein", sizes, values, forward


def gpt2_model(args):
    sizes = {"B": 4, "S": 128, "T": 128, "D": 256, "H": 8, "K": 32, "F": 1024, "V": args.vocab}
    B, S, D, H, K, F_, V = (sizes[a] for a in ("B", "S", "D", "H", "K", "F", "V"))
    r = np.random.default_rng(3)

    def rn(*shape, scale):
        return (r.standard_normal(shape) * scale).astype(np.float32)

    tok = r.integers(0, V, (B, S), dtype=np.int64)
    tgt = np.empty_like(tok)
    tgt[:, :-1] = tok[:, 1:]  # the next token; the last position's target is drawn
    tgt[:, -1] = r.integers(0, V, (B,), dtype=np.int64)
    mask = np.triu(np.full((S, S), GPT2_MASKED, dtype=np.float32), k=1)
    values = [
        ("tok", "input", tok),
        ("tgt", "input", tgt),
        ("mask", "input", mask),
        ("wte", "param", rn(V, D, scale=0.02)),
        ("wpe", "param", rn(S, D, scale=0.01)),
        ("ln1_g", "param", 1 + rn(D, scale=0.1)),
        ("ln1_b", "param", rn(D, scale=0.1)),
        ("w_q", "param", rn(D, H * K, scale=0.02)),
        ("b_q", "param", rn(H * K, scale=0.02)),
        ("w_k", "param", rn(D, H * K, scale=0.02)),
        ("w_v", "param", rn(D, H * K, scale=0.02)),
        ("b_v", "param", rn(H * K, scale=0.02)),
        ("w_o", "param", rn(H * K, D, scale=0.02)),
        ("b_o", "param", rn(D, scale=0.02)),
        ("ln2_g", "param", 1 + rn(D, scale=0.1)),
        ("ln2_b", "param", rn(D, scale=0.1)),
        ("w_fc", "param", rn(D, F_, scale=0.02)),
        ("b_fc", "param", rn(F_, scale=0.02)),
        ("w_proj", "param", rn(F_, D, scale=0.02)),
        ("b_proj", "param", rn(D, scale=0.02)),
        ("lnf_g", "param", 1 + rn(D, scale=0.1)),
        ("lnf_b", "param", rn(D, scale=0.1)),
    ]

    def forward(t):  # the torch twin the tests' references come from, at these sizes
        return make_train_torch.gpt2_forward(t, sizes)

    return "gpt2_train.ein", sizes, values, forward


MODELS = {"lecture2": lecture2_model, "gpt2": gpt2_model}


# ---- einexpr ----


def run_einexpr(args, model_file, sizes, files, out_dir):
    cmd = [args.einexpr, "program", "train", os.path.join(MODELS_DIR, model_file)]
    cmd += [f"{name}={path}" for name, path in files]
    cmd += [f"{a}={n}" for a, n in sizes.items()]
    cmd += ["--steps", str(args.steps), "--optimizer", "adam", "--lr", repr(args.lr),
            "--betas", f"{args.beta1!r},{args.beta2!r}", "--eps", repr(args.eps),
            "--weight-decay", repr(args.weight_decay), "--dtype", "f32", "--threads", str(args.threads),
            "-o", out_dir, "--json"]
    env = dict(os.environ)
    if args.cpu_device:
        env["EINEXPR_CPU_DEVICE"] = os.path.abspath(args.cpu_device)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"einexpr failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return json.loads(p.stdout), cmd


def calibrate(args, runs, path):
    """Measures the 'cpu' device `runs` times (each `einexpr devices` in a fresh private
    $XDG_CACHE_HOME: the fastest of up to 15 tries per figure), keeps each figure's largest
    value (load only slows a measurement) and writes them as a device file at `path`."""
    best = None
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="bench_train_cal_") as cache:
            env = dict(os.environ, XDG_CACHE_HOME=cache)
            env.pop("EINEXPR_CPU_DEVICE", None)
            subprocess.run([args.einexpr, "devices"], capture_output=True, text=True, env=env, check=True)
            with open(os.path.join(cache, "einexpr", "cpu_device.json")) as f:
                d = json.load(f)["device"]
        if best is None:
            best = d
        else:
            best["bandwidth"] = max(best["bandwidth"], d["bandwidth"])
            for k, v in d["peak_flops"].items():
                best["peak_flops"][k] = max(best["peak_flops"][k], v)
    best["description"] = f"the largest of {runs} calibrations by bench/bench_train.py --calibrate"
    best["source"] = (f"bench/bench_train.py: each figure the largest of {runs} runs of `einexpr devices` in a "
                      f"private cache: {best['peak_flops']['f32'] / 1e9:.1f} GFLOP/s f32, "
                      f"{best['peak_flops']['f64'] / 1e9:.1f} f64, {best['bandwidth'] / 1e9:.1f} GB/s")
    with open(path, "w") as f:
        json.dump([best], f, indent=1)
    return path


def cpu_device_line(args):
    env = dict(os.environ)
    if args.cpu_device:
        env["EINEXPR_CPU_DEVICE"] = os.path.abspath(args.cpu_device)
    p = subprocess.run([args.einexpr, "devices"], capture_output=True, text=True, env=env)
    for line in p.stdout.splitlines():
        if line.strip().startswith("cpu ") or line.strip().startswith("cpu:"):
            return line.strip()
    return "(no cpu line in `einexpr devices`)"


# ---- torch ----


def torch_state(values):
    t, params = {}, []
    for name, kind, v in values:
        x = torch.from_numpy(v.copy())
        if kind == "param":
            x.requires_grad_(True)
            params.append(x)
        t[name] = x
    return t, params


def make_adam(params, args):
    return torch.optim.Adam(params, lr=args.lr, betas=(args.beta1, args.beta2), eps=args.eps,
                            weight_decay=args.weight_decay, amsgrad=False)


def torch_train(args, values, forward):
    """[(loss, seconds)] for args.steps steps from the initial values."""
    t, params = torch_state(values)
    opt = make_adam(params, args)
    out = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = forward(t)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        out.append((loss.item(), dt))
    return out


def nbytes(x):
    return x.numel() * x.element_size()


def torch_peak(args, values, forward):
    """torch's peak bytes for one step, after a warm-up step: {held, step_peak, peak}."""
    from torch.profiler import ProfilerActivity, profile

    t, params = torch_state(values)
    opt = make_adam(params, args)
    opt.zero_grad(set_to_none=True)
    forward(t).backward()
    opt.step()
    opt.zero_grad(set_to_none=True)  # the grads freed before the step, as the timed steps do
    held = sum(nbytes(p) for p in params)
    for st in opt.state.values():
        held += sum(nbytes(v) for v in st.values() if torch.is_tensor(v))
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        loss = forward(t)
        loss.backward()
        opt.step()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events = [(e.start_us(), e.nbytes()) for e in events if str(e.device_type()).endswith("CPU")]
    events.sort(key=lambda e: (e[0], e[1]))  # the same microsecond: frees first
    run = step_peak = 0
    for _, b in events:
        run += b
        step_peak = max(step_peak, run)
    return {"held": held, "step_peak": step_peak, "peak": held + step_peak, "events": len(events),
            "net": run}


def cpu_idle(seconds):
    """The share of all CPUs' time that was idle over the next `seconds` (Linux /proc/stat)."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return v[3] + v[4], sum(v)
    i0, t0 = sample()
    time.sleep(seconds)
    i1, t1 = sample()
    return (i1 - i0) / max(t1 - t0, 1)


def wait_quiet(limit_s):
    """Waits (at most limit_s) until the CPUs were >= 90% idle over 1 s; returns that idle share."""
    start = time.time()
    while True:
        idle = cpu_idle(1.0)
        if idle >= 0.9 or time.time() - start >= limit_s:
            return idle


# ---- the report ----


def mib(b):
    return f"{b / 2**20:.2f} MiB"


def bench_model(args, key):
    model_file, sizes, values, forward = MODELS[key](args)
    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        files = []
        for name, _, v in values:
            path = os.path.join(tmp, name + ".npy")
            np.save(path, v)
            files.append((name, path))
        e_steps, t_steps, e_json, loads, per_round = [], [], None, [], []
        rel = 0.0
        idles = []
        for r in range(args.rounds):
            if args.quiet_wait > 0:
                idles.append(wait_quiet(args.quiet_wait))
            loads.append(os.getloadavg()[0])
            j, cmd = run_einexpr(args, model_file, sizes, files, os.path.join(tmp, f"out{r}"))
            loads.append(os.getloadavg()[0])
            tt = torch_train(args, values, forward)
            e_json = e_json or j
            e_steps += [s["time_s"] for s in j["steps"][1:]]
            t_steps += [s for _, s in tt[1:]]
            per_round.append((statistics.median(s["time_s"] for s in j["steps"][1:]),
                              statistics.median(s for _, s in tt[1:])))
            for s, (tl, _) in zip(j["steps"], tt):
                rel = max(rel, abs(s["loss"] - tl) / max(abs(tl), 1e-30))
            if r == 0:
                first_losses = ([s["loss"] for s in j["steps"]], [tl for tl, _ in tt])
        peak = torch_peak(args, values, forward)
        loads.append(os.getloadavg()[0])
    e_med, t_med = statistics.median(e_steps), statistics.median(t_steps)
    flops = e_json["flops_per_step"]
    roof = e_json["roofline_time_s"]
    mfu_med = e_json["mfu"] * (statistics.mean(s["time_s"] for s in e_json["steps"]) / e_med)
    return {
        "model": model_file, "sizes": sizes, "steps": args.steps, "rounds": args.rounds,
        "command": " ".join(c.replace(tmp, "$DIR").replace(ROOT + "/", "") for c in cmd),
        "einexpr_median_s": e_med, "einexpr_min_s": min(e_steps), "torch_median_s": t_med,
        "torch_min_s": min(t_steps), "speedup": t_med / e_med,
        "flops_per_step": flops, "roofline_time_s": roof, "mfu_json": e_json["mfu"], "mfu_median": mfu_med,
        "steps_below_roofline": sum(1 for s in e_steps if roof is not None and s < roof),
        "steps_timed": len(e_steps),
        "peak_bytes_predicted": e_json["peak_bytes_predicted"], "peak_bytes_measured": e_json["peak_bytes_measured"],
        "torch_peak": peak, "loss_max_rel_diff": rel, "losses_first_round": first_losses,
        "loads": loads, "per_round_medians_s": per_round, "idle_before_rounds": idles,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--einexpr", default=default_cli(), help="the CLI (default: build-rel's, else build's)")
    ap.add_argument("--models", default="lecture2,gpt2")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2, help="einexpr then torch, this many times")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=1024, help="gpt2_train's V")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.999)
    ap.add_argument("--eps", type=float, default=1e-8)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--cpu-device", help="a device file for einexpr's 'cpu' entry ($EINEXPR_CPU_DEVICE), "
                    "e.g. tests/support/cpu_device.json; default: the CLI's measured, cached calibration")
    ap.add_argument("--quiet-wait", type=float, default=0, metavar="S",
                    help="before each round wait (at most S seconds) until the CPUs were >= 90%% idle over 1 s")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    ap.add_argument("--calibrate", type=int, default=0, metavar="N",
                    help="measure einexpr's 'cpu' device N times (private caches), keep each figure's largest, and "
                    "use that as --cpu-device (the file is kept beside --json, or in the temporary folder)")
    args = ap.parse_args()
    if args.steps < 2 or args.rounds < 1:
        ap.error("--steps must be at least 2 (each round's first step is skipped) and --rounds at least 1")
    torch.set_num_threads(args.threads)
    if args.calibrate > 0:
        path = (args.json + ".cpu_device.json") if args.json else os.path.join(tempfile.mkdtemp(), "cpu_device.json")
        args.cpu_device = calibrate(args, args.calibrate, path)

    results = [bench_model(args, key) for key in args.models.split(",")]
    print(f"einexpr: {args.einexpr}; torch {torch.__version__} ({torch.get_num_threads()} threads); "
          f"{args.threads} threads; {args.steps} steps x {args.rounds} rounds; Adam lr {args.lr} betas "
          f"{args.beta1},{args.beta2} eps {args.eps} wd {args.weight_decay}; f32")
    print(f"einexpr's cpu device: {cpu_device_line(args)}" + (f" ({args.cpu_device})" if args.cpu_device else ""))
    print()
    print("| model | einexpr step (median; min) | torch step (median; min) | torch ÷ einexpr | FLOP/step "
          "| roofline | steps below it | mfu (JSON, mean step) | mfu (median step) | peak predicted | peak measured "
          "| torch peak (held + step) | max loss rel diff | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        tp = r["torch_peak"]
        roof = "n/a" if r["roofline_time_s"] is None else f"{r['roofline_time_s'] * 1e3:.2f} ms"
        print(f"| {r['model']} | {r['einexpr_median_s'] * 1e3:.2f} ms; {r['einexpr_min_s'] * 1e3:.2f} | "
              f"{r['torch_median_s'] * 1e3:.2f} ms; {r['torch_min_s'] * 1e3:.2f} | {r['speedup']:.2f}× | "
              f"{r['flops_per_step'] / 1e6:.1f} M | {roof} | {r['steps_below_roofline']}/{r['steps_timed']} | "
              f"{r['mfu_json']:.3f} | {r['mfu_median']:.3f} | {mib(r['peak_bytes_predicted'])} | "
              f"{mib(r['peak_bytes_measured'])} | {mib(tp['peak'])} ({mib(tp['held'])} + {mib(tp['step_peak'])}) | "
              f"{r['loss_max_rel_diff']:.2e} | {', '.join(f'{l:.2f}' for l in r['loads'])} |")
    print()
    for r in results:
        e, t = r["losses_first_round"]
        print(f"{r['model']} {' '.join(f'{a}={n}' for a, n in r['sizes'].items())}: losses (einexpr / torch), "
              f"first round: step 1 {e[0]:.6f} / {t[0]:.6f}, step {len(e)} {e[-1]:.6f} / {t[-1]:.6f}")
        print("  each round's medians, einexpr / torch: " +
              ", ".join(f"{a * 1e3:.2f} / {b * 1e3:.2f} ms" for a, b in r["per_round_medians_s"]) +
              (" (CPUs idle before the rounds: " + ", ".join(f"{i:.0%}" for i in r["idle_before_rounds"]) + ")"
               if r["idle_before_rounds"] else ""))
        tp = r["torch_peak"]
        print(f"  peak bytes: einexpr predicted {r['peak_bytes_predicted']}, measured {r['peak_bytes_measured']}; "
              f"torch {tp['peak']} = held {tp['held']} + the step's highest running allocation {tp['step_peak']} "
              f"({tp['events']} allocation events, net {tp['net']})")
        print(f"  command: {r['command']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
