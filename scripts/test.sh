#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs the whole ctest suite.
#   scripts/test.sh                 the default build (CUDA if a toolkit is found) in build/
#   EINEXPR_CUDA=OFF scripts/test.sh   without CUDA, in build-nocuda/
# Idempotent, and fast when nothing changed (incremental build, ctest only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cuda="${EINEXPR_CUDA:-AUTO}"
build="${EINEXPR_BUILD_DIR:-build}"
if [ "$cuda" = OFF ] && [ -z "${EINEXPR_BUILD_DIR:-}" ]; then build=build-nocuda; fi
jobs="$(nproc)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEINEXPR_CUDA="$cuda" >/dev/null
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" "$@"
