#!/usr/bin/env bash
# einexpr on a shared CPU: each workload class (GEMM, batched GEMM, copy, reduce, map,
# layer_norm) at a small (~0.05-0.3 ms) and a large size, timed by `einexpr bench --json`
# with the default threads (no --threads: OMP_NUM_THREADS, else every CPU) and with
# --threads 1, first as the machine is, then with a compile loop on every core beside it
# (g++ -O2 of a header-heavy file, again and again, at the same priority). The two thread
# counts of one workload run one after the other under the same load. Prints the mean time of
# each (not the median, which hides the runs that stall for a scheduler slice), the median
# and slowest run of the default, and default / 1-thread, the figure issue 34 bounds by 1.25;
# then the largest of those ratios per binary and condition.
#   scripts/bench_loaded.sh [EINEXPR_BINARY...]    (default: build-rel/lib/einexpr)
# Environment: MIN_TIME (seconds of runs per measurement, default 1), ROUNDS (default 3: the
# default and the 1-thread run alternate this many times, and each mean is the mean of the
# rounds' means, so a change in the load between the two falls on both), LOAD=0 skips the
# loaded half, QUIET=0 the unloaded one.
set -euo pipefail
cd "$(dirname "$0")/.."
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(build-rel/lib/einexpr)
min_time="${MIN_TIME:-1}"
rounds="${ROUNDS:-3}"
workloads=(
  "gemm small|einsum|b d, d k -> b k|b=1024 d=256 k=64"
  "gemm large|einsum|b d, d k -> b k|b=1024 d=1024 k=1024"
  "batched small|einsum|b s1 h, b s2 h -> b s1 s2|b=8 s1=64 s2=64 h=64"
  "batched large|einsum|b s1 h, b s2 h -> b s1 s2|b=32 s1=512 s2=512 h=64"
  "copy small|rearrange|a b c -> c b a|a=64 b=64 c=64 --copy always"
  "copy large|rearrange|a b c -> c b a|a=256 b=256 c=256 --copy always"
  "reduce small|reduce|b s -> b|mean b=256 s=4096"
  "reduce large|reduce|b s -> b|mean b=4096 s=8192"
  "map small|map|n -> n|gelu n=262144"
  "map large|map|n -> n|gelu n=33554432"
  "layer_norm small|layer_norm|b [d]|b=512 d=1024"
  "layer_norm large|layer_norm|b [d]|b=16384 d=1024"
)

work="$(mktemp -d)"
loops=()
stop_load() {
  for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${loops[@]}"; do wait "$pid" 2>/dev/null || true; done
  loops=()
}
trap 'stop_load; rm -rf "$work"' EXIT
cat >"$work/load.cpp" <<'CPP'
#include <algorithm>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>
int main() {
  std::map<std::string, std::vector<std::regex>> m;
  m["x"].emplace_back("a+b*");
  std::cout << m.size() << '\n';
}
CPP
start_load() {
  for ((i = 0; i < $(nproc); i++)); do
    (while true; do g++ -O2 -c "$work/load.cpp" -o "$work/load$i.o"; done) >/dev/null 2>&1 &
    loops+=($!)
  done
  sleep 2
}

mean_of() {  # BIN THREADS(default or N) WORKLOAD -> mean, median, slowest (seconds)
  local bin=$1 threads=$2 spec=$3 flag=()
  IFS='|' read -r _ op pattern rest <<<"$spec"
  [ "$threads" = default ] || flag=(--threads "$threads")
  # shellcheck disable=SC2086
  "$bin" bench "$op" "$pattern" $rest "${flag[@]}" --min-time "$min_time" --json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.6g %.6g %.6g" % (d["mean_s"], d["median_s"], d["max_s"]))'
}

ratios="$work/ratios"
run_all() {  # CONDITION
  for spec in "${workloads[@]}"; do
    for bin in "${bins[@]}"; do
      local s2=() s1=()
      for ((r = 0; r < rounds; r++)); do
        s2+=("$(mean_of "$bin" default "$spec")")
        s1+=("$(mean_of "$bin" 1 "$spec")")
      done
      # mean of the rounds' means; the median of their medians; the slowest of all
      read -r m2 med2 max2 < <(printf '%s\n' "${s2[@]}" | python3 -c 'import sys,statistics as st
r=[list(map(float,l.split())) for l in sys.stdin if l.strip()]
print(st.mean(x[0] for x in r), st.median(x[1] for x in r), max(x[2] for x in r))')
      read -r m1 _ _ < <(printf '%s\n' "${s1[@]}" | python3 -c 'import sys,statistics as st
r=[list(map(float,l.split())) for l in sys.stdin if l.strip()]
print(st.mean(x[0] for x in r), st.median(x[1] for x in r), max(x[2] for x in r))')
      printf '| %s | %s | %s | %.4g ms | %.4g ms | %.4g ms | %.4g ms | %.2f |\n' "$1" "${spec%%|*}" "$bin" \
        "$(python3 -c "print($m2*1e3)")" "$(python3 -c "print($med2*1e3)")" "$(python3 -c "print($max2*1e3)")" \
        "$(python3 -c "print($m1*1e3)")" "$(python3 -c "print($m2/$m1)")"
      echo "$1|$bin|$(python3 -c "print($m2/$m1)")|${spec%%|*}" >>"$ratios"
    done
  done
}

echo "rounds: $rounds x ${min_time} s per thread count and workload"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC');" \
  "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-(unset)} GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-(unset)}"
echo
echo "| condition | workload | binary | mean, default threads ($(nproc)) | median | slowest | mean, 1 thread | default / 1 |"
echo "|---|---|---|---|---|---|---|---|"
if [ "${QUIET:-1}" != 0 ]; then run_all "as is"; fi
if [ "${LOAD:-1}" != 0 ]; then
  start_load
  run_all "$(nproc) compile loops"
  stop_load
fi
echo
# The largest default / 1-thread ratio of each binary and condition (issue 34: at most 1.25).
python3 - "$ratios" <<'PY'
import sys
worst = {}
for line in open(sys.argv[1]):
    cond, b, r, w = line.rstrip("\n").split("|")
    if (cond, b) not in worst or float(r) > worst[(cond, b)][0]:
        worst[(cond, b)] = (float(r), w)
for (cond, b), (r, w) in worst.items():
    print(f"{cond}, {b}: largest default / 1 thread {r:.2f} ({w}){'' if r <= 1.25 else '  > 1.25'}")
PY
