#!/usr/bin/env bash
# The GPU tests and benchmarks on a GPU (bench/cuda/README.md). bench_cuda prints a Markdown
# table; paste it into bench/RESULTS.md under the GPU's name. Without a GPU it says [SKIP]
# and exits 77.
#
#   scripts/bench_cuda.sh [--quick] [-- ARGS...]
#       builds Release with CUDA in $EINEXPR_BUILD_DIR (default build-gpu; sm_80 and sm_90,
#       OpenBLAS) and runs bench_cuda here (a machine with a GPU and the build's Debian
#       packages).
#   scripts/bench_cuda.sh --stage
#       for the device tool's GPU machines, which have the CUDA toolkit, PyTorch, cmake and
#       ninja but none of Debian's libraries: builds test_cuda and bench_cuda in
#       $EINEXPR_STAGE_BUILD_DIR (default build-gpu-stage: Release, sm_90 only, CPU GEMMs
#       through Eigen rather than OpenBLAS, no -march=native, RUNPATH $ORIGIN/lib), copies
#       them with libsleef.so.3 and libgomp.so.1 into .device-carry/ (git-ignored), then
#       fails, before any GPU time is spent, when a staged binary needs a library that is
#       neither carried nor on the GPU machine (scripts/check_carry.sh libs), when the carry
#       and this checkout's tree exceed the tool's 64 MiB (scripts/check_carry.sh size), or
#       when a binary does not start where the system's libraries are only the GPU
#       machine's (scripts/bare_run.sh, where unshare -m is allowed; else ldd alone). It
#       ends by printing the device call to make. Run it in the checkout the device tool
#       sends (the calling session's), or copy .device-carry/ there.
#   scripts/bench_cuda.sh --device [--quick] [--bench-only] [-- ARGS...]
#       on that machine, with no build, in the checkout's root: runs what --stage left.
#       1. Every library the binaries need must load (ldd, with the carry's lib/ and the
#          CUDA libraries found under $LIB_SEARCH_ROOTS, default "/usr/local /usr/lib
#          /opt"): if one is missing it stops at once, naming it (exit 3).
#       2. The GPU tests, one test_cuda process per group (a Catch2 source file, listed
#          with -# --list-tags: test_cuda and test_runtime first, then the kernels), each
#          under its own timeout, so that a fault in one kernel leaves the other groups'
#          results standing. Output line by line (stdbuf -oL) into $OUT/tests.txt.
#       3. bench_cuda (--quick with --quick; ARGS after --), skipped, saying so, when a
#          runtime group (test_cuda, test_runtime) failed; $OUT/bench.txt, $OUT/bench.json.
#       4. Each failed group's test cases again, one process each, while time is left.
#       5. A summary table (group, exit status, seconds, Catch2's counts), also in
#          $OUT/summary.txt. Exit 0 (all passed), 1 (a failure), 3 (a library missing),
#          77 (no GPU visible: every group and the benchmark skipped).
#       --bench-only skips 2 and 4. $OUT defaults to a new temporary folder. Times: the whole
#       run stays within $DEVICE_BUDGET s (default 420, for a call with timeout_s 480); a
#       group gets at most $GROUP_TIMEOUT s (default 90), a rerun test case
#       $CASE_TIMEOUT s (default 45), the benchmark $BENCH_TIMEOUT s (default 120 with
#       --quick, else 360), which the tests leave it.
#
# The first call on a GPU (bench/cuda/README.md, "Running it"): here, in the checkout the
# device tool sends, `scripts/bench_cuda.sh --stage`; then the run tool with command
#   set -o pipefail; bash scripts/bench_cuda.sh --device --quick 2>&1 | tee "$OUT/device.txt"
# carry [".device-carry"], timeout_s 480 (tee keeps the whole console in $OUT; the reply
# holds only its last 12,000 characters). Every
# process is killed 10 s after its own timeout at worst, so the run ends by ~430 s; expected
# far sooner (the tests and --quick use small sizes), leaving the session's 15 minutes of
# device time room for a second call. tests/scripts checks this flow with stand-ins.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
quick=()
extra=()
bench_only=0
while (($#)); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --stage) mode=stage ;;
    --device) mode=device ;;
    --bench-only) bench_only=1 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: scripts/bench_cuda.sh [--stage | --device [--bench-only]] [--quick] [-- bench_cuda args]" >&2; exit 2 ;;
  esac
  shift
