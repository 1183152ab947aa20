#!/usr/bin/env bash
# Checks map(x, F) on f32 against F in double for every one of the 2^32 bit patterns (the
# CPU's vector table: AVX2 or AVX-512), for each F named (default: all of them below), and prints
# the largest error in ULPs of the result beside its bound (codegen/lower/cpu/vec_math_bounds.hpp), where it
# occurs, and how many inputs exceed the bound. Measure as in tests/codegen/test_vec_math.cpp:
# a result beyond the largest float counts as 2^128; below the smallest normal, one ULP is
# the smallest denormal; an absolute error below the smallest normal counts as none. Exits 1 if any input exceeds its function's bound.
#   scripts/map_ulp.sh [-b BUILD_DIR] [F ...]     F: exp sigmoid silu gelu gelu_erf
#                                                 (default build-rel/; ~1 min a function
#                                                 on 2 cores)
# The references in double: exp(x); 1/(1+exp(-x)); x/(1+exp(-x)); x/(1+exp(-2z)) with
# 2z = sqrt(8/pi)(x + 0.044715x^3) (gelu's tanh form, free of 1 + tanh's cancellation);
# 0.5·x·erfc(-x/sqrt 2).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-rel
if [[ "${1:-}" == -b ]]; then build="$2"; shift 2; fi
functions=("$@")
[[ ${#functions[@]} -gt 0 ]] || functions=(exp sigmoid silu gelu gelu_erf)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/ulp.cpp" <<'CPP'
#include <einexpr/einexpr.hpp>
#include <lower/cpu/vec_math_bounds.hpp>
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
using namespace einexpr;
struct Worst { double ulp = 0, excess = -INFINITY; float x = 0; float got = 0; double want = 0; std::uint64_t bad = 0; };
double ulps(float got, double want) {  // as tests/codegen/test_vec_math.cpp measures them
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  const double top = std::ldexp(1.0, 128);
  const double w = std::min(std::fabs(want), top) * (want < 0 ? -1 : 1);
  const double g = std::isinf(got) ? (got < 0 ? -top : top) : got;
  if (std::fabs(g - w) < FLT_MIN) return 0;  // vec_math_bounds.hpp: subnormal intermediates lose precision
  const int e = std::max(std::ilogb(std::min(std::fabs(w), double(FLT_MAX))), FLT_MIN_EXP - 1);  // ilogb(FLT_MIN) = -126
  return std::fabs(g - w) / std::ldexp(1.0, e - (FLT_MANT_DIG - 1));
}
struct Function { const char* name; double (*want)(double); };
const Function functions[] = {
    {"exp", [](double x) { return std::exp(x); }},
    {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
    {"silu", [](double x) { return std::isinf(x) && x < 0 ? -0.0 : x / (1 + std::exp(-x)); }},
    {"gelu",
     [](double x) {
       if (std::isinf(x) && x < 0) return -0.0;
       const double t = std::sqrt(8 / M_PI) * (x + 0.044715 * x * x * x);
       return std::isinf(t) ? (t > 0 ? x : -0.0) : x / (1 + std::exp(-t));
     }},
    {"gelu_erf", [](double x) { return std::isinf(x) && x < 0 ? -0.0 : 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }},
};
/// The bound vec_math_bounds.hpp states for `op` at x; AVX2 and AVX-512 compute gelu_erf
/// inline (vec_math_f32.hpp), the scalar table calls erfc.
double bound(UnaryOp op, double x) {
  static const bool inline_gelu_erf =
      (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) || __builtin_cpu_supports("avx512f");
  return cpu::vec::ulp_bound(op, x, inline_gelu_erf);
}
int main(int argc, char** argv) {
  set_num_threads(1);
  int status = 0;
  for (int a = 1; a < argc; ++a) {
    const Function* f = nullptr;
    for (const Function& g : functions) if (std::string(argv[a]) == g.name) f = &g;
    if (f == nullptr) { std::fprintf(stderr, "map_ulp: no reference for '%s'\n", argv[a]); return 2; }
    const UnaryOp op = parse_unary_op(f->name);
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
          const Tensor y = map(Tensor::from_vector(x, {static_cast<std::int64_t>(chunk)}), f->name);
          const float* got = static_cast<const float*>(y.data_ptr());
          for (std::uint64_t i = 0; i < chunk; ++i) {
            const double want = f->want(x[i]);
            const double u = ulps(got[i], want);
            const double excess = u - bound(op, x[i]);
            if (u > worst[t].ulp) { worst[t].ulp = u; worst[t].x = x[i]; worst[t].got = got[i]; worst[t].want = want; }
            worst[t].excess = std::max(worst[t].excess, excess);
            if (excess > 0) ++worst[t].bad;
          }
        }
      });
    for (std::thread& th : threads) th.join();
    const Worst& w = worst[0].ulp >= worst[1].ulp ? worst[0] : worst[1];
    const std::uint64_t bad = worst[0].bad + worst[1].bad;
    std::printf("%-8s (f32, every input): largest error %.4f ULP at x = %.9g (got %.9g, want %.9g); "
                "closest to its bound: %+.4f ULP; %llu inputs above the bound\n",
                f->name, w.ulp, w.x, w.got, w.want, std::max(worst[0].excess, worst[1].excess),
                static_cast<unsigned long long>(bad));
    std::fflush(stdout);
    if (bad != 0) status = 1;
  }
  return status;
}
CPP
libs=("$build/lib/libeinexpr.a" "$build/codegen/libeinexpr_codegen.a" "$build/parser/libeinexpr_parser.a"
      "$build/runtime/libeinexpr_runtime.a")
blas=(-lopenblas)
grep -q 'EINEXPR_BLAS:STRING=eigen' "$build/CMakeCache.txt" && blas=()
g++ -std=c++20 -O2 "$work/ulp.cpp" -I runtime/include -I parser/include -I codegen/include -I lib/include -I codegen \
  -I "$build/generated" "${libs[@]}" -fopenmp "${blas[@]}" -lsleef -pthread -o "$work/ulp"
"$work/ulp" "${functions[@]}"
