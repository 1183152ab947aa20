#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs the whole ctest suite.
#   scripts/test.sh                    the default build (CUDA when a toolkit is found) in build/;
#                                      when that build has CUDA, also a build without it in
#                                      build-nocuda/ (everything must build and pass with OFF too)
#   EINEXPR_CUDA=OFF scripts/test.sh   only the build without CUDA, in build-nocuda/
#   scripts/test.sh -R parser          extra arguments go to the first ctest run
# Idempotent, and fast when nothing changed (incremental builds, ctest only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs="$(nproc)"

# build_and_test DIR CUDA [ctest args...]
build_and_test() {
  local dir="$1" cuda="$2"
  shift 2
  echo "== scripts/test.sh: $dir (EINEXPR_CUDA=$cuda)"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEINEXPR_CUDA="$cuda" >/dev/null
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@"
}

cuda="${EINEXPR_CUDA:-AUTO}"
build="${EINEXPR_BUILD_DIR:-build}"
if [ "$cuda" = OFF ] && [ -z "${EINEXPR_BUILD_DIR:-}" ]; then build=build-nocuda; fi
build_and_test "$build" "$cuda" "$@"
if [ "$cuda" != OFF ] && grep -q "has_cuda = true" "$build/generated/einexpr/config.hpp"; then
  build_and_test build-nocuda OFF
fi