done
me=scripts/bench_cuda.sh
build="${EINEXPR_BUILD_DIR:-build-gpu}"
stage_build="${EINEXPR_STAGE_BUILD_DIR:-build-gpu-stage}"
carry=.device-carry
# --device reads another folder where DEVICE_CARRY names one (tests/scripts' stand-ins).
if [ "$mode" = device ]; then carry="${DEVICE_CARRY:-$carry}"; fi

build_gpu() {
  scripts/deps.sh
  # No -march=native (EINEXPR_NATIVE): the binaries may run on another machine's CPU.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEINEXPR_CUDA=ON \
    -DEINEXPR_BUILD_TESTS=ON -DEINEXPR_BUILD_BENCH=ON >/dev/null
  cmake --build "$build" -j "$(nproc)" --target bench_cuda test_cuda
}

# The staging build: only what the device machine lacks is carried, so no OpenBLAS (with its
# Fortran runtime it would not fit the 64 MiB): Eigen's GEMMs; Sleef (2 MB) is carried. Device
# code for sm_90 alone (the H100 and the H200), which halves the binaries. RUNPATH
# $ORIGIN/lib finds the carried libraries beside the binaries wherever the tree lands.
build_stage() {
  scripts/deps.sh
  # shellcheck disable=SC2016 # $ORIGIN is the loader's, not the shell's
  cmake -S . -B "$stage_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEINEXPR_CUDA=ON \
    -DEINEXPR_BLAS=eigen -DEINEXPR_NATIVE=OFF -DEINEXPR_PYTHON=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    '-DCMAKE_BUILD_RPATH=$ORIGIN/lib' -DEINEXPR_BUILD_TESTS=ON -DEINEXPR_BUILD_BENCH=ON \
    -DEINEXPR_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$stage_build" -j "$(nproc)" --target bench_cuda test_cuda
}

# The path ldd resolves NAME to for BINARY here.
resolved() {
  ldd "$1" | awk -v n="$2" '$1 == n && $2 == "=>" { print $3 }'
}

