#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs the whole ctest suite.
#   scripts/test.sh                    the default build (CUDA when a toolkit is found, MPI when
#                                      Open MPI is) in build/; everything must also build and
#                                      pass without CUDA and without MPI: the ASan build below is
#                                      that build (or, with EINEXPR_SANITIZERS=0|tsan and a CUDA
#                                      build/, build-nocuda/)
#   EINEXPR_CUDA=OFF scripts/test.sh   only the build without CUDA, in build-nocuda/
#   scripts/test.sh -R parser          extra arguments go to the first ctest run
# These builds include the Python module where its packages are installed (EINEXPR_PYTHON=AUTO,
# built with /usr/bin/python3 or $EINEXPR_PYTHON_EXE): its pytest run and doctests are ctest's
# "python" label. Where a package is missing, configuring prints what and skips the module.
# Idempotent, and fast when nothing changed (incremental builds, ctest only).
#
# Then the sanitizer builds, unless EINEXPR_SANITIZERS=0 (=asan or =tsan runs one of them):
#   build-asan/  Debug, AddressSanitizer + UndefinedBehaviorSanitizer, without CUDA and MPI:
#                every Catch2 test and the fuzz corpus replays (not the install test, whose
#                downstream project is built without sanitizers). Tests whose work is many
#                repetitions of the same code run fewer of them here (test::sanitized)
#   build-tsan/  Debug, ThreadSanitizer, built with clang (g++ where clang cannot be installed):
#                only tests/concurrency (the plan caches under 16 threads), with one OpenMP
#                thread (the OpenMP runtime is not TSan-instrumented). It also builds the
#                einexpr tool, so that the suite compiles the libraries and the CLI with clang
#                14 (not the MPI code, the Python module, tests, bench or examples)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs="$(nproc)"

# The MPI tests (label mpi, and tests/cli's "on a mesh") run mpirun --oversubscribe; as root (CI)
# they set Open MPI's OMPI_ALLOW_RUN_AS_ROOT themselves.
# build_and_test DIR CUDA MPI [ctest args...]
build_and_test() {
  local dir="$1" cuda="$2" mpi="$3"
  shift 3
  echo "== scripts/test.sh: $dir (EINEXPR_CUDA=$cuda EINEXPR_MPI=$mpi)"
  # Only einexpr's own status lines (CUDA, BLAS, MPI, the Python module or why it is skipped).
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEINEXPR_CUDA="$cuda" -DEINEXPR_MPI="$mpi" \
    -DEINEXPR_PYTHON=AUTO -DPython3_EXECUTABLE="${EINEXPR_PYTHON_EXE:-/usr/bin/python3}" |
    { grep -E '^-- einexpr:' || true; }
  cmake --build "$dir" -j "$jobs"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@"
}

cuda="${EINEXPR_CUDA:-AUTO}"
build="${EINEXPR_BUILD_DIR:-build}"
if [ "$cuda" = OFF ] && [ -z "${EINEXPR_BUILD_DIR:-}" ]; then build=build-nocuda; fi
build_and_test "$build" "$cuda" "${EINEXPR_MPI:-AUTO}" "$@"
sanitizers="${EINEXPR_SANITIZERS:-all}"
# The build without CUDA and MPI: the ASan build when it runs (one compile of everything less
# on CI's two cores), else build-nocuda/.
if [ "$cuda" != OFF ] && grep -q "has_cuda = true" "$build/generated/einexpr/config.hpp" &&
  [ "$sanitizers" != all ] && [ "$sanitizers" != asan ]; then
  build_and_test build-nocuda OFF OFF
fi

# sanitized_build DIR SANITIZE COMPILER [cmake --build args...]   (COMPILER "": CMake's default)
sanitized_build() {
  local dir="$1" sanitize="$2" cxx="$3"
  shift 3
  cmake -S . -B "$dir" -G Ninja ${cxx:+-DCMAKE_CXX_COMPILER="$cxx"} -DCMAKE_BUILD_TYPE=Debug \
    -DEINEXPR_SANITIZE="$sanitize" -DEINEXPR_CUDA=OFF -DEINEXPR_MPI=OFF \
    -DEINEXPR_BUILD_EXAMPLES=OFF -DEINEXPR_BUILD_BENCH=OFF >/dev/null
  cmake --build "$dir" -j "$jobs" "$@"
}
if [ "$sanitizers" = all ] || [ "$sanitizers" = asan ]; then
  echo "== scripts/test.sh: build-asan (AddressSanitizer + UndefinedBehaviorSanitizer; without CUDA and MPI)"
  sanitized_build build-asan ON ""
  UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE 'install|lint|cuda|scripts'
fi
if [ "$sanitizers" = all ] || [ "$sanitizers" = tsan ]; then
  # clang, so that something in the suite compiles the libraries with it: three lambdas that
  # captured structured bindings (accepted by g++ 12, not by clang before 16) went unnoticed
  # for sessions. Its TSan runtime and OpenMP come from libclang-rt-14-dev and libomp-dev.
  tsan_cxx=""
  if scripts/deps.sh clang libclang-rt-14-dev libomp-dev; then
    tsan_cxx=clang++
  else
    echo "scripts/test.sh: clang could not be installed: build-tsan is built with the default compiler" >&2
  fi
  # a build directory configured with the other compiler is configured again from scratch
  if [ -f build-tsan/CMakeCache.txt ]; then
    cached=default
    if grep -q '^CMAKE_CXX_COMPILER:.*clang++$' build-tsan/CMakeCache.txt; then cached=clang++; fi
    [ "$cached" = "${tsan_cxx:-default}" ] || rm -rf build-tsan
  fi
  echo "== scripts/test.sh: build-tsan (ThreadSanitizer with ${tsan_cxx:-the default compiler}, tests/concurrency)"
  sanitized_build build-tsan thread "$tsan_cxx" --target test_concurrency einexpr_cli
  OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir build-tsan --output-on-failure -L concurrency
fi
