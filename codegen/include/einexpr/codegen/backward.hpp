#pragma once
// The backward pass of a planned op, derived from the forward Plan (its AxisTable, values
// and steps), never from pattern text: one gradient Plan per input, built with the same
// planner pieces as forward plans, so it is costed by cost() and run by lower().
//
//   einsum  dX_i = the contraction of dY with the other operands down to X_i's axes
//           (planned like any einsum: private axes summed first, the cheapest order, GEMMs);
//           an axis only X_i has was summed by the forward, so the result is broadcast
//           along it; an axis X_i holds twice (a diagonal) gets the result written back on
//           the diagonal of zeros (an EmbedStep); a dim '...' broadcast from length 1 is
//           summed back to 1. Scalar outputs, 0-d operands, compositions: the same rules.
//   rearrange  dY laid back out in X's dims (a view where the strides allow)
//   repeat  dY summed over the new axes
//   reduce  sum: dY broadcast back over the reduced axes; mean: the same, scaled by 1/n;
//           max / min: dY where X equals the result, else 0 (every tie gets dY: a mask, not
//           torch's even split); prod: dY · Y / X (zeros in X give inf / NaN, as the formula);
//           var: dY · 2(X - mean)/(n - c); std: dY · (X - mean)/((n - c)·Y) (the mean a sum
//           of X over the reduced axes, scaled); logsumexp: dY · exp(X - Y) (the softmax)
//   map     f(X): dY · f'(X) (or f'(Y) where cheaper, plan.hpp's unary_gradient_reads_y);
//           f(A, B): the derivative per operand over Y's axes, then summed over the axes
//           the operand was broadcast along. maximum / minimum split a tie's dY evenly
//           (torch's rule).
// The tensors a gradient plan reads are its `sources`, named dY (the output's gradient), Y
// (the forward output) and X (one input) or A, B, C, ... (several).
#include <span>
#include <string>
#include <vector>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr {

/// A tensor a gradient plan reads (its inputs, in order).
struct GradientSource {
  enum class Kind : unsigned char { output_gradient, output, input };
  Kind kind = Kind::output_gradient;
  int input = -1;                  // Kind::input: the forward input it is
  std::string name;                // "dY", "Y", "X", "A", "B", ...
  friend bool operator==(const GradientSource&, const GradientSource&) = default;
};

/// The gradient with respect to one forward input.
struct Gradient {
  int input = 0;                   // the forward input (0-based)
  std::string label;               // "operand 1" (operands count from 1, as in errors)
  std::string expression;          // "einsum(dY, B, 'b k, d k -> b d')": what `plan` computes
  std::vector<GradientSource> sources;  // the plan's inputs: dY first, then what it reads
  Plan plan;                       // output: dX, with the forward input's shape
};

/// Every input's gradient. dY and Y are planned contiguous (Y's shape); a forward input
/// keeps the layout the forward plan had. Throws Error naming what has no gradient:
/// reduce any / all, and every op on bool.
std::vector<Gradient> gradients(const Plan& forward);

/// backward_cost(forward) (cost.hpp) from gradients already derived: each costed by cost().
BackwardCost backward_cost(std::span<const Gradient> gradients);

/// Runs the gradients on the CPU: `inputs` as the forward plan took them, `y` its output
/// and `dy` the output's gradient (Y's shape). Returns dX per input.
std::vector<Tensor> run_gradients(const Plan& forward, std::span<const Tensor> inputs, const Tensor& y,
                                  const Tensor& dy);
/// The same with `forward`'s gradients already derived (gradients(forward)).
std::vector<Tensor> run_gradients(const Plan& forward, std::span<const Gradient> gradients,
                                  std::span<const Tensor> inputs, const Tensor& y, const Tensor& dy);

}  // namespace einexpr
