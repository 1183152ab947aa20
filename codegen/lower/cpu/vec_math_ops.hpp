#pragma once
// vec_math.hpp's kernel for a UnaryOp (kept apart from vec_math.hpp, which the files
// compiled for AVX2 and AVX-512 include: they see no einexpr header but that one).
#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/error.hpp"
#include "vec_math.hpp"

namespace einexpr::cpu::vec {

template <class T>
Kernel<T> kernel_for(const Kernels<T>& k, UnaryOp op) {
  switch (op) {
    case UnaryOp::relu: return k.relu;
    case UnaryOp::gelu: return k.gelu;
    case UnaryOp::exp: return k.exp;
    case UnaryOp::log: return k.log;
    case UnaryOp::square: return k.square;
    case UnaryOp::sqrt: return k.sqrt;
    case UnaryOp::rsqrt: return k.rsqrt;
    case UnaryOp::neg: return k.neg;
    case UnaryOp::abs: return k.abs;
    case UnaryOp::sigmoid: return k.sigmoid;
    case UnaryOp::tanh: return k.tanh;
    case UnaryOp::silu: return k.silu;
    case UnaryOp::reciprocal: return k.reciprocal;
    case UnaryOp::gelu_erf: return k.gelu_erf;
    case UnaryOp::erf: return k.erf;
    case UnaryOp::softplus: return k.softplus;
  }
  throw InternalError("vec_math: unknown unary function", __FILE__, __LINE__);
}

}  // namespace einexpr::cpu::vec
