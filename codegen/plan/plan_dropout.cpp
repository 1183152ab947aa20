// dropout: a RandomStep draws the keep mask from the seed (codegen/random.hpp), a MaskStep
// scales what it keeps by 1/(1-p). A model program plans the two as statements of their own
// (DropoutPart::mask, then apply), so that the backward keeps the 1-byte mask; the whole op
// plans both, and its gradient draws the mask again from the same seed.
#include <cmath>
#include <string>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/builder.hpp"
#include "plan/resolve_common.hpp"

namespace einexpr {

using detail::PlanBuilder;

Plan plan_dropout(const ast::Pattern* pattern, const DropoutOptions& o, std::span<const Layout> inputs,
                  std::span<const DType> dtypes) {
  if (!(o.p >= 0 && o.p < 1))
    throw Error("dropout's probability " + std::to_string(o.p) + " is outside [0, 1)");
  if (inputs.size() != 2)
    throw ShapeError("dropout takes two tensors (" +
                     std::string(o.part == DropoutPart::apply ? "x and its mask" : "x and its 0-d i64 seed") + "), got " +
                     std::to_string(inputs.size()));
  const DType dtype = dtypes.empty() ? DType::f32 : dtypes[0];
  const DType second = dtypes.size() > 1 ? dtypes[1] : (o.part == DropoutPart::apply ? DType::boolean : DType::i64);
  if (!is_floating(dtype))
    throw DTypeError("dropout needs a floating tensor, not " + std::string(name(dtype)));
  const Shape& shape = inputs[0].shape;
  if (pattern != nullptr && !pattern->operands.empty()) {  // x's dims as named (check() made the output the same)
    const auto& terms = pattern->operands[0].terms;
    bool ellipsis = false;
    for (const ast::Term& t : terms) ellipsis = ellipsis || std::holds_alternative<ast::Ellipsis>(t);
    if (ellipsis ? terms.size() - 1 > shape.size() : terms.size() != shape.size())
      throw ShapeError("dropout's pattern names " + std::to_string(terms.size() - (ellipsis ? 1 : 0)) +
                       " dims but x has " + std::to_string(shape.size()) + " (shape " + shape_str(shape) + ")");
  }
  if (o.part == DropoutPart::apply) {
    if (second != DType::boolean)
      throw DTypeError("dropout's mask is bool, not " + std::string(name(second)));
    if (inputs[1].shape != shape)
      throw ShapeError("dropout's mask has shape " + shape_str(inputs[1].shape) + " but x has " + shape_str(shape));
  } else {
    if (second != DType::i64)
      throw DTypeError("dropout's seed is a 0-d i64, not " + std::string(name(second)));
    if (!inputs[1].shape.empty())
      throw ShapeError("dropout's seed is 0-d (one i64), not of shape " + shape_str(inputs[1].shape));
  }
  AxisTable table;
  std::vector<DimAxes> dims;
  bool named = pattern != nullptr && !pattern->operands.empty() && pattern->operands[0].terms.size() == shape.size();
  if (named)
    for (const ast::Term& t : pattern->operands[0].terms) named = named && std::holds_alternative<ast::Named>(t);
  if (named) {  // x's dims by the pattern's names ("b s d"), for printing and costs
    for (std::size_t d = 0; d < shape.size(); ++d)
      dims.push_back({table.add(Axis{std::get<ast::Named>(pattern->operands[0].terms[d]).name, shape[d], AxisKind::named})});
  } else {
    for (AxisId id : detail::resolving::ellipsis_axes(table, shape)) dims.push_back({id});
  }
  PlanBuilder b(Op::dropout, pattern != nullptr ? pattern->text : std::string(), dtype, std::move(table));
  const int x = b.add_input(inputs[0], dims);
  const int second_value = b.add_input(inputs[1], o.part == DropoutPart::apply ? dims : std::vector<DimAxes>{}, second);
  if (o.p == 0 && o.part != DropoutPart::mask) return std::move(b).finish(x);  // torch: the input itself
  int mask = second_value;
  if (o.part != DropoutPart::apply) {
    mask = b.new_temp_value(shape, contiguous_strides(shape), dims, DType::boolean);
    b.add_step(RandomStep{second_value, mask, o.p});
    if (o.part == DropoutPart::mask) return std::move(b).finish(mask);
  }
  const int y = b.new_temp_value(shape, contiguous_strides(shape), dims);
  b.add_step(MaskStep{x, mask, y, 1.0 / (1.0 - o.p)});
  return std::move(b).finish(y);
}

}  // namespace einexpr
