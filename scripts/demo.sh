#!/usr/bin/env bash
# Installs what is missing, builds Release and runs the lecture demo (examples/lecture):
# the seeds' lecture on resource accounting, every number computed by einexpr on this
# machine, and two roofline plots written to build-release/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
build="${EINEXPR_BUILD_DIR:-build-release}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEINEXPR_NATIVE=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target example_lecture
mkdir -p "$build/demo"
"$build/examples/example_lecture" "$build/demo"
