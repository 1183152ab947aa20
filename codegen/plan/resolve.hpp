#pragma once
// Private to codegen: from a checked pattern, the input layouts and the given lengths, the
// length of every axis and each operand seen as atoms (resolve.cpp). ShapeError messages
// name the axis, both sizes and the operand.
#include <map>
#include <span>
#include <string>
#include <vector>

#include "plan/builder.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/ast.hpp"

namespace einexpr::detail {

/// rearrange / reduce / repeat: one input.
struct SingleResolution {
  AtomView input;                     // the input's atoms (buffer 0)
  std::vector<AxisName> input_axes;   // the input's dims as the pattern names them
  std::vector<OutDim> output;         // the right side's dims
  std::vector<AtomDim> new_atoms;     // repeat: atoms only on the right (stride 0)
};
SingleResolution resolve_single(const ast::Pattern& pattern, Op op, const Layout& input,
                                const AxisLengths& lengths);

/// einsum / map: one or more inputs, ellipsis broadcasting, diagonals.
struct MultiResolution {
  std::vector<AtomView> inputs;                   // one per operand (buffer i)
  std::vector<std::vector<AxisName>> input_axes;  // each operand's dims as named
  std::vector<OutDim> output;
  std::map<std::string, std::int64_t, std::less<>> lengths;  // every atom
};
MultiResolution resolve_multi(const ast::Pattern& pattern, std::span<const Layout> inputs,
                              const AxisLengths& lengths);

/// Every atom of `outs`, in order.
std::vector<std::string> flatten(const std::vector<OutDim>& outs);

}  // namespace einexpr::detail
