#pragma once
// The elementwise functions of plan.hpp's UnaryOp over contiguous f32 and f64 arrays, one
// table of kernels per instruction set, the best one chosen at run time (so a build without
// -march flags still runs AVX2 or AVX-512 code where the CPU has it):
//   avx512  AVX-512F, 16 floats / 8 doubles a vector   (vec_math_avx512.cpp)
//   avx2    AVX2 + FMA, 8 floats / 4 doubles            (vec_math_avx2.cpp)
//   scalar  one element at a time with <cmath>          (vec_math_scalar.cpp; any CPU)
// The transcendental functions are Sleef's vector functions (Debian libsleef-dev), with
// Sleef's stated error bounds in ULPs (u10 = 1.0 ULP, u15 = 1.5, u35 = 3.5), but for f32
// exp and gelu_erf under AVX2 and AVX-512, written inline once for both in vec_math_f32.hpp
// (the same results bit for bit on 8 or 16 lanes); relu, abs, neg, square, sqrt, rsqrt and
// reciprocal are plain vector instructions. The formulas, written once over an ISA's vector
// type, are in vec_math_kernels.hpp.
//
// Error bounds, in ULPs of the result's dtype against the exact value over every input,
// are stated once, in vec_math_bounds.hpp (checked by tests/codegen/test_vec_math.cpp and
// scripts/map_ulp.sh; docs/ops.md's table is compared with it). At -inf, gelu, gelu_erf and
// silu are -0 (their limit).
#include <cstdint>

namespace einexpr::cpu::vec {

/// y[i] = f(x[i]) for i < n. x == y is allowed (in place). `stream`: y is written with
/// stores that bypass the cache (where y is aligned for them; the kernel fences after).
template <class T>
using Kernel = void (*)(const T* x, T* y, std::int64_t n, bool stream);

/// One ISA's kernels for one element type, one per UnaryOp.
template <class T>
struct Kernels {
  Kernel<T> relu, abs, neg, square, sqrt, rsqrt, reciprocal, exp, log, tanh, erf, sigmoid, silu, softplus, gelu,
      gelu_erf;
};

/// A normalization's forward pass over one contiguous row of n elements (vec_math_rows.hpp:
/// softmax, log_softmax, layer_norm, rms_norm; eps only for the last two). `stream`: y is
/// written with streaming stores where aligned (call `fence` once after the rows);
/// `scratch`: n elements apart from x and y.
template <class T>
using RowKernel = void (*)(const T* x, T* y, std::int64_t n, T eps, bool stream, T* scratch);
template <class T>
struct RowKernels {
  RowKernel<T> softmax = nullptr, log_softmax = nullptr, layer_norm = nullptr, rms_norm = nullptr;
  void (*fence)() = nullptr;
  /// m + log(sum exp(x - m)) over a row of n (m its maximum; -inf for n = 0): cross_entropy's
  /// per-row log-sum-exp. `far`: the rows come from memory, not the caches (x's lines are
  /// then fetched ahead of the exps).
  T (*logsumexp)(const T* x, std::int64_t n, bool far) = nullptr;
  /// y = scale · softmax(x) over a row of n (one exp per element, as softmax: the
  /// exponentials go to y, or to `scratch` when y is streamed, then are scaled): cross_entropy's
  /// dlogits before the target's -scale.
  void (*scaled_softmax)(const T* x, T* y, std::int64_t n, T scale, bool stream, T* scratch) = nullptr;
  /// y = scale · exp(x - shift) over a row of n, in one pass: cross_entropy's dlogits when
  /// the row's log-sum-exp (`shift`) is known from the forward's loss.
  void (*scaled_exp)(const T* x, T* y, std::int64_t n, T shift, T scale, bool stream) = nullptr;
};

/// FMA chains on registers, no memory traffic: `fma_chains` independent chains of `lanes`
/// elements each take `steps` fused multiply-adds (2 FLOPs each); returns their sum (so
/// that the work is not optimized away). The 'cpu' device's peak is measured with it.
inline constexpr int fma_chains = 12;
template <class T>
struct FmaProbe {
  T (*run)(std::int64_t steps) = nullptr;
  int lanes = 1;
};

struct Table {
  const char* isa = "";  // "scalar", "avx2", "avx512"
  Kernels<float> f32;
  Kernels<double> f64;
  RowKernels<float> rows_f32;
  RowKernels<double> rows_f64;
  FmaProbe<float> fma_f32;
  FmaProbe<double> fma_f64;
};

/// The fastest table this CPU runs, chosen on the first call.
const Table& best_table() noexcept;

/// Every table this CPU runs, slowest first (the scalar table is always there).
struct Tables {
  const Table* list[3] = {};
  int count = 0;
};
Tables runnable_tables() noexcept;

namespace detail {
Table scalar_table() noexcept;
Table avx2_table() noexcept;    // x86-64 builds only
Table avx512_table() noexcept;  // x86-64 builds only
}  // namespace detail

}  // namespace einexpr::cpu::vec
