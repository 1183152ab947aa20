"""What torch_maps.py and torch_block.py share: timing a Python call, and running einexpr_bench
on a filter and reading its JSON (one entry per repetition, aggregates left out)."""
import json
import os
import statistics
import subprocess
import tempfile
import time

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def median_time(f, repeats):
    """Median wall seconds of f() over `repeats` calls, after one untimed call."""
    f()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_bench(binary, name_filter, repetitions, min_time, env=None):
    """[(name parts split at ' | ', seconds, benchmark entry)] of one einexpr_bench run, and its context."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([binary, f"--benchmark_filter={name_filter}", f"--benchmark_repetitions={repetitions}",
                        f"--benchmark_min_time={min_time}", f"--benchmark_out={out.name}",
                        "--benchmark_out_format=json"],
                       check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **(env or {})))
        data = json.load(open(out.name))
    rows = [([p.strip() for p in b["name"].split(" | ")], b["real_time"] * UNIT[b["time_unit"]], b)
            for b in data["benchmarks"] if b.get("run_type") != "aggregate"]
    return rows, data.get("context", {})
