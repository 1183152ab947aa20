// FLOPs per element of the elementwise functions and of their derivatives: one table
// each, with where every number comes from.
//
// The rule: count the operations of the definition in plan.hpp, each +, -, ·, /,
// comparison and select as 1 (a compare-and-select such as max(x, 0) as 1) and each
// exp / log / tanh / erf / sqrt as 1 (one special-function instruction, MUFU on NVIDIA
// GPUs; a Sleef or libm call is 10-40 instructions on a CPU, but a cost model has to pick
// one number, and FLOP counters (torch's, fvcore's) count a transcendental as one op or
// not at all). Two figures come from the seeds (CS336 lecture 2) instead and win
// over the rule, because every figure of the seeds must come out of einexpr:
//   relu  1 per element ("flops = n  # n comparisons"), which is also the rule's count;
//   gelu 20 per element ("flops = 20 * n"); the tanh form counted by the rule is 9
//        (x·x, ·x, ·0.044715, +x, ·sqrt(2/pi), tanh, 1+, 0.5·x, ·).
// Backward rules (dX = dY · f'(x), the multiply by dY included) follow the same rule,
// written the way autograd computes them (reusing y = f(x) where that is cheaper):
//   relu 1 (one compare-select, the seeds' convention for relu), gelu 18 (PyTorch's
//   GeluBackward for the tanh form: 17 operations, then · dY).
#include "cost/elementwise_flops.hpp"

#include "einexpr/codegen/cost.hpp"

namespace einexpr {

Count flops_per_element(UnaryOp op) noexcept {
  switch (op) {
    case UnaryOp::relu: return 1;        // max(x, 0): the seeds
    case UnaryOp::gelu: return 20;       // the seeds (the rule would give 9)
    case UnaryOp::exp: return 1;         // exp
    case UnaryOp::log: return 1;         // log
    case UnaryOp::square: return 1;      // x·x
    case UnaryOp::sqrt: return 1;        // sqrt
    case UnaryOp::rsqrt: return 2;       // 1 / sqrt(x): sqrt, divide
    case UnaryOp::neg: return 1;         // -x
    case UnaryOp::abs: return 1;         // |x|: one select (or a sign-bit clear)
    case UnaryOp::sigmoid: return 4;     // 1 / (1 + exp(-x)): negate, exp, add, divide
    case UnaryOp::tanh: return 1;        // tanh
    case UnaryOp::silu: return 5;        // x · sigmoid(x): sigmoid 4, multiply
    case UnaryOp::reciprocal: return 1;  // 1 / x
    case UnaryOp::gelu_erf: return 5;    // 0.5·x·(1 + erf(x·(1/sqrt 2))): multiply, erf, add, multiply, multiply
    case UnaryOp::erf: return 1;         // erf
    case UnaryOp::softplus: return 4;    // x > 20 ? x : log(1 + exp(x)): the threshold's select, exp, add, log
  }
  return 1;
}

Count flops_per_element(BinaryOp) noexcept { return 1; }  // one +, -, ·, /, max or min

// A backward pass's elementwise derivative, the multiply by dY included.
Count flops_per_element(const GradOp& op) noexcept {
  switch (op.kind) {
    case GradOp::Kind::scale: return 1;                                   // dY · c
    case GradOp::Kind::unary: return detail::unary_gradient_rule(op.fn).flops;  // the table below
    case GradOp::Kind::select_equal: return 2;                            // compare, select
    case GradOp::Kind::prod: return 2;                                    // dY · Y / X
    case GradOp::Kind::div_rhs: return 3;                                 // -dY · Y / B
    case GradOp::Kind::select: return 2;  // compare, select (a tie's halving is a second select)
    case GradOp::Kind::centered: return 3;                                // dY · c · (X - M)
    case GradOp::Kind::softmax: return 3;                                 // dY · exp(X - Y)
  }
  return 1;
}

namespace detail {

UnaryGradientRule unary_gradient_rule(UnaryOp op) noexcept {
  switch (op) {
    case UnaryOp::relu: return {1, "dY · (X > 0)", true, false};
    case UnaryOp::gelu: return {18, "dY · gelu'(X)", true, false};
    case UnaryOp::exp: return {1, "dY · Y", false, true};
    case UnaryOp::log: return {1, "dY / X", true, false};
    case UnaryOp::square: return {2, "dY · 2·X", true, false};
    case UnaryOp::sqrt: return {2, "dY / (2·Y)", false, true};
    case UnaryOp::rsqrt: return {4, "-0.5 · dY · Y·Y·Y", false, true};
    case UnaryOp::neg: return {1, "-dY", false, false};
    case UnaryOp::abs: return {2, "dY · sign(X)", true, false};
    case UnaryOp::sigmoid: return {3, "dY · Y·(1 - Y)", false, true};
    case UnaryOp::tanh: return {3, "dY · (1 - Y·Y)", false, true};
    case UnaryOp::silu: return {9, "dY · s·(1 + X·(1 - s)), s = sigmoid(X)", true, false};
    case UnaryOp::reciprocal: return {3, "-dY · Y·Y", false, true};
    // Phi(X) + X·phi(X): X/sqrt 2, erf, 1+, 0.5·; X·X, ·(-0.5), exp, ·1/sqrt(2 pi), X·, +; · dY
    case UnaryOp::gelu_erf: return {11, "dY · (Phi(X) + X·phi(X))", true, false};
    // 2/sqrt(pi)·exp(-X·X): X·X, negate, exp, ·2/sqrt(pi); · dY (torch's erf backward)
    case UnaryOp::erf: return {5, "dY · 2/sqrt(pi)·exp(-X·X)", true, false};
    // torch's softplus_backward: z = exp(X), X > 20 ? dY : dY·z/(z + 1): exp, +, /, ·, select
    case UnaryOp::softplus: return {5, "dY · (X > 20 ? 1 : z/(z + 1)), z = exp(X)", true, false};
  }
  return {1, "?", true, false};
}

BinaryGradientRule binary_gradient_rule(BinaryOp op, int operand) noexcept {
  const bool a = operand == 0;
  switch (op) {
    case BinaryOp::add: return {0, "dY", false, false, false, true};
    case BinaryOp::sub:
      return a ? BinaryGradientRule{0, "dY", false, false, false, true}
               : BinaryGradientRule{1, "-dY", false, false, false, false};
    case BinaryOp::mul:
      return a ? BinaryGradientRule{1, "dY · B", false, true, false, false}
               : BinaryGradientRule{1, "dY · A", true, false, false, false};
    case BinaryOp::div:
      return a ? BinaryGradientRule{1, "dY / B", false, true, false, false}
               : BinaryGradientRule{3, "-dY · Y / B", false, true, true, false};
    case BinaryOp::maximum:
      return a ? BinaryGradientRule{1, "dY · (A >= B)", true, true, false, false}
               : BinaryGradientRule{1, "dY · (A < B)", true, true, false, false};
    case BinaryOp::minimum:
      return a ? BinaryGradientRule{1, "dY · (A <= B)", true, true, false, false}
               : BinaryGradientRule{1, "dY · (A > B)", true, true, false, false};
  }
  return {1, "?", true, true, false, false};
}

}  // namespace detail
}  // namespace einexpr
