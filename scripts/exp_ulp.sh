#!/usr/bin/env bash
# Checks map(x, "exp") on f32 against exp in double for every one of the 2^32 bit patterns
# (the CPU's vector table: AVX2 here), and prints the largest error in ULPs of the result
# (vec_math.hpp's measure: a result beyond the largest float counts as 2^128; below the
# smallest normal, one ULP is the smallest denormal), where it occurs, and any NaN or
# infinity in the wrong place. Exits 1 if the error exceeds 1 ULP.
#   scripts/exp_ulp.sh [BUILD_DIR]      (default build-rel/)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-rel}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/ulp.cpp" <<'CPP'
#include <einexpr/einexpr.hpp>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
using namespace einexpr;
struct Worst { double ulp = 0; float x = 0; float got = 0; double want = 0; std::uint64_t bad = 0; };
double ulps(float got, double want) {  // as tests/codegen/test_vec_math.cpp measures them
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  const double top = std::ldexp(1.0, 128);
  const double w = std::min(std::fabs(want), top) * (want < 0 ? -1 : 1);
  const double g = std::isinf(got) ? (got < 0 ? -top : top) : got;
  const int e = std::max(std::ilogb(std::min(std::fabs(w), double(FLT_MAX))), FLT_MIN_EXP - 1);  // ilogb(FLT_MIN) = -126
  return std::fabs(g - w) / std::ldexp(1.0, e - (FLT_MANT_DIG - 1));
}
int main() {
  set_num_threads(1);
  const std::uint64_t chunk = std::uint64_t{1} << 22, total = std::uint64_t{1} << 32;
  Worst worst[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      std::vector<float> x(chunk);
      for (std::uint64_t start = t * chunk; start < total; start += 2 * chunk) {
        for (std::uint64_t i = 0; i < chunk; ++i) {
          const auto bits = static_cast<std::uint32_t>(start + i);
          std::memcpy(&x[i], &bits, 4);
        }
        const Tensor y = map(Tensor::from_vector(x, {static_cast<std::int64_t>(chunk)}), "exp");
        const float* got = static_cast<const float*>(y.data_ptr());
        for (std::uint64_t i = 0; i < chunk; ++i) {
          const double want = std::exp(static_cast<double>(x[i]));
          const double u = ulps(got[i], want);
          if (u > worst[t].ulp) worst[t] = {u, x[i], got[i], want, worst[t].bad};
          if (u > 1.0) ++worst[t].bad;
        }
      }
    });
  for (std::thread& th : threads) th.join();
  const Worst& w = worst[0].ulp >= worst[1].ulp ? worst[0] : worst[1];
  std::printf("exp (f32, every input): largest error %.4f ULP at x = %.9g (got %.9g, exp = %.9g); %llu inputs above 1 ULP\n",
              w.ulp, w.x, w.got, w.want, static_cast<unsigned long long>(worst[0].bad + worst[1].bad));
  return worst[0].bad + worst[1].bad == 0 ? 0 : 1;
}
CPP
libs=("$build/lib/libeinexpr.a" "$build/codegen/libeinexpr_codegen.a" "$build/parser/libeinexpr_parser.a"
      "$build/runtime/libeinexpr_runtime.a")
blas=(-lopenblas)
grep -q 'EINEXPR_BLAS:STRING=eigen' "$build/CMakeCache.txt" && blas=()
g++ -std=c++20 -O2 "$work/ulp.cpp" -I runtime/include -I parser/include -I codegen/include -I lib/include \
  -I "$build/generated" "${libs[@]}" -fopenmp "${blas[@]}" -lsleef -pthread -o "$work/ulp"
"$work/ulp"
