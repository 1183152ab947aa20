#!/usr/bin/env bash
# Builds Release for this machine (-march=native) and prints the benchmark table: each
# einexpr workload beside its limit measured in the same run (bench/report.py).
#   scripts/bench.sh                 3 runs of 3 interleaved repetitions, medians (~10 minutes)
#   scripts/bench.sh --quick         1 run, shorter minimum times
#   scripts/bench.sh -- ARGS...      ARGS go to einexpr_bench (e.g. --benchmark_filter=reduce)
# Environment: EINEXPR_BUILD_DIR (default build-rel), EINEXPR_BLAS (openblas|eigen),
# BENCH_RUNS, BENCH_JSON_DIR (keep the runs' JSON there), GOMP_SPINCOUNT (default 10000
# unless OMP_WAIT_POLICY is set; GOMP_SPINCOUNT= keeps libgomp's default), OMP_WAIT_POLICY.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${BENCH_RUNS:-3}"
reps=3
min_time=0.2
extra=()
while (($#)); do
  case "$1" in
    --quick) runs="${BENCH_RUNS:-1}"; reps=1; min_time=0.05 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: scripts/bench.sh [--quick] [-- einexpr_bench args]" >&2; exit 2 ;;
  esac
  shift
done
scripts/deps.sh
build="${EINEXPR_BUILD_DIR:-build-rel}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEINEXPR_NATIVE=ON -DEINEXPR_CUDA=OFF \
  -DEINEXPR_BUILD_BENCH=ON -DEINEXPR_BUILD_TESTS=OFF -DEINEXPR_BUILD_EXAMPLES=OFF \
  ${EINEXPR_BLAS:+-DEINEXPR_BLAS=$EINEXPR_BLAS} >/dev/null
cmake --build "$build" -j "$(nproc)" --target einexpr_bench
# How long an idle OpenMP thread spins before it sleeps: einexpr's kernels run on its own pool
# (runtime/parallel.hpp), but the limits beside them (bench/harness.cpp: memcpy, read-sum,
# fill split over OpenMP threads) and the FMA probe use OpenMP. libgomp's default (300000 spins,
# or forever with OMP_WAIT_POLICY=active) takes the core a partner needs when other work
# shares the 2 cores; OMP_WAIT_POLICY=passive (no spin) pays a wake-up at every parallel
# region (the 1024x256x64 GEMM: 214 µs passive, 167 µs with 10000 spins, measured here).
# A short spin has neither cost (bench/RESULTS.md measures all three).
if [ -z "${OMP_WAIT_POLICY:-}" ]; then export GOMP_SPINCOUNT="${GOMP_SPINCOUNT-10000}"; fi
json="${BENCH_JSON_DIR:-$(mktemp -d)}"
mkdir -p "$json"
for ((i = 1; i <= runs; i++)); do
  echo "scripts/bench.sh: run $i of $runs" >&2
  "$build/bench/einexpr_bench" --benchmark_min_time="$min_time" --benchmark_repetitions="$reps" \
    --benchmark_enable_random_interleaving=true --benchmark_out="$json/run$i.json" \
    --benchmark_out_format=json "${extra[@]}" >/dev/null
done
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB;" \
  "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u '+%Y-%m-%d %H:%M UTC')"
python3 bench/report.py "$json"/run*.json
