#!/usr/bin/env bash
# scripts/bench_cuda.sh --device, the first call on a GPU machine, with stand-ins for test_cuda
# and bench_cuda (device_standin/: groups that pass, fail, crash and hang) and with a real
# binary whose library is missing: one process per group, each under its timeout, logs that
# keep what a killed process printed, failed groups' test cases rerun one by one (names
# escaped for Catch2), the benchmark skipped when the runtime groups fail, the summary, the
# stop before anything runs when a library is missing, and exit 77 where no GPU is visible.
#   tests/scripts/test_device_flow.sh ROOT CXX
set -uo pipefail
root="$1"
cxx="$2"
standin="$root/tests/scripts/device_standin"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# run_device NAME [VAR=VALUE...]: the script on the stand-ins, OUT=$scratch/NAME; sets status
# and output.
run_device() {
  local name="$1"
  shift
  mkdir -p "$scratch/$name"
  output="$(env OUT="$scratch/$name" DEVICE_CARRY="$standin" GROUP_TIMEOUT=2 CASE_TIMEOUT=2 \
    LIB_SEARCH_ROOTS="$scratch/none" "$@" "$root/scripts/bench_cuda.sh" --device --quick 2>&1)"
  status=$?
}
# has FILE_OR_- PATTERN WHAT: the output (-) or the file matches the extended regex.
has() {
  local text
  if [ "$1" = - ]; then text="$output"; else text="$(cat "$1" 2>/dev/null)"; fi
  if grep -Eq -- "$2" <<<"$text"; then ok "$3"; else fail "$3: no /$2/ in ${1/#-/the output}"; echo "$text"; fi
}
hasnt() {
  local text
  if [ "$1" = - ]; then text="$output"; else text="$(cat "$1" 2>/dev/null)"; fi
  if grep -Eq -- "$2" <<<"$text"; then fail "$3: /$2/ in ${1/#-/the output}"; echo "$text"; else ok "$3"; fi
}
status_is() { if [ "$status" = "$1" ]; then ok "$2 (exit $1)"; else fail "$2: exit $status, expected $1"; echo "$output"; fi; }

# ---- groups that pass, fail, crash and hang ----
run_device mixed
out="$scratch/mixed"
status_is 1 "a failing group fails the run"
has "$out/summary.txt" '^\| test_cuda \| 0 \| [0-9.]+ \| ok: 1 test case passed \|$' "a passing group: exit 0 and Catch2's count"
has "$out/summary.txt" '^\| test_fail \| 1 \| [0-9.]+ \| FAILED: 1 of 2 failed \|$' "a failing group: its exit status and Catch2's counts"
has "$out/summary.txt" '^\| test_crash \| 139 \| [0-9.]+ \| KILLED by signal 11 \|$' "a crashing group: the signal"
has "$out/summary.txt" '^\| test_hang \| 124 \| [0-9.]+ \| TIMEOUT \|$' "a hanging group: killed at its timeout"
has "$out/summary.txt" '^\| test_zeta \| 0 \|' "the group after the crash and the hang still ran"
order="$(grep -oE '^\| test_[a-z]+ ' "$out/summary.txt" | head -n 6 | tr -d '| ' | tr '\n' ' ')"
if [ "$order" = "test_cuda test_runtime test_crash test_fail test_hang test_zeta " ]; then
  ok "the runtime groups first, then the others in order"
else
  fail "group order: $order"
fi
has "$out/summary.txt" '^\| bench_cuda --quick \| 0 \|' "the benchmark ran (the runtime groups passed)"
has "$out/bench.json" '"stand_in": true' "the benchmark's JSON is in OUT"
has "$out/bench.txt" '\| stand-in \| 1.00 \|' "its table is in OUT"
has "$out/tests.txt" 'before the hang' "a hung group's output before the kill is in the log"
has "$out/tests.txt" 'before the crash' "a crashed group's output is in the log"
has "$out/tests.txt" '^===== test_hang: killed after 2 s' "the log says where a group was killed"
has "$out/summary.txt" '^\|   test_fail: fail one \| 1 \|' "a failed group's test cases rerun alone: the failing one fails"
has "$out/summary.txt" '^\|   test_fail: fail two, with a comma \[and brackets\] \| 0 \| [0-9.]+ \| ok' \
  "... the other passes, its name escaped for Catch2 (comma, brackets)"
