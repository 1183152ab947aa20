#pragma once
// The f64 value of each elementwise function (plan.hpp's UnaryOp; GELU is the tanh
// approximation the lecture counts): the one reference the CPU lowering, the GPU and the
// public-op tests compare with.
#include <cmath>

#include "einexpr/codegen/plan.hpp"

namespace testing_support {

inline double unary_reference(einexpr::UnaryOp op, double v) {
  using einexpr::UnaryOp;
  switch (op) {
    case UnaryOp::relu: return v > 0 ? v : 0;
    case UnaryOp::gelu: return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    case UnaryOp::exp: return std::exp(v);
    case UnaryOp::log: return std::log(v);
    case UnaryOp::square: return v * v;
    case UnaryOp::sqrt: return std::sqrt(v);
    case UnaryOp::rsqrt: return 1 / std::sqrt(v);
    case UnaryOp::neg: return -v;
    case UnaryOp::abs: return std::fabs(v);
    case UnaryOp::sigmoid: return 1 / (1 + std::exp(-v));
    case UnaryOp::tanh: return std::tanh(v);
    case UnaryOp::silu: return v / (1 + std::exp(-v));
    case UnaryOp::reciprocal: return 1 / v;
  }
  return 0;
}

}  // namespace testing_support
