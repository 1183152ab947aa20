#!/usr/bin/python3
"""How close `--recompute auto` comes to the optimum: its choice beside an integer program's.

For each model and memory limit (a fraction of the step's peak without recomputation):
  1. `program cost --recompute auto --memory-limit M --json --recompute-bound FILE`: auto's
     choice (greedy, then branch and bound over at most --budget timelines) and the bound of
     its search space (codegen/include/einexpr/codegen/recompute.hpp, RecomputeBound): FLOPs
     made again exactly as the timeline counts them, bytes alive at each event at most what
     the timeline holds there;
  2. that bound solved as a 0-1 integer program with HiGHS (scipy.optimize.milp): the fewest
     FLOPs made again of any choice that fits, **at most auto's optimum** (a lower bound);
  3. the program's best choice K* checked on einexpr's own timeline (`--recompute checkpoints
     --checkpoint K*`): when it fits, its FLOPs equal the bound, so K* is the optimum of the
     search space and the bound is tight.
The table: auto's FLOPs, the bound, K*'s FLOPs and whether it fits, auto ÷ optimum.

    /usr/bin/python3 bench/recompute_ilp.py [--einexpr build-rel/lib/einexpr] [--budget 20000]
        [--fractions 0.95,0.9,0.85,0.8] [--time-limit 600]

Needs python3-scipy (Debian 12: scipy 1.10 with HiGHS). Checkmate (Jain et al. 2020) solves a
wider problem (any schedule of recomputation, a node made again several times) exactly; this
bounds the space einexpr searches (each dropped result made again once, just before the first
gradient that reads it), which is what "how close is auto's choice" asks.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import lil_matrix

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_recompute import GPT2, stacked  # noqa: E402  (the bench's 4-block file)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["B=4", "S=128", "T=128", "D=256", "H=8", "K=32", "F=1024", "V=1024"]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def cost(einexpr, path, sizes, more):
    rc, out, err = run([einexpr, "program", "cost", path] + sizes + ["--optimizer", "adam", "--device", "cpu",
                                                                      "--json"] + more)
    if rc != 0:
        return None, err.strip().split("\n")[0]
    return json.loads(out), None


class Program:
    """Variables (each in [0, 1]) and rows lo <= Σ coef·x <= hi; integer where asked."""

    def __init__(self):
        self.n, self.integer, self.rows = 0, [], []

    def var(self, integer):
        self.integer.append(1 if integer else 0)
        self.n += 1
        return self.n - 1

    def row(self, coefs, lo, hi):
        self.rows.append((coefs, lo, hi))


def solve(bound, time_limit):
    """The bound (recompute.hpp's RecomputeBound) as a mixed 0-1 program solved by HiGHS:
    (status, least FLOPs, its dual bound, keep per candidate, seconds)."""
    cands, stmts, points = bound["candidates"], bound["statements"], bound["points"]
    nc, ns, ne = len(cands), len(stmts), len(points)
    first = len(stmts)  # the first backward point: the forward's events come first, one a statement
    room = bound["memory_limit"] - bound["fixed_bytes"]
    if any(p["base"] > room for p in points):
        return "infeasible", None, None, None, 0.0
    m = Program()
    keep = [m.var(True) for _ in range(nc)]
    made = [m.var(True) for _ in range(ns)]
    chains = [(s, k, t) for s, k, t in bound["chains"] if s != t]
    for s, k in bound["needed"]:  # made_s >= 1 - keep_c
        m.row({made[s]: 1, keep[k]: 1}, 1, np.inf)
    for s, k, t in chains:  # made_t >= made_s - keep_c
        m.row({made[t]: 1, made[s]: -1, keep[k]: 1}, 0, np.inf)
    # made_by(s, e) at each backward point: pinned to the timeline's value by rows both ways
    # (a dropped candidate of s read by a gradient up to e, or a statement made by e reading one)
    by = {}
    for e in range(first, ne):
        for s in range(ns):
            by[s, e] = m.var(False)
            m.row({by[s, e]: 1, made[s]: -1}, -np.inf, 0)
        direct = {s: [] for s in range(ns)}
        for k, c in enumerate(cands):
            r = bound["first_reader"][k]
            if 0 <= r <= e:
                direct[c["statement"]].append(k)
                m.row({by[c["statement"], e]: 1, keep[k]: 1}, 1, np.inf)  # >= 1 - keep_c
        upper = {s: {by[s, e]: 1} for s in range(ns)}
        for s, k, t in chains:
            m.row({by[t, e]: 1, by[s, e]: -1, keep[k]: 1}, 0, np.inf)  # >= by_s - keep_c
            w = m.var(False)  # w <= by_s, w <= 1 - keep_c
            m.row({w: 1, by[s, e]: -1}, -np.inf, 0)
            m.row({w: 1, keep[k]: 1}, -np.inf, 1)
            upper[t][w] = upper[t].get(w, 0) - 1
        for s in range(ns):  # by_s <= Σ direct (1 - keep_c) + Σ w
            row = dict(upper[s])
            for k in direct[s]:
                row[keep[k]] = row.get(keep[k], 0) + 1
            m.row(row, -np.inf, len(direct[s]))
    for e, p in enumerate(points):  # base + the terms alive at e <= room
        row = {}
        for k, b in p["kept"]:
            row[keep[k]] = row.get(keep[k], 0) + b
        for k, s, b in p["read_again"]:  # z >= keep_c + made_s - by_s - 1
            z = m.var(False)
            coefs = {z: 1, keep[k]: -1, made[s]: -1}
            if e >= first:
                coefs[by[s, e]] = 1
            m.row(coefs, -1, np.inf)
            row[z] = row.get(z, 0) + b
        for k, b in p["early"]:  # z >= by_s - keep_c
            z = m.var(False)
            m.row({z: 1, by[cands[k]["statement"], e]: -1, keep[k]: 1}, 0, np.inf)
            row[z] = row.get(z, 0) + b
        if row:
            m.row(row, -np.inf, room - p["base"])
    flops = np.array([float(s["flops"]) for s in stmts])
    scale = max(flops.max(), 1.0)
    c = np.zeros(m.n)
    c[made] = flops / scale
    a = lil_matrix((len(m.rows), m.n))
    for i, (coefs, _, _) in enumerate(m.rows):
        for j, v in coefs.items():
            a[i, j] = v
    lo = [r[1] for r in m.rows]
    hi = [r[2] for r in m.rows]
    start = time.time()
    r = milp(c, constraints=LinearConstraint(a.tocsr(), lo, hi), integrality=np.array(m.integer),
             bounds=Bounds(0, 1), options={"time_limit": time_limit})
    seconds = time.time() - start
    if r.x is None:
        return ("infeasible" if r.status == 2 else r.message), None, None, None, seconds
    chosen = [r.x[v] > 0.5 for v in keep]
    dual = getattr(r, "mip_dual_bound", None)
    status = "optimal" if r.status == 0 else "time limit"
    return status, r.fun * scale, (dual * scale if dual is not None else None), chosen, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--einexpr", default=os.path.join(ROOT, "build-rel/lib/einexpr"))
    ap.add_argument("--budget", type=int, default=20000, help="auto's --search-budget")
    ap.add_argument("--fractions", default="0.95,0.9,0.85,0.8,0.7,0.6,0.5")
    ap.add_argument("--time-limit", type=float, default=600, help="HiGHS's seconds per program")
    ap.add_argument("--models", default="lecture2,gpt2_train,gpt2_train_4,gpt2_2")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="recompute_ilp.")
    four = os.path.join(tmp, "gpt2_train_4.ein")
    with open(four, "w") as f:
        f.write(stacked(4))
    models = {
        "lecture2": (os.path.join(ROOT, "examples/models/lecture2.ein"), []),
        "gpt2_train": (GPT2, SMALL),
        "gpt2_train_4": (four, ["B=32"] + SMALL[1:]),
        "gpt2_2": (os.path.join(ROOT, "examples/models/gpt2.ein"),
                   ["L=2", "B=2", "S=64", "T=64", "D=64", "H=4", "K=16", "F=256", "V=512"]),
    }
    print(f"einexpr: {args.einexpr}; auto's budget {args.budget} timelines; HiGHS time limit {args.time_limit:.0f} s")
    print()
    print("| model | limit | candidates | auto (FLOPs again, s, proved) | bound (FLOPs, s) | K* on the timeline "
          "(FLOPs, peak, fits) | auto ÷ optimum |")
    print("|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        path, sizes = models[name]
        whole, err = cost(args.einexpr, path, sizes, [])
        if whole is None:
            print(f"| {name} | — | — | {err} | | | |")
            continue
        peak = int(whole["memory"]["peak_bytes"])
        for frac in [float(x) for x in args.fractions.split(",")]:
            limit = int(peak * frac)
            bound_file = os.path.join(tmp, f"{name}_{frac}.json")
            t0 = time.time()
            auto, err = cost(args.einexpr, path, sizes, ["--recompute", "auto", "--memory-limit", str(limit),
                                                         "--search-budget", str(args.budget),
                                                         "--recompute-bound", bound_file])
            auto_s = time.time() - t0
            label = f"{frac:.2f}·P = {limit:,} B"
            with open(bound_file) as f:
                bound = json.load(f)
            status, best, dual, keep, secs = solve(bound, args.time_limit)
            if auto is None:
                found = re.search(r"smallest peak found is (\d+) bytes", err)
                auto_text = f"refused (smallest peak found {int(found.group(1)):,} B)" if found else "refused"
                auto_flops = None
            else:
                rec = auto["recompute"]
                auto_flops = int(auto["recompute_flops"])
                auto_text = f"{auto_flops:,}, {auto_s:.1f} s, {'yes' if rec.get('optimal') else 'no'}"
            if best is None:
                print(f"| {name} | {label} | {len(bound['candidates'])} | {auto_text} | {status} ({secs:.1f} s) | | |")
                continue
            lower = best if status == "optimal" else (dual if dual is not None else 0.0)
            names = [c["name"] for c, k in zip(bound["candidates"], keep) if k]
            check, err = cost(args.einexpr, path, sizes, ["--recompute", "checkpoints", "--checkpoint", ",".join(names)])
            if check is None:
                kstar = f"refused: {err[:60]}"
                optimum = None
            else:
                kflops = int(check["recompute_flops"])
                kpeak = int(check["memory"]["peak_bytes"])
                fits = kpeak <= limit
                kstar = f"{kflops:,}, {kpeak:,} B, {'fits' if fits else 'does not fit'}"
                optimum = kflops if fits and status == "optimal" and abs(kflops - best) <= 1e-6 * max(best, 1) else None
            bound_text = f"{lower:,.0f} ({status}, {secs:.1f} s)"
            if auto_flops is None:
                ratio = "auto found none; K* fits" if optimum is not None else "—"
            elif optimum is not None:
                ratio = "1 (optimal)" if auto_flops == optimum else f"{auto_flops / optimum:.3f}"
            elif lower > 0:
                ratio = f"≤ {auto_flops / lower:.3f}"
            else:
                ratio = "—"
            print(f"| {name} | {label} | {len(bound['candidates'])} | {auto_text} | {bound_text} | {kstar} | {ratio} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