has "$out/summary.txt" '^\|   test_hang: hang one \| 124 \|' "... a hanging one is killed again"
hasnt "$out/summary.txt" 'test_zeta: ' "passing groups are not rerun"
has - '^test_fail +exit 1 .*FAILED' "each group's line is printed as it ends"
has - 'fail\.cpp:10: FAILED:' "a failing group's first failure is printed"
last="$(tail -n 1 <<<"$output")"
if [[ "$last" == "|   test_hang: hang one | 124 |"* ]]; then ok "the summary table is printed last"; else fail "last line: $last"; fi

# ---- the run killed from outside (the device tool's timeout_s) while a group hangs ----
mkdir -p "$scratch/killed"
(env OUT="$scratch/killed" DEVICE_CARRY="$standin" GROUP_TIMEOUT=8 LIB_SEARCH_ROOTS="$scratch/none" \
  timeout -s KILL 3 "$root/scripts/bench_cuda.sh" --device --quick; true) >/dev/null 2>&1
has "$scratch/killed/summary.txt" '^\| test_fail \| 1 \|' "a run killed later keeps the summary rows written before"
has "$scratch/killed/tests.txt" 'before the hang' "... and the log up to the kill"

# ---- the runtime groups fail: no benchmark ----
run_device runtime STANDIN_RUNTIME=fail
status_is 1 "a failing runtime group fails the run"
has - 'bench_cuda: SKIPPED: the runtime tests' "the benchmark is skipped, saying why"
has "$scratch/runtime/summary.txt" '^\| bench_cuda \| - \| 0 \| skipped: runtime tests failed \|$' "... in the summary too"
if [ -e "$scratch/runtime/bench.json" ]; then fail "bench_cuda ran"; else ok "bench_cuda did not run"; fi

# ---- no GPU visible ----
run_device nogpu STANDIN_NO_GPU=1
status_is 77 "no GPU visible: exit 77"
has - 'no GPU is visible here: nothing ran on a GPU' "... saying so"
has "$scratch/nogpu/summary.txt" '^\| test_runtime \| 77 \| [0-9.]+ \| skipped: no GPU visible \|$' "... each group skipped"

# ---- out of time ----
run_device late DEVICE_BUDGET=0
status_is 1 "no time left: the run fails"
has "$scratch/late/summary.txt" '^\| test_cuda \| - \| 0 \| not run: out of time \|$' "groups not run are listed"
has - 'bench_cuda: SKIPPED: out of time' "the benchmark too"

# ---- a library missing on the machine: stop before anything runs ----
carry="$scratch/carry"
mkdir -p "$carry"
printf 'int gone() { return 0; }\n' >"$scratch/gone.cpp"
printf 'int gone();\nint main() { return gone(); }\n' >"$scratch/main.cpp"
if "$cxx" -shared -fPIC "$scratch/gone.cpp" -o "$scratch/libeinexpr_gone.so" &&
  "$cxx" "$scratch/main.cpp" -o "$carry/test_cuda" -L"$scratch" -leinexpr_gone; then
  rm "$scratch/libeinexpr_gone.so"
  cp "$standin/bench_cuda" "$carry/"
  run_device missing DEVICE_CARRY="$carry"
  status_is 3 "a missing library stops the run"
  has - 'STOP: cannot start here: test_cuda needs libeinexpr_gone\.so' "... naming the binary and the library"
  hasnt "$scratch/missing/tests.txt" '^===== test_' "... before any group ran"
  if [ -e "$scratch/missing/bench.txt" ]; then fail "bench_cuda ran"; else ok "... or the benchmark"; fi
else
  fail "could not build the binary with a missing library ($cxx)"
fi

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every check passed"
