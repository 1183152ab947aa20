#!/usr/bin/env bash
# Installs what is missing and builds, in one Release folder (build-release), everything the
# README uses: the einexpr tool, the Python module (where python3-dev, pybind11-dev and numpy
# are there), the examples and the lecture demo; runs the lecture demo (the seeds' lecture on
# resource accounting, every number computed by einexpr on this machine, and two roofline
# plots written to build-release/demo/); then prints how to use what it built.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build="${EINEXPR_BUILD_DIR:-build-release}"
# Debian's python3 has numpy; a python3 without it may come first on PATH.
python=/usr/bin/python3
[ -x "$python" ] || python="$(command -v python3 || true)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEINEXPR_NATIVE=ON \
  -DEINEXPR_PYTHON=AUTO ${python:+-DPython3_EXECUTABLE="$python"} \
  -DEINEXPR_BUILD_EXAMPLES=ON -DEINEXPR_BUILD_TESTS=OFF -DEINEXPR_BUILD_BENCH=OFF >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
grep -E '^-- einexpr' "$log" || true  # what was found: CUDA, the GEMM library, the Python module
cmake --build "$build" -j "$(nproc)"
mkdir -p "$build/demo"
"$build/examples/example_lecture" "$build/demo"
root="$(pwd)"
echo
echo "Built in $build/ (scripts/demo.sh again rebuilds what changed):"
echo "  the einexpr tool       $build/lib/einexpr"
echo "  the examples           $build/examples/example_*"
echo "  the lecture's plots    $build/demo/lecture_roofline_h100.svg, lecture_roofline_cpu.svg"
echo "To use them from this shell:"
echo "  export PATH=\"$root/$build/lib:\$PATH\""
if ls "$build"/python/einexpr/_einexpr*.so >/dev/null 2>&1; then
  echo "  export PYTHONPATH=\"$root/$build/python\"    # then: $python -c 'import einexpr'"
else
  echo "  (no Python module: the 'einexpr:' lines above say which package it lacks)"
fi
