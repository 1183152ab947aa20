#pragma once
// The elementwise derivatives of backward passes (GradOp in plan.hpp), once, for the CPU
// kernel (cpu/grad_map_cpu.cpp) and the CUDA kernel (cuda/grad_map_cuda.cu). C is the
// compute type: double, float, or int64 for integer dtypes (where only the functions the
// planner lets through on integers are meaningful). Sources: dy, then v1, v2 as GradOp's
// kind lists them (unused ones are 0).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "einexpr/codegen/plan.hpp"

#if defined(__CUDACC__)
#define EINEXPR_GRAD_HD __host__ __device__ inline
#else
#define EINEXPR_GRAD_HD inline
#endif

namespace einexpr::grad {

/// dy · f'(v) for a unary f; v is y = f(x) where unary_gradient_reads_y(f), else x.
template <class C>
EINEXPR_GRAD_HD C unary(UnaryOp f, C dy, C v) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (f) {
      case UnaryOp::relu: return v > C(0) ? dy : C(0);
      case UnaryOp::gelu: {  // d/dx 0.5·x·(1 + tanh(u)), u = k·(x + 0.044715·x³)
        const C k = C(0.7978845608028654);
        const C t = std::tanh(k * (v + C(0.044715) * v * v * v));
        return dy * (C(0.5) * (C(1) + t) + C(0.5) * v * (C(1) - t * t) * k * (C(1) + C(3 * 0.044715) * v * v));
      }
      case UnaryOp::exp: return dy * v;
      case UnaryOp::log: return dy / v;
      case UnaryOp::square: return dy * C(2) * v;
      case UnaryOp::sqrt: return dy / (C(2) * v);
      case UnaryOp::rsqrt: return C(-0.5) * dy * v * v * v;
      case UnaryOp::neg: return -dy;
      case UnaryOp::abs: return v > C(0) ? dy : v < C(0) ? -dy : C(0);
      case UnaryOp::sigmoid: return dy * v * (C(1) - v);
      case UnaryOp::tanh: return dy * (C(1) - v * v);
      case UnaryOp::silu: {
        const C s = C(1) / (C(1) + std::exp(-v));
        return dy * s * (C(1) + v * (C(1) - s));
      }
      case UnaryOp::reciprocal: return -dy * v * v;
      case UnaryOp::gelu_erf: {  // d/dx x·Phi(x) = Phi(x) + x·phi(x)
        const C phi = C(0.3989422804014327) * std::exp(C(-0.5) * v * v);
        return dy * (C(0.5) * (C(1) + std::erf(v * C(0.7071067811865476))) + v * phi);
      }
      case UnaryOp::erf: return dy * C(1.1283791670955126) * std::exp(-v * v);  // 2/sqrt(pi)·exp(-x²)
      case UnaryOp::softplus: {  // torch's softplus_backward (beta 1, threshold 20)
        if (v > C(20)) return dy;
        const C z = std::exp(v);
        return dy * z / (z + C(1));
      }
    }
    return dy;
  } else {  // integers: relu, neg, abs, square (wrapping)
    using U = std::uint64_t;
    switch (f) {
      case UnaryOp::relu: return v > 0 ? dy : C(0);
      case UnaryOp::neg: return C(U(0) - U(dy));
      case UnaryOp::abs: return v > 0 ? dy : v < 0 ? C(U(0) - U(dy)) : C(0);
      case UnaryOp::square: return C(U(dy) * U(2) * U(v));
      default: return dy;
    }
  }
}

/// One element of a GradOp: dy and the sources v1, v2 as the kind lists them.
template <class C>
EINEXPR_GRAD_HD C apply(const GradOp& op, C dy, C v1, C v2) {
  switch (op.kind) {
    case GradOp::Kind::scale: return dy * static_cast<C>(op.scalar);
    case GradOp::Kind::unary: return unary(op.fn, dy, v1);
    case GradOp::Kind::select_equal: return v1 == v2 ? dy : C(0);  // srcs dY, X, Y
    case GradOp::Kind::prod: return dy * v1 / v2;                  // srcs dY, Y, X
    case GradOp::Kind::div_rhs: return -(dy * v1 / v2);            // srcs dY, Y, B
    case GradOp::Kind::select: {                                   // srcs dY, A, B
      const C mine = op.operand == 0 ? v1 : v2, other = op.operand == 0 ? v2 : v1;
      const bool wins = op.of == BinaryOp::maximum ? mine > other : mine < other;
      if (wins) return dy;
      return mine == other ? dy / C(2) : C(0);
    }
    case GradOp::Kind::centered: return dy * static_cast<C>(op.scalar) * (v1 - v2);  // srcs dY, X, M
    case GradOp::Kind::softmax: {                                                     // srcs dY, X, Y
      if constexpr (std::is_floating_point_v<C>) return dy * std::exp(v1 - v2);
      else return dy;  // the planner allows logsumexp on floats only
    }
  }
  return dy;
}

}  // namespace einexpr::grad
