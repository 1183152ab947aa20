#pragma once
// The planners: pattern (already checked) + input layouts + axis lengths + dtype -> Plan.
// ShapeError names the axis and both sizes ("axis h is 64 in operand 1 but 32 in operand 2");
// the pattern's text is in the plan for printing.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/parser/ast.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

/// Axis lengths given by name, in the order given: {{"h", 8}, {"w2", 20}}.
using AxisLengths = std::vector<std::pair<std::string, std::int64_t>>;

/// When a result may be a view of its input.
enum class Copy : unsigned char {
  if_needed,  // a view wherever the strides allow, else one copy (torch's reshape)
  never,      // always a view; ShapeError where the strides do not allow one
  always,     // always a new contiguous tensor
};

/// How an einsum of 3 or more operands is ordered into pairwise contractions.
enum class ContractionOrder : unsigned char {
  optimal,  // fewest FLOPs: exhaustive up to 6 operands, greedy beyond
  greedy,   // repeatedly the pair whose contraction is cheapest
  naive,    // left to right, as written
};

Plan plan_rearrange(const ast::Pattern& pattern, const Layout& input, DType dtype,
                    const AxisLengths& lengths = {}, Copy copy = Copy::if_needed);
/// `correction`: var and std divide by max(0, n - correction); no other reduction reads it.
/// Throws Error for a negative correction.
Plan plan_reduce(const ast::Pattern& pattern, const Layout& input, DType dtype,
                 Reduction reduction, const AxisLengths& lengths = {}, std::int64_t correction = 1);
Plan plan_repeat(const ast::Pattern& pattern, const Layout& input, DType dtype,
                 const AxisLengths& lengths = {}, Copy copy = Copy::if_needed);
Plan plan_einsum(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype,
                 const AxisLengths& lengths = {},
                 ContractionOrder order = ContractionOrder::optimal);
/// Elementwise f(x): the output is a new contiguous tensor of x's shape.
Plan plan_unary(UnaryOp op, const Layout& input, DType dtype);
/// Elementwise f(x) with a pattern ("b s h -> b h s", "b (h d) -> b h d"): one operand, its
/// axes permuted, split or merged around f as rearrange would (check() for Op::map: every
/// axis on both sides, nothing summed or repeated). The output is a new tensor (the map's
/// contiguous buffer, viewed through the output's compositions).
Plan plan_unary(const ast::Pattern& pattern, UnaryOp op, const Layout& input, DType dtype,
                const AxisLengths& lengths = {});
/// Elementwise f(x, y) with named broadcasting: "b s h, h -> b s h".
Plan plan_binary(const ast::Pattern& pattern, BinaryOp op, std::span<const Layout> inputs,
                 DType dtype, const AxisLengths& lengths = {});

/// The shape each operand of `pattern` has when its axes have `sizes` (compositions
/// multiply; anonymous axes are their number). Throws ShapeError naming a missing axis.
/// Used to cost expressions from sizes alone.
std::vector<Shape> operand_shapes(const ast::Pattern& pattern, const AxisLengths& sizes);

}  // namespace einexpr
