#pragma once
// The backward pass of a planned op: its gradient expressions, derived as pattern text
// from the forward plan (op, pattern, reduction, input shapes), and what they cost.
//
//   einsum  "A, B -> C"         dA = einsum(dY, B, 'C, B -> A'), one contraction per input
//                               (any number of operands: dX_i = einsum(dY, the others -> X_i));
//                               an axis of X_i found nowhere else is summed in the forward,
//                               so its gradient is then repeated over it
//   rearrange                   the inverse rearrange (the pattern's sides swapped)
//   reduce sum / mean           a repeat (sides swapped); mean first scales dY by 1/n
//   reduce max / min            a masked scatter: where(X == Y, dY, 0), Y and dY broadcast
//                               to X's shape; costed as a compare and a select per input
//                               element (2 FLOPs), reading X, Y, dY once, writing dX.
//                               Ties all receive dY (a mask, not torch's even split).
//   reduce prod                 dY · Y / X per input element (2 FLOPs; zeros in X ignored)
//   reduce var / std            t0 = the mean (a reduce), then dY · 2(X - t0)/(n - c) per
//                               input element (3 FLOPs); std: dY · (X - t0)/((n - c)·Y) (4)
//   reduce logsumexp            dY · exp(X - Y) per input element (3 FLOPs: the softmax)
//   repeat                      a sum reduction (sides swapped)
//   map f(X)                    dY · f'(X) per element (codegen/cost/elementwise_flops.cpp);
//                               with a pattern, in Y's layout, then the inverse rearrange
//   map f(A, B)                 the same per operand, then a sum over the axes it was
//                               broadcast along
// Expressions of the pattern language are planned with planner.hpp and costed with cost();
// elementwise derivatives have no step of their own and are costed per element directly.
// Tensors are named dY (the output's gradient), Y (the forward output), X (the input of a
// one-input op) or A, B, C, ... (the inputs of einsum and binary maps).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/codegen/planner.hpp"

namespace einexpr {

/// A tensor a gradient stage reads or makes.
struct GradientTensor {
  std::string name;             // "dY", "B", "X", or an earlier stage's result ("t0")
  Shape shape;
  std::vector<AxisName> axes;   // one per dim, as in Value::axes
  friend bool operator==(const GradientTensor&, const GradientTensor&) = default;
};

/// One expression of a gradient.
///   op "einsum" / "rearrange" / "repeat" / "reduce": `pattern` is that op's pattern; the
///       stage is planned with planner.hpp (contiguous operands) and costed with cost()
///   op "elementwise": `pattern` is the per-element expression ("dY · (X > 0)"); costs
///       flops_per_element · numel(result), reads each operand once, writes the result
struct GradientStage {
  std::string op;
  std::string pattern;
  Reduction reduction = Reduction::sum;  // op "reduce"
  AxisLengths lengths;                   // lengths the pattern needs (a repeat's new axes)
  std::vector<GradientTensor> operands;
  GradientTensor result;
  Count flops_per_element;               // op "elementwise"
  /// "einsum(dY, B, 'b k, d k -> b d')", "repeat(dY, 'b h -> b s h', s=16)", "dY · (X > 0)".
  std::string str() const;
  friend bool operator==(const GradientStage&, const GradientStage&) = default;
};

/// The gradient with respect to one input: stages in order (a later stage reads an
/// earlier one's result); no stages when the gradient is dY itself.
struct GradientExpr {
  std::string input;                     // "operand 1" (operands count from 1, as in errors)
  std::vector<GradientStage> stages;
  /// The stages nested into one expression: "repeat(einsum(dY, B, '...'), '...', j=4)".
  std::string str() const;
};

/// dX_operand of an einsum as pattern text: "A, B -> C" gives "C, B -> A" for the first operand
/// and "C, A -> B" for operand 1 (dY first, then the other operands in order).
/// Throws Error for a pattern without "->" or an operand out of range.
std::string einsum_gradient_pattern(std::string_view pattern, std::size_t operand);

/// The pattern with its sides swapped: "b (h d) -> b h d" gives "b h d -> b (h d)".
std::string swap_sides(std::string_view pattern);

/// The gradient expressions of every input of `forward`. Throws Error naming what is not
/// supported: an einsum that takes a diagonal (a name twice in one operand), reduce
/// any/all (boolean), ops other than einsum, rearrange, reduce, repeat and maps.
std::vector<GradientExpr> gradient_expressions(const Plan& forward);

/// Plans a stage of the pattern language: parse, check, then plan_einsum / plan_rearrange
/// / plan_repeat / plan_reduce on contiguous operands of the stage's shapes.
Plan plan_gradient_stage(const GradientStage& stage, DType dtype);

/// How backward_cost plans a stage (plan_gradient_stage by default; tests pass their own).
using GradientPlanner = std::function<Plan(const GradientStage&, DType)>;

/// The cost of one stage: planned and costed, or, for "elementwise", costed directly.
Cost gradient_stage_cost(const GradientStage& stage, DType dtype, const GradientPlanner& planner);

/// backward_cost(forward) with another planner.
BackwardCost backward_cost(const Plan& forward, const GradientPlanner& planner);

}  // namespace einexpr
