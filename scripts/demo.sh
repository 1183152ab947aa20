#!/usr/bin/env bash
# Installs what is missing, builds Release and runs the lecture demo (examples/lecture).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build="${EINEXPR_BUILD_DIR:-build-release}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEINEXPR_NATIVE=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target example_tensors
"$build/examples/example_tensors"
