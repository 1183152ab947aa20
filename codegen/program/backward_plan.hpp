#pragma once
// Which gradients a program needs (private to codegen/program): gradients flow from the
// outputs back toward the params only. A tensor needs a gradient when it requires one (a
// param, or computed from one) and some output depends on it; a statement's backward runs
// when its result needs a gradient, and computes the gradients of its inputs that require
// one, no others: the lecture's first layer h1 = x·w1 computes dw1 (2·B·D·E), never dx.
#include <vector>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/program_plan.hpp"

namespace einexpr::program_detail {

struct NeededGradient {
  int operand = 0;      // the statement's input (0-based)
  int tensor = 0;       // the tensor it is the gradient of
  Gradient gradient;    // its plan (backward.hpp), sources named dY, Y, X / A, B, ...
  std::string expression;  // with the program's names: "einsum(dh1, x, 'B E, B D -> D E')"
};

struct BackwardPlan {
  std::vector<bool> needs_grad;        // per tensor
  std::vector<bool> runs;              // per statement: its backward runs
  std::vector<std::vector<NeededGradient>> gradients;  // per statement
  std::vector<Count> skipped_flops;    // per statement: its gradients toward no param
  std::vector<int> contributions;      // per tensor: gradients added into its gradient (an
                                       // output's seed dY counts when others are added to it)
};

/// Derives the needed gradients of every statement. A gradient that backward.hpp cannot
/// derive is a ProgramError at its statement.
BackwardPlan plan_backward(const ProgramPlan& plan);

}  // namespace einexpr::program_detail