stage() {
  local bin path
  rm -rf "$carry"
  mkdir -p "$carry/lib"
  cp "$stage_build/bench/cuda/bench_cuda" "$stage_build/tests/cuda/test_cuda" "$carry/"
  path="$(resolved "$carry/test_cuda" libsleef.so.3)"
  [ -n "$path" ] || { echo "$me: ldd finds no libsleef.so.3 for $carry/test_cuda" >&2; exit 1; }
  cp -L "$path" "$carry/lib/"
  cp -L "$(g++ -print-file-name=libgomp.so.1)" "$carry/lib/"
  ls -l "$carry" "$carry/lib"
  for bin in "$carry/test_cuda" "$carry/bench_cuda" "$carry"/lib/*; do
    # The newest symbol versions it needs (Ubuntu 22.04 has glibc 2.35; the device machines'
    # python3 3.12.3 suggests Ubuntu 24.04, glibc 2.39: not read there), and its RUNPATH.
    echo "$bin: needs $(objdump -T "$bin" | grep -oE '(GLIBC|GLIBCXX|CXXABI)_[0-9.]+' | sort -u -V |
      awk -F_ '{ m[$1] = $0 } END { for (k in m) printf "%s ", m[k] }')$(readelf -d "$bin" |
      grep -E 'RUNPATH|RPATH' | sed 's/.*: /; runpath /')"
  done
  echo "$me: device code for CMAKE_CUDA_ARCHITECTURES=$(grep -oP '^CMAKE_CUDA_ARCHITECTURES:[A-Z]+=\K.*' "$stage_build/CMakeCache.txt")"
  scripts/check_carry.sh libs "$carry" "$carry/test_cuda" "$carry/bench_cuda"
  scripts/check_carry.sh size "$carry"
  # The binaries start with only the carry and the GPU machine's libraries (listing the
  # groups and --help need no GPU), where a private mount namespace is allowed.
  # (Catch2 2's --list-* exit with the number listed: the output says whether it worked.)
  local tags rc=0
  tags="$(env -u LD_LIBRARY_PATH scripts/bare_run.sh "$carry/test_cuda" -# --list-tags 2>&1)" || rc=$?
  if [ "$rc" = 2 ] && grep -q "unshare -m is not allowed" <<<"$tags"; then
    echo "$me: the bare start is skipped (scripts/bare_run.sh needs unshare -m); ldd alone checked"
    tags="$(env -u LD_LIBRARY_PATH "$carry/test_cuda" -# --list-tags)" || true
  elif ! grep -q '\[#' <<<"$tags"; then
    echo "$tags" >&2
    echo "$me: $carry/test_cuda does not start with only the GPU machine's libraries (exit $rc)" >&2
    exit 1
  else
    env -u LD_LIBRARY_PATH scripts/bare_run.sh "$carry/bench_cuda" --help >/dev/null || {
      echo "$me: $carry/bench_cuda does not start with only the GPU machine's libraries" >&2
      exit 1
    }
    echo "$me: test_cuda and bench_cuda start with only the carry and the GPU machine's libraries (scripts/bare_run.sh)"
  fi
  echo "$me: test groups (test_cuda -# --list-tags): $(grep -o '\[#[^]]*\]' <<<"$tags" | tr -d '[]#' | tr '\n' ' ')"
  echo "$me: staged $(du -sh "$carry" | cut -f1) in $carry/ of $PWD"
  cat <<'EOF'
The device call (run tool), from the session whose checkout this is:
  command: set -o pipefail; bash scripts/bench_cuda.sh --device --quick 2>&1 | tee "$OUT/device.txt"
  carry: [".device-carry"]
  timeout_s: 480
EOF
}

# The CUDA libraries (cudart, cuBLAS, cuBLASLt: the toolkit's, of the major version the
# binaries were built with) where the loader does not find them by itself. The carried
# Sleef and libgomp are found through the binaries' RUNPATH ($ORIGIN/lib).
library_path() {
  local dirs=() lib file binary
  for binary in "$@"; do
    for lib in $(ldd "$binary" 2>/dev/null | awk '/not found/ {print $1}'); do
      # shellcheck disable=SC2086 # the roots are a space-separated list
      file="$(find ${LIB_SEARCH_ROOTS:-/usr/local /usr/lib /opt} -name "$lib" -print -quit 2>/dev/null)"
      if [ -n "$file" ]; then dirs+=("$(dirname "$file")"); fi
    done
  done
  local IFS=:
  echo "${dirs[*]}"
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Catch2's counts from the end of a log: "12 passed" or "3 of 12 failed" (test cases).
catch_counts() {
  awk '
    /^All tests passed/ { c = $0; sub(/.* in /, "", c); sub(/\)$/, "", c); r = c " passed" }
    /^test cases:/ {
      n = $3; f = 0
      for (i = 1; i <= NF; ++i) if ($(i + 1) ~ /^failed/) f = $i
      r = f " of " n " failed"
    }
    /^No tests ran/ { r = "no tests ran" }
    END { print r }'
}

# The lines run_logged wrote for NAME, the last time, in LOG.
section() {
  awk -v h="===== $1 (timeout" 'index($0, h) == 1 { n = 0; s = 1; next } s { l[n++] = $0 } END { for (i = 0; i < n; ++i) print l[i] }' "$2"
}

# Escapes a test name for a Catch2 test spec (its special characters and the separator).
catch_escape() { printf '%s' "$1" | sed 's/[][\\,*"~]/\\&/g'; }

summary=""    # the summary table, written row by row as each process ends
ran=0         # processes that saw a GPU (exit status other than 77)
failed_groups=()
deadline=0

# run_logged NAME TIMEOUT LOG COMMAND...: runs COMMAND under the timeout (then SIGKILL after
# 10 s), line-buffered, appending its output to LOG; sets run_status and run_seconds.
run_logged() {
  local name="$1" limit="$2" log="$3" start
  shift 3
  start="$(now)"
  echo "===== $name (timeout ${limit} s) =====" >>"$log"
  run_status=0
  timeout -k 10 "$limit" "${linebuf[@]}" "$@" >>"$log" 2>&1 </dev/null || run_status=$?
  run_seconds="$(elapsed "$start")"
  if [ "$run_status" = 124 ] || [ "$run_status" = 137 ]; then
    echo "===== $name: killed after ${limit} s (exit status $run_status) =====" >>"$log"
  else
    echo "===== $name: exit status $run_status after $run_seconds s =====" >>"$log"
  fi
}

describe() {
  case "$1" in
    0) echo ok ;;
    77) echo "skipped: no GPU visible" ;;
    124 | 137) echo "TIMEOUT" ;;
    *) if (($1 > 128)); then echo "KILLED by signal $(($1 - 128))"; else echo FAILED; fi ;;
  esac
}

# row "NAME|STATUS|SECONDS|RESULT": one line of the summary table, appended to $summary
# at once, so that a run killed later still leaves the rows before.
row() {
  local n st secs what
  IFS="|" read -r n st secs what <<<"$1"
  echo "| $n | $st | $secs | $what |" >>"$summary"
}

# The seconds a process may take: the time left before the deadline, less RESERVE, capped
# at CAP; 0 (do not start it) when under 5 s are left.
time_for() {
  local cap="$1" reserve="$2" left=$((deadline - SECONDS))
  left=$((left - reserve))
  if ((left < 5)); then echo 0; elif ((left < cap)); then echo "$left"; else echo "$cap"; fi
}

device_run() {
  local out="${OUT:-$(mktemp -d)}" bin path listing missing=() status=0 rc
  mkdir -p "$out"
  deadline=$((SECONDS + ${DEVICE_BUDGET:-420}))
  summary="$out/summary.txt"
  printf '| group | exit | s | result |\n|---|---|---|---|\n' >"$summary"
  for bin in test_cuda bench_cuda; do
    [ -f "$carry/$bin" ] || { echo "$me: no $carry/$bin; run $me --stage first and carry $carry" >&2; exit 2; }
    [ -x "$carry/$bin" ] || chmod +x "$carry/$bin"   # in case the copy lost the mode
  done
  echo "== libraries"
  path="$(library_path "$carry/test_cuda" "$carry/bench_cuda")"
  if [ -n "$path" ]; then export LD_LIBRARY_PATH="$path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  for bin in test_cuda bench_cuda; do
    listing="$(ldd "$carry/$bin" 2>&1)" || true
    printf '===== ldd %s\n%s\n' "$bin" "$listing" >>"$out/tests.txt"
    echo "$listing" | grep -E "cuda|cublas|sleef|gomp|not found" | sed "s|^[[:space:]]*|$bin: |" || true
    while read -r lib; do missing+=("$bin needs $lib"); done < <(echo "$listing" | awk '/not found/ { print $1 }')
  done
  if ((${#missing[@]})); then
    printf '%s: STOP: cannot start here: %s\n' "$me" "${missing[@]}" | tee -a "$summary" >&2
    echo "$me: searched ${LIB_SEARCH_ROOTS:-/usr/local /usr/lib /opt} and $carry/lib; nothing was run" | tee -a "$summary" >&2
    exit 3
  fi

  echo "== machine (as found: nothing is changed)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,memory.used,memory.total \
      --format=csv 2>&1 || true
  else
    echo "no nvidia-smi here"
  fi
  linebuf=()
  if command -v stdbuf >/dev/null; then
    linebuf=(stdbuf -oL -eL)
  else
    echo "$me: no stdbuf here: a test killed by its timeout may lose its last lines"
  fi
  # As ctest runs them: the 'cpu' device from the tree's fixed file (no CPU measurement).
  export EINEXPR_CPU_DEVICE="$PWD/tests/support/cpu_device.json"

  local bench_limit="${BENCH_TIMEOUT:-}" groups=() g limit runtime_failed=0 counts
  if [ -z "$bench_limit" ]; then
    if ((${#quick[@]})); then bench_limit=120; else bench_limit=360; fi
  fi
  if [ "$bench_only" = 0 ]; then
    echo "== GPU tests: one process per group (log: $out/tests.txt)"
    local tags
    # Catch2 2's --list-* exit with the number listed: the output says whether it worked.
    tags="$("$carry/test_cuda" -# --list-tags 2>&1)" || true
    if ! grep -q '\[#' <<<"$tags"; then
      echo "$tags"
      echo "$me: STOP: $carry/test_cuda cannot list its tests" | tee -a "$summary" >&2
      exit 3
    fi
    # The runtime first (a failure there makes the rest doubtful), then the kernels.
    mapfile -t groups < <(grep -o '\[#[^]]*\]' <<<"$tags" | tr -d '[]#' |
      awk '{ print ($0 == "test_cuda" ? 0 : $0 == "test_runtime" ? 1 : 2) " " $0 }' | sort | cut -d' ' -f2)
    for g in "${groups[@]}"; do
      limit="$(time_for "${GROUP_TIMEOUT:-90}" "$bench_limit")"
      if ((limit == 0)); then
        row "$g|-|0|not run: out of time"
        status=1
        continue
      fi
      run_logged "$g" "$limit" "$out/tests.txt" "$carry/test_cuda" -# "[#$g]" -w NoTests -d yes
      rc="$run_status"
      [ "$rc" = 77 ] || ran=$((ran + 1))
      counts="$(section "$g" "$out/tests.txt" | catch_counts)"
      row "$g|$rc|$run_seconds|$(describe "$rc")${counts:+: $counts}"
      printf '%-16s exit %-3s %6s s  %s\n' "$g" "$rc" "$run_seconds" "$(describe "$rc")${counts:+: $counts}"
      if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
        status=1
        failed_groups+=("$g")
        if [ "$g" = test_cuda ] || [ "$g" = test_runtime ]; then runtime_failed=1; fi
        section "$g" "$out/tests.txt" |
          grep -E -A3 'FAILED|error|Error|terminate|Segmentation' | head -n 24 | sed 's/^/    /' || true
      fi
    done
  fi

  if [ "$runtime_failed" = 1 ]; then
    echo "== bench_cuda: SKIPPED: the runtime tests (test_cuda, test_runtime) failed, so its numbers would not be trusted"
    row "bench_cuda|-|0|skipped: runtime tests failed"
  else
    limit="$(time_for "$bench_limit" 0)"
    if ((limit == 0)); then
      echo "== bench_cuda: SKIPPED: out of time"
      row "bench_cuda|-|0|not run: out of time"
      status=1
    else
      echo "== bench_cuda ${quick[*]} ${extra[*]} (timeout $limit s; log $out/bench.txt, JSON $out/bench.json)"
      : >"$out/bench.txt"
      local start
      start="$(now)"
      rc=0
      timeout -k 10 "$limit" "${linebuf[@]}" "$carry/bench_cuda" "${quick[@]}" --json "$out/bench.json" "${extra[@]}" \
        </dev/null 2>&1 | tee "$out/bench.txt" || rc="${PIPESTATUS[0]}"
      row "bench_cuda ${quick[*]}|$rc|$(elapsed "$start")|$(describe "$rc")"
      [ "$rc" = 77 ] || ran=$((ran + 1))
      if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then status=1; fi
    fi
  fi

  # Each failed group's test cases alone: which one faulted, and which only failed after it.
  local name
  for g in "${failed_groups[@]}"; do
    mapfile -t names < <("$carry/test_cuda" -# "[#$g]" --list-test-names-only 2>/dev/null | sed '/^$/d')
    for name in "${names[@]}"; do
      limit="$(time_for "${CASE_TIMEOUT:-45}" 0)"
      if ((limit == 0)); then
        row "  $g: $name|-|0|not run: out of time"
        continue
      fi
      run_logged "$g: $name" "$limit" "$out/tests.txt" "$carry/test_cuda" "$(catch_escape "$name")" -w NoTests -d yes
      counts="$(section "$g: $name" "$out/tests.txt" | catch_counts)"
      row "  $g: $name|$run_status|$run_seconds|$(describe "$run_status")${counts:+: $counts}"
    done
  done

  echo "== summary ($((SECONDS - deadline + ${DEVICE_BUDGET:-420})) s of the ${DEVICE_BUDGET:-420} s budget; logs in $out)"
  cat "$summary"
  if [ "$status" = 0 ] && [ "$ran" = 0 ]; then
    echo "$me: no GPU is visible here: nothing ran on a GPU (exit 77)"
    return 77
  fi
  return "$status"
}

case "$mode" in
  stage)
    build_stage
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
