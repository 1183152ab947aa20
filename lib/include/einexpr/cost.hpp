#pragma once
// Costs from a pattern and axis sizes alone, with no tensors: the same path as the ops
// up to the Plan, then cost(). Sizes name every axis of the pattern; compositions take
// their lengths from their parts.
//
//   Cost c = cost_einsum("b s1 h, b s2 h -> b s1 s2",
//                        {{"b", 128}, {"s1", 100}, {"s2", 200}, {"h", 128}}, DType::bf16);
//   c.flops  == 2*128*100*200*128;  c.flops_formula.str() == "2·b·h·s1·s2"
#include <string_view>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/dtype.hpp"

namespace einexpr {

Cost cost_einsum(std::string_view pattern, const AxisLengths& sizes, DType dtype = DType::f32);
Cost cost_rearrange(std::string_view pattern, const AxisLengths& sizes, DType dtype = DType::f32);
Cost cost_reduce(std::string_view pattern, Reduction reduction, const AxisLengths& sizes,
                 DType dtype = DType::f32);
Cost cost_repeat(std::string_view pattern, const AxisLengths& sizes, DType dtype = DType::f32);
/// Elementwise f(x) on a tensor of `shape`.
Cost cost_map(UnaryOp function, const Shape& shape, DType dtype = DType::f32);
Cost cost_map(std::string_view pattern, BinaryOp function, const AxisLengths& sizes,
              DType dtype = DType::f32);

/// The plan of an op from sizes alone (contiguous inputs), as `einexpr explain` prints it.
/// op: "einsum", "rearrange", "reduce", "repeat"; reduction only for "reduce".
Plan plan_from_sizes(std::string_view op, std::string_view pattern, const AxisLengths& sizes,
                     DType dtype = DType::f32, Reduction reduction = Reduction::sum);

}  // namespace einexpr
