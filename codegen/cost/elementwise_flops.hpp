#pragma once
// The per-element FLOP tables of elementwise functions and of their derivatives
// (private to codegen; the forward counts are public through flops_per_element).
#include <cstdint>

#include "einexpr/codegen/plan.hpp"

namespace einexpr::detail {

/// dX = dY · f'(x) for a unary f: FLOPs per element, the expression, and which saved
/// tensors it reads besides dY (x, the forward input; y, the forward output).
struct UnaryGradientRule {
  std::uint64_t flops;
  const char* expression;  // "dY · (x > 0)"
  bool reads_x;
  bool reads_y;
};
UnaryGradientRule unary_gradient_rule(UnaryOp op) noexcept;

/// The gradient of a binary f(a, b) for one operand (0: a, 1: b). identity: it is dY
/// itself (no work, nothing moved before any broadcast reduction).
struct BinaryGradientRule {
  std::uint64_t flops;
  const char* expression;  // "dY · b"
  bool reads_a;
  bool reads_b;
  bool reads_y;
  bool identity;
};
BinaryGradientRule binary_gradient_rule(BinaryOp op, int operand) noexcept;

}  // namespace einexpr::detail
