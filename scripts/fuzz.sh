#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + coverage, in build-fuzz/) and runs
# each for SECONDS (default 60), one after another, from its seed corpus in fuzz/corpus/<t>.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      TARGET: model, npy, parse, plan, order (default: all)
# Environment: EINEXPR_FUZZ_JOBS=N runs N fuzzing processes per target (libFuzzer -fork);
# EINEXPR_FUZZ_BUILD_DIR picks the build directory; EINEXPR_FUZZ_SANITIZE the sanitizers
# (default ON = address,undefined; "undefined" alone; "none": coverage alone, 2-3.4x the
# executions a second for a long campaign, fuzz/README.md); EINEXPR_FUZZ_TRACE_CMP=OFF drops
# libFuzzer's comparison tracing (fuzz_order ~1.3x faster again). New inputs go to
# build-fuzz/fuzz/work/<t>/corpus, crashes to build-fuzz/fuzz/work/<t>/crashes/; each run
# appends "date target seconds-run executions crashes" to build-fuzz/fuzz/work/log.tsv.
# Exits 1 if any target crashed. A crash reproduces with: build-fuzz/fuzz/fuzz_<t> FILE
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(model npy parse plan order)
build="${EINEXPR_FUZZ_BUILD_DIR:-build-fuzz}"
jobs="${EINEXPR_FUZZ_JOBS:-1}"
sanitize="${EINEXPR_FUZZ_SANITIZE:-ON}"
trace_cmp="${EINEXPR_FUZZ_TRACE_CMP:-ON}"

scripts/deps.sh clang libclang-rt-14-dev libomp-dev  # libFuzzer, the sanitizers, clang's OpenMP
cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEINEXPR_BUILD_FUZZ=ON -DEINEXPR_SANITIZE="$sanitize" -DEINEXPR_FUZZ_TRACE_CMP="$trace_cmp" \
  -DEINEXPR_CUDA=OFF -DEINEXPR_BUILD_TESTS=OFF -DEINEXPR_BUILD_EXAMPLES=OFF -DEINEXPR_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

export OMP_NUM_THREADS=1
failed=0
for t in "${targets[@]}"; do
  work="$build/fuzz/work/$t"
  mkdir -p "$work/corpus" "$work/crashes"
  dict=fuzz/patterns.dict
  [ "$t" = npy ] && dict=fuzz/npy.dict
  [ "$t" = model ] && dict=fuzz/model.dict
  log="$work/last-run.log"
  echo "== fuzz_$t for ${seconds}s (log: $log)"
  timeout=10
  [ "$t" = order ] && timeout=60  # up to ~5 s of CPU an input under ASan (fuzz/CMakeLists.txt)
  fork=()
  [ "$jobs" -gt 1 ] && fork=(-fork="$jobs" -ignore_crashes=1)
  status=0
  start=$(date +%s)
  # -entropic=0: libFuzzer's entropic schedule spent 78% of fuzz_plan's time in
  # InputCorpus::UpdateFeatureFrequency (perf, clang 14; fuzz/README.md, "Throughput")
  "$build/fuzz/fuzz_$t" -entropic=0 -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 -max_len=4200 \
    -print_final_stats=1 -dict="$dict" -artifact_prefix="$work/crashes/" "${fork[@]}" \
    "$work/corpus" "fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1 || true)
  [ -z "$execs" ] && execs=$(grep -Eo 'Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' | tail -1 || true)
  elapsed=$(($(date +%s) - start))
  crashes=$(find "$work/crashes" -type f | wc -l)
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$elapsed" "${execs:-?}" "$crashes" >>"$build/fuzz/work/log.tsv"
  echo "   ${execs:-?} executions in ${elapsed}s, corpus $(find "$work/corpus" -type f | wc -l) files, crashes so far: $crashes"
  if [ "$status" -ne 0 ]; then
    failed=1
    grep -E '^(==[0-9]+==ERROR|==== fuzz invariant|SUMMARY|artifact_prefix|Test unit written)' "$log" | head -20 || true
  fi
done
exit "$failed"
