#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs the whole ctest suite.
#   scripts/test.sh                 the default build (CUDA if a toolkit is found) in build/
#   EINEXPR_CUDA=OFF scripts/test.sh   without CUDA, in build-nocuda/
# Idempotent, and fast when nothing changed (incremental build, ctest only).
#
# Then the sanitizer builds (issue 8), unless EINEXPR_SANITIZERS=0:
#   build-asan/  Debug, AddressSanitizer + UndefinedBehaviorSanitizer: every Catch2 test and
#                the fuzz corpus replays (not the install test, whose downstream project
#                is built without sanitizers)
#   build-tsan/  Debug, ThreadSanitizer: only tests/concurrency (the plan caches under 16
#                threads), with one OpenMP thread (libgomp is not TSan-instrumented)
# EINEXPR_SANITIZERS=asan or =tsan runs one of them. Arguments go to the default ctest.
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

sanitizers="${EINEXPR_SANITIZERS:-all}"
sanitized_build() {  # DIR SANITIZE TARGET...
  local dir="$1" sanitize="$2"
  shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DEINEXPR_SANITIZE="$sanitize" -DEINEXPR_CUDA=OFF \
    -DEINEXPR_BUILD_EXAMPLES=OFF -DEINEXPR_BUILD_BENCH=OFF >/dev/null
  cmake --build "$dir" -j "$jobs" "$@"
}
if [ "$sanitizers" = all ] || [ "$sanitizers" = asan ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer (build-asan)"
  sanitized_build build-asan ON
  UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE 'install|lint|cuda'
fi
if [ "$sanitizers" = all ] || [ "$sanitizers" = tsan ]; then
  echo "== ThreadSanitizer (build-tsan: tests/concurrency)"
  sanitized_build build-tsan thread --target test_concurrency
  OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir build-tsan --output-on-failure -L concurrency
fi
