#pragma once
// The exact value of each elementwise function (plan.hpp's UnaryOp), in double or long
// double: the one reference the CPU lowering, the GPU and the public-op tests compare with.
// Each is its definition evaluated where it does not lose precision: sigmoid from
// exp(-|x|), GELU (tanh form) as x·sigmoid(2z) (the same number as 0.5x(1 + tanh z)
// without the cancellation of 1 + tanh z for x < 0), gelu_erf as 0.5x·erfc(-x/sqrt 2);
// at -inf, gelu, gelu_erf and silu are their limit -0; softplus is torch's (x where x > 20).
#include <cmath>

#include "einexpr/codegen/plan.hpp"

namespace testing_support {

/// 1 / (1 + exp(-v)), evaluated without overflow and without cancellation.
template <class F>
F sigmoid_reference(F v) {
  const F e = std::exp(-std::fabs(v));
  return v < 0 ? e / (1 + e) : 1 / (1 + e);
}

template <class F = double>
F unary_reference(einexpr::UnaryOp op, F v) {
  using einexpr::UnaryOp;
  const F sqrt_2_over_pi = static_cast<F>(0.797884560802865355879892119868763737L);
  const F sqrt_half = static_cast<F>(0.707106781186547524400844362104849039L);
  const bool minus_inf = std::isinf(v) && v < 0;
  switch (op) {
    case UnaryOp::relu: return v < 0 ? F(0) : v;  // NaN stays NaN
    case UnaryOp::gelu:
      return minus_inf ? F(-0.0) : v * sigmoid_reference(2 * sqrt_2_over_pi * (v + static_cast<F>(0.044715L) * v * v * v));
    case UnaryOp::exp: return std::exp(v);
    case UnaryOp::log: return std::log(v);
    case UnaryOp::square: return v * v;
    case UnaryOp::sqrt: return std::sqrt(v);
    case UnaryOp::rsqrt: return 1 / std::sqrt(v);
    case UnaryOp::neg: return -v;
    case UnaryOp::abs: return std::fabs(v);
    case UnaryOp::sigmoid: return sigmoid_reference(v);
    case UnaryOp::tanh: return std::tanh(v);
    case UnaryOp::silu: return minus_inf ? F(-0.0) : v * sigmoid_reference(v);
    case UnaryOp::reciprocal: return 1 / v;
    case UnaryOp::gelu_erf: return minus_inf ? F(-0.0) : F(0.5) * v * std::erfc(-v * sqrt_half);
    case UnaryOp::erf: return std::erf(v);
    case UnaryOp::softplus: return v > 20 ? v : std::log1p(std::exp(v));
  }
  return 0;
}

}  // namespace testing_support
