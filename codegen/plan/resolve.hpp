#pragma once
// Private to codegen: from a checked pattern, the input layouts and the given lengths, the
// AxisTable of the expression (every atomic axis an id, with its length) and each operand
// seen as atoms (resolve.cpp, resolve_multi.cpp). ShapeError messages name the axis, both
// sizes and the operand.
#include <span>
#include <vector>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/ast.hpp"
#include "plan/builder.hpp"

namespace einexpr::detail {

/// rearrange / reduce / repeat: one input.
struct SingleResolution {
  AxisTable axes;
  AtomView input;                     // the input's atoms (buffer 0)
  std::vector<DimAxes> input_dims;    // the input's dims as the pattern names them
  std::vector<OutDim> output;         // the right side's dims
  std::vector<AtomDim> new_atoms;     // repeat: atoms only on the right (stride 0)
};
SingleResolution resolve_single(const ast::Pattern& pattern, Op op, const Layout& input,
                                const AxisLengths& lengths);

/// einsum / map: one or more inputs, ellipsis broadcasting, diagonals.
struct MultiResolution {
  AxisTable axes;
  std::vector<AtomView> inputs;                   // one per operand (buffer i)
  std::vector<std::vector<DimAxes>> input_dims;   // each operand's dims as named
  std::vector<OutDim> output;
};
MultiResolution resolve_multi(const ast::Pattern& pattern, std::span<const Layout> inputs,
                              const AxisLengths& lengths);

}  // namespace einexpr::detail
