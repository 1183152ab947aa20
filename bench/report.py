#!/usr/bin/env python3
"""Turns einexpr_bench's JSON output (one file per run) into the table of bench/RESULTS.md.

Benchmark names are "<workload> | <role> | t<threads>" (bench/bench.hpp). Within each run,
a benchmark's time is the median of its repetitions (interleaved at random by Google
Benchmark), a workload's limit is its fastest limit role, and the ratio is limit time /
einexpr time (1.0 = as fast as the limit). Across runs, times and ratios are medians of the
per-run values, so a pair measured close together in time stays together. "Ratio of
minima" divides the fastest repetitions: on a machine shared with other work the times are
bimodal (a core taken away or not), and the minima compare the undisturbed runs. Standard
library only.
"""
import json
import statistics
import sys
from collections import defaultdict


def parse_name(name):
    parts = [p.strip() for p in name.split(" | ")]
    if len(parts) != 3:
        return None
    threads = parts[2].split("/")[0]
    return parts[0], parts[1], int(threads.lstrip("t"))


def load(paths):
    runs, context = [], {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        context = data.get("context", context)
        reps = defaultdict(list)  # a run's repetitions of one benchmark (interleaved)
        for b in data["benchmarks"]:
            key = parse_name(b["name"])
            if key is None or b.get("run_type") == "aggregate":
                continue
            unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
            reps[key].append((b["real_time"] * unit, b["cpu_time"] * unit, b))
        run = {}
        for key, rs in reps.items():
            b = dict(rs[0][2])
            b["cpu_seconds"] = statistics.median(r[1] for r in rs)
            b["min_seconds"] = min(r[0] for r in rs)
            run[key] = (statistics.median(r[0] for r in rs), b)
        runs.append(run)
    return runs, context


def fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def fmt_rate(b, seconds):
    flops, nbytes = b.get("flops", 0), b.get("bytes", 0)
    if flops:
        return f"{flops / seconds / 1e9:.1f} GFLOP/s"
    if nbytes:
        return f"{nbytes / seconds / 1e9:.1f} GB/s"
    return ""


def best_limit(run, workload, threads):
    limits = [(t, role) for (w, role, th), (t, _) in run.items()
              if w == workload and th == threads and role.startswith("limit:")]
    return min(limits) if limits else None


def median(xs):
    return statistics.median(xs) if xs else None


def pair_rows(runs):
    """(workload, role, threads) -> per-run einexpr times, limit times, ratios, limit names."""
    rows = defaultdict(lambda: {"t": [], "cpu": [], "limit": [], "ratio": [], "method": [], "bench": None,
                                "tmin": [], "limit_min": []})
    for run in runs:
        for (w, role, th), (t, b) in run.items():
            if role.startswith("limit:"):
                continue
            r = rows[(w, role, th)]
            r["t"].append(t)
            r["cpu"].append(b["cpu_seconds"])
            r["tmin"].append(b["min_seconds"])
            r["bench"] = b
            lim = best_limit(run, w, th)
            if lim:
                r["limit"].append(lim[0])
                r["ratio"].append(lim[0] / t)
                r["method"].append(lim[1][len("limit:"):])
                r["limit_min"].append(min(b2["min_seconds"] for (w2, role2, th2), (_, b2) in run.items()
                                          if w2 == w and th2 == th and role2.startswith("limit:")))
    return rows


def main_table(rows, order):
    out = ["| workload | einexpr | threads | einexpr time | limit (fastest method) | limit time | ratio | "
           "ratio of minima | rate | target | met |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in order:
        w, role, th = key
        r = rows[key]
        b = r["bench"]
        if role in ("call", "peak", "fma"):
            continue
        t = median(r["t"])
        method = max(set(r["method"]), key=r["method"].count) if r["method"] else "—"
        lim, ratio = median(r["limit"]), median(r["ratio"])
        target = b.get("target", 0)
        checked = th == 2 and role in ("out", "fresh")  # cold rows show the price of fresh pages
        met = "yes" if checked and ratio >= target else ("**no**" if checked else "—")
        rmin = min(r["limit_min"]) / min(r["tmin"]) if r["limit_min"] else None
        out.append(f"| {w} | {role} | {th} | {fmt_time(t)} | {method} | "
                   f"{fmt_time(lim) if lim else '—'} | {ratio:.2f} | {rmin:.2f} | {fmt_rate(b, t)} | "
                   f"{'≥ %g' % target if checked else '—'} | {met} |" if ratio is not None else
                   f"| {w} | {role} | {th} | {fmt_time(t)} | — | — | — | — | {fmt_rate(b, t)} | — | — |")
    return out


def scaling_table(runs, rows, order):
    out = ["| workload | einexpr 1 → 2 threads | limit 1 → 2 threads | einexpr, minima | limit, minima | "
           "target | met |",
           "|---|---|---|---|---|---|---|"]
    workloads = list(dict.fromkeys(w for (w, role, th) in order if th == 1 and role == "out"))
    for w in workloads:
        ein, lim = [], []
        mins = defaultdict(lambda: float("inf"))  # (role kind, threads) -> fastest repetition
        for run in runs:
            if (w, "out", 1) in run and (w, "out", 2) in run:
                ein.append(run[(w, "out", 1)][0] / run[(w, "out", 2)][0])
            l1, l2 = best_limit(run, w, 1), best_limit(run, w, 2)
            if l1 and l2:
                lim.append(l1[0] / l2[0])
            for (w2, role, th), (_, b) in run.items():
                if w2 == w and (role == "out" or role.startswith("limit:")):
                    kind = "out" if role == "out" else "limit"
                    mins[(kind, th)] = min(mins[(kind, th)], b["min_seconds"])
        s = median(ein)
        out.append(f"| {w} | {s:.2f}× | {median(lim):.2f}× | {mins[('out', 1)] / mins[('out', 2)]:.2f}× | "
                   f"{mins[('limit', 1)] / mins[('limit', 2)]:.2f}× | ≥ 1.7× | {'yes' if s >= 1.7 else '**no**'} |")
    return out


def call_table(rows, order):
    out = ["| per-call overhead | time (wall) | CPU time | fastest repetition (wall) | target | met |",
           "|---|---|---|---|---|---|"]
    for key in order:
        if key[1] != "call":
            continue
        r = rows[key]
        t, cpu, target = median(r["t"]), median(r["cpu"]), r["bench"]["target"]
        out.append(f"| {key[0]} | {fmt_time(t)} | {fmt_time(cpu)} | {fmt_time(min(r['tmin']))} | "
                   f"≤ {fmt_time(target)} | {'yes' if t <= target else '**no**'} |")
    return out


def peak_table(rows, order):
    out = ["| peak memory | allocator: beyond input + output | resident set: beyond output | target | met |",
           "|---|---|---|---|---|"]
    for key in order:
        if key[1] != "peak":
            continue
        b = rows[key]["bench"]
        extra, rss = b["allocator_extra_bytes"], b["rss_extra_bytes"]
        out.append(f"| {key[0]} | {extra / 2**20:.2f} MiB | {rss / 2**20:.2f} MiB | < 1 MiB | "
                   f"{'yes' if extra < b['target'] else '**no**'} |")
    return out


def fma_table(rows, order, context):
    """The measured FMA peak beside the 'cpu' device's computed one, and the fastest GEMM
    (einexpr, 2 threads) as a fraction of the measured peak."""
    out = ["| measured f32 FMA peak | threads | GFLOP/s | 'cpu' device's peak (device table) | "
           "fastest einexpr GEMM at 2 threads | its share of the measured peak |",
           "|---|---|---|---|---|---|"]
    gemm = [(r["bench"]["flops"] / median(r["t"]), w) for (w, role, th), r in rows.items()
            if th == 2 and role in ("out", "fresh") and r["bench"].get("flops")]
    best = max(gemm) if gemm else None
    for key in order:
        if key[1] != "fma":
            continue
        r = rows[key]
        rate = r["bench"]["flops"] / median(r["t"])
        tail = f"{best[0] / 1e9:.1f} GFLOP/s ({best[1]}) | {best[0] / rate:.2f} |" if best and key[2] == 2 else "— | — |"
        computed = float(context.get("cpu_device_peak_f32", "nan")) / 2 * key[2]  # the spec is for 2 cores
        out.append(f"| {key[0]} | {key[2]} | {rate / 1e9:.1f} | {computed / 1e9:.1f} GFLOP/s | {tail}")
    return out


def main(paths):
    runs, context = load(paths)
    rows = pair_rows(runs)
    first = runs[0] if runs else {}
    keys = dict.fromkeys(k for run in runs for k in run if not k[1].startswith("limit:"))
    order = sorted(keys, key=lambda k: (first[k][1].get("family_index", 0), k) if k in first else (1 << 30, k))
    print(f"{len(runs)} run(s), medians; GEMM backend: {context.get('einexpr_gemm_backend', '?')}; "
          f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz; "
          f"OMP_WAIT_POLICY={context.get('omp_wait_policy', '?')}; "
          f"GOMP_SPINCOUNT={context.get('gomp_spincount', '?')}; load average at the start "
          f"{', '.join(f'{x:.1f}' for x in context.get('load_avg', []))}\n")
    for table in (main_table(rows, order), scaling_table(runs, rows, order), call_table(rows, order),
                  peak_table(rows, order), fma_table(rows, order, context)):
        print("\n".join(table))
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: report.py RUN.json [RUN.json ...]")
    main(sys.argv[1:])
