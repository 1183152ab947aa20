#pragma once
// The error bounds of the elementwise functions (vec_math.hpp), in ULPs of the result's
// dtype (f32 or f64), against the exact value, over every input: ±0, ±inf, NaN and
// denormals included. Results below the smallest normal number may be off by one unit of
// it (Sleef flushes some tiny results to zero), so an error below the smallest normal
// counts as none. This is the one statement of them; what checks them reads it:
//   tests/codegen/test_vec_math.cpp  every table this CPU runs (scalar, AVX2, AVX-512), f32
//                                    and f64, sampled over the whole range;
//   scripts/map_ulp.sh               all 2^32 f32 inputs of exp, sigmoid, silu, gelu and
//                                    gelu_erf;
//   docs/ops.md                      its table's bound column is `ulp_bound_doc`, word for
//                                    word (test_vec_math.cpp compares them).
// Nothing in the library includes this header: the bounds are a contract on the kernels,
// not something they compute.
#include <cmath>

#include "einexpr/codegen/plan.hpp"

namespace einexpr::cpu::vec {

/// The bound for `op` at input x. `inline_gelu_erf`: the kernel computes gelu_erf itself
/// (f32 under AVX2 and AVX-512, vec_math_f32.hpp) rather than through Sleef's or libm's erfc. F is
/// the reference's type (double for f32 results, long double for f64).
template <class F>
double ulp_bound(UnaryOp op, F x, bool inline_gelu_erf) {
  switch (op) {
    case UnaryOp::relu: case UnaryOp::abs: case UnaryOp::neg:
      return 0;  // exact
    case UnaryOp::square: case UnaryOp::sqrt: case UnaryOp::reciprocal:
      return 0.5;  // one rounding
    case UnaryOp::rsqrt:
      return 1.5;  // 1 / sqrt(x): two roundings
    case UnaryOp::exp: case UnaryOp::log: case UnaryOp::erf:
      // Sleef's expf/logf/erff u10; f32 exp under AVX2 and AVX-512 is einexpr's own (0.77
      // over every input, 0.69 where the result is normal: scripts/map_ulp.sh).
      return 1.0;
    case UnaryOp::tanh:
      return 3.5;  // Sleef's tanhf u35: 3x faster than u10 here
    case UnaryOp::sigmoid:
      return 3.0;  // e = exp(-|x|), then 1/(1+e), or e/(1+e) for x < 0 (2.40 under AVX2 and AVX-512)
    case UnaryOp::silu:
      return 3.5;  // x/(1+e), or x·e/(1+e) for x < 0 (3.34 under AVX2 and AVX-512)
    case UnaryOp::softplus:
      return 2.5;  // log1p(exp(x)), u10 each; x itself where x > 20
    case UnaryOp::gelu: {
      // x · sigmoid(2z), z = sqrt(2/pi)(x + 0.044715x^3), the tanh form rewritten: the
      // rounding of 2z, a few ULPs, is amplified |2z| times by exp in the left tail, where
      // gelu(x) ~ x·exp(2z) (torch's tanh form is 100% off there).
      const F two_z = std::fabs(x * (F(1.5957691216057308L) + F(1.5957691216057308L * 0.044715L) * x * x));
      return std::isfinite(two_z) ? static_cast<double>(4 + F(2.5) * two_z) : 4.0;
    }
    case UnaryOp::gelu_erf:
      // 0.5·x·erfc(-x/sqrt 2). Through Sleef's or libm's erfc the rounding of x/sqrt 2 is
      // amplified 2t^2 = x^2 times by erfc(t) in the left tail (42 ULP seen at x = -6). The
      // f32 kernel of the AVX2 and AVX-512 tables, relu(x) - |x| e^(-x^2/2) M(|x|) with M
      // rational, splits x^2/2 exactly (vec_math_f32.hpp; 5.68 at most over every input:
      // scripts/map_ulp.sh; most of it the rounding of M's two polynomials).
      if (inline_gelu_erf) return 6.0;
      return x < 0 && std::isfinite(x) ? static_cast<double>(4 + 2 * x * x) : 4.0;
  }
  return 0;
}

/// The bound as docs/ops.md's table states it (its "bound (ULP)" column, Markdown).
inline const char* ulp_bound_doc(UnaryOp op) {
  switch (op) {
    case UnaryOp::relu: case UnaryOp::abs: case UnaryOp::neg: return "exact";
    case UnaryOp::square: case UnaryOp::sqrt: case UnaryOp::reciprocal: return "0.5";
    case UnaryOp::rsqrt: return "1.5";
    case UnaryOp::exp: case UnaryOp::log: case UnaryOp::erf: return "1.0";
    case UnaryOp::tanh: return "3.5";
    case UnaryOp::sigmoid: return "3.0";
    case UnaryOp::silu: return "3.5";
    case UnaryOp::softplus: return "2.5";
    case UnaryOp::gelu: return "4 + 2.5·\\|2z\\|, 2z = √(8/π)(x + 0.044715x³)";
    case UnaryOp::gelu_erf: return "6.0 under AVX2 and AVX-512 (f32); 4 + 2x² for x < 0, else 4, elsewhere";
  }
  return "";
}

}  // namespace einexpr::cpu::vec
