#!/usr/bin/env bash
# The GPU benchmarks of bench/cuda/README.md. bench_cuda prints a Markdown table; paste it
# into bench/RESULTS.md under the GPU's name. Without a GPU it says [SKIP] and exits 77.
#
#   scripts/bench_cuda.sh [--quick] [-- ARGS...]
#       builds Release with CUDA in $EINEXPR_BUILD_DIR (default build-gpu) and runs bench_cuda
#       here (a machine with a GPU and the build's Debian packages).
#   scripts/bench_cuda.sh --stage
#       builds as above, then copies into .device-carry/ (git-ignored) what a GPU machine
#       without the build's packages needs: bench_cuda, test_cuda (every "cuda: ..." ctest
#       entry is a test inside it) and libgomp.so.1 as a fallback. Carry .device-carry.
#   scripts/bench_cuda.sh --device [--quick] [-- ARGS...]
#       on that machine, with no build: runs what --stage left, the GPU tests first, then
#       bench_cuda; logs and JSON go to $OUT (or a new temporary folder).
#
# ARGS go to bench_cuda (--only TEXT, --spec NAME; see bench_cuda --help). --device limits
# the tests to $TEST_TIMEOUT s (default 200) and the benchmark to $BENCH_TIMEOUT s (default
# 360), so one call fits the device tool's 600 s.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
quick=()
extra=()
while (($#)); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --stage) mode=stage ;;
    --device) mode=device ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: scripts/bench_cuda.sh [--stage | --device] [--quick] [-- bench_cuda args]" >&2; exit 2 ;;
  esac
  shift
done
build="${EINEXPR_BUILD_DIR:-build-gpu}"
carry=.device-carry

build_gpu() {
  scripts/deps.sh
  # No -march=native (EINEXPR_NATIVE): the binaries may run on another machine's CPU.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEINEXPR_CUDA=ON \
    -DEINEXPR_BUILD_TESTS=ON -DEINEXPR_BUILD_BENCH=ON >/dev/null
  cmake --build "$build" -j "$(nproc)" --target bench_cuda test_cuda
}

stage() {
  rm -rf "$carry"
  mkdir -p "$carry/lib"
  cp "$build/bench/cuda/bench_cuda" "$build/tests/cuda/test_cuda" "$carry/"
  cp -L "$(g++ -print-file-name=libgomp.so.1)" "$carry/lib/"
  echo "scripts/bench_cuda.sh: staged $(du -sh "$carry" | cut -f1) in $carry/:"
  ls -l "$carry" "$carry/lib"
  echo "On the device machine (run tool, carry [\"$carry\"]):"
  echo "  scripts/bench_cuda.sh --device"
}

# The CUDA libraries the binaries need (cudart, cuBLAS, cuBLASLt: the toolkit's, matching the
# major version they were built with) where the loader does not find them by itself; the
# carried libgomp only where the machine has none. $LIB_SEARCH_ROOTS (default "/usr/local
# /usr/lib /opt") are searched.
library_path() {
  local binary="$1" dirs=() lib file
  for lib in $(ldd "$binary" | awk '/not found/ {print $1}'); do
    case "$lib" in
      libgomp.so.1) dirs+=("$PWD/$carry/lib") ;;
      *)
        # shellcheck disable=SC2086 # the roots are a space-separated list
        file="$(find ${LIB_SEARCH_ROOTS:-/usr/local /usr/lib /opt} -name "$lib" -print -quit 2>/dev/null)"
        if [ -n "$file" ]; then dirs+=("$(dirname "$file")"); else echo "scripts/bench_cuda.sh: no $lib here" >&2; fi ;;
    esac
  done
  local IFS=:
  echo "${dirs[*]}"
}

device_run() {
  [ -x "$carry/bench_cuda" ] || { echo "scripts/bench_cuda.sh: no $carry/bench_cuda; run --stage first" >&2; exit 2; }
  local out="${OUT:-$(mktemp -d)}" path status=0 rc
  path="$(library_path "$carry/bench_cuda")"
  if [ -n "$path" ]; then export LD_LIBRARY_PATH="$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
  echo "== machine (as found: nothing is changed)"
  nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv 2>&1 || true
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd "$carry/bench_cuda" | grep -E "cuda|cublas|gomp|not found" || true
  echo "== GPU tests ($carry/test_cuda; log in $out/test_cuda.txt)"
  rc=0
  timeout "${TEST_TIMEOUT:-200}" "$carry/test_cuda" >"$out/test_cuda.txt" 2>&1 || rc=$?
  tail -n 4 "$out/test_cuda.txt"
  echo "test_cuda exit status $rc"
  [ "$rc" = 0 ] || status=1
  echo "== bench_cuda ${quick[*]} ${extra[*]} (log in $out/bench.txt, JSON in $out/bench.json)"
  rc=0
  set -o pipefail
  timeout "${BENCH_TIMEOUT:-360}" "$carry/bench_cuda" "${quick[@]}" --json "$out/bench.json" "${extra[@]}" 2>&1 | tee "$out/bench.txt" ||
    rc=$?
  echo "bench_cuda exit status $rc"
  [ "$rc" = 0 ] || status=1
  return "$status"
}

case "$mode" in
  stage)
    build_gpu
    stage
    ;;
  device)
    device_run
    ;;
  run)
    build_gpu
    "$build/bench/cuda/bench_cuda" "${quick[@]}" "${extra[@]}"
    ;;
esac
