// Elementwise maps: f(x) over a tensor, f(x) with a pattern that permutes, splits or merges
// axes around it ("b s h -> b h s"), and f(x, y) with named broadcasting ("b s h, h -> b s h").
// Each is one MapStep writing a new contiguous buffer; operands broadcast by stride 0.
#include <algorithm>

#include "plan/builder.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/resolve.hpp"
#include "plan/resolve_common.hpp"

namespace einexpr {

using detail::AtomDim;
using detail::AtomView;
using detail::PlanBuilder;

namespace {

/// Every function but relu, abs, neg and square needs a floating dtype.
bool float_only(UnaryOp op) {
  switch (op) {
    case UnaryOp::relu: case UnaryOp::abs: case UnaryOp::neg: case UnaryOp::square: return false;
    case UnaryOp::gelu: case UnaryOp::exp: case UnaryOp::log: case UnaryOp::sqrt: case UnaryOp::rsqrt:
    case UnaryOp::sigmoid: case UnaryOp::tanh: case UnaryOp::silu: case UnaryOp::reciprocal:
    case UnaryOp::gelu_erf: case UnaryOp::erf: case UnaryOp::softplus: return true;
  }
  return true;
}

void check_map_dtype(const char* fn, bool needs_float, DType dtype) {
  if (dtype == DType::boolean)
    throw DTypeError(std::string("map '") + fn + "' on bool tensors is not supported; convert with .to() first");
  if (needs_float && is_integer(dtype))
    throw DTypeError(std::string("map '") + fn + "' needs a floating dtype, not " + std::string(name(dtype)) +
                     "; convert with .to(DType::f32) first");
}

}  // namespace

Plan plan_unary(UnaryOp op, const Layout& input, DType dtype) {
  check_map_dtype(name(op), float_only(op), dtype);
  AxisTable table;
  std::vector<DimAxes> dims;  // the input's dims, as '...' would name them
  for (AxisId id : detail::resolving::ellipsis_axes(table, input.shape)) dims.push_back({id});
  PlanBuilder b(Op::map, "", dtype, std::move(table));
  const int x = b.add_input(input, dims);
  const int dst = b.new_temp_value(input.shape, contiguous_strides(input.shape), dims);
  b.add_step(MapStep{{x}, dst, op});
  return std::move(b).finish(dst);
}

Plan plan_binary(const ast::Pattern& pattern, BinaryOp op, std::span<const Layout> inputs, DType dtype,
                 const AxisLengths& lengths) {
  return plan_map(pattern, op, inputs, dtype, lengths);
}

Plan plan_map(const ast::Pattern& pattern, MapFunction function, std::span<const Layout> inputs, DType dtype,
              const AxisLengths& lengths) {
  const std::string fn = std::visit([](auto op) { return std::string(name(op)); }, function);
  const auto* unary = std::get_if<UnaryOp>(&function);
  check_map_dtype(fn.c_str(), unary != nullptr && float_only(*unary), dtype);
  const std::size_t arity = unary != nullptr ? 1 : 2;
  if (inputs.size() != arity || pattern.operands.size() != arity)
    throw ShapeError("map '" + fn + "' takes " + std::to_string(arity) + (arity == 1 ? " operand" : " operands") +
                     ", got " + std::to_string(pattern.operands.size()) + " in the pattern and " +
                     std::to_string(inputs.size()) + (inputs.size() == 1 ? " tensor" : " tensors"));
  auto r = detail::resolve_multi(pattern, inputs, lengths);
  PlanBuilder b(Op::map, pattern.text, dtype, std::move(r.axes));
  for (std::size_t i = 0; i < inputs.size(); ++i) b.add_input(inputs[i], r.input_dims[i]);
  const detail::Axes out = detail::flatten(r.output);
  std::vector<int> srcs;
  for (std::size_t i = 0; i < r.inputs.size(); ++i) {
    const AtomView& v = r.inputs[i];
    for (const AtomDim& a : v.dims)
      if (std::find(out.begin(), out.end(), a.id) == out.end())
        throw ShapeError("map '" + fn + "': axis " + b.axes().name(a.id) + " of operand " + std::to_string(i + 1) +
                         " is not in the output (a map sums nothing; use einsum or reduce)");
    AtomView bcast{-1, v.buffer, v.offset, {}};
    for (AxisId n : out) {
      const int k = v.index_of(n);
      bcast.dims.push_back(k >= 0 ? v.dims[static_cast<std::size_t>(k)] : AtomDim{n, b.axes().length(n), 0});
    }
    srcs.push_back(b.emit(bcast).value);
  }
  const Layout l = b.value(srcs[0]).layout;  // a copy: new_temp_value grows the value list
  const int dst = b.new_temp_value(l.shape, contiguous_strides(l.shape), b.value(srcs[0]).dims);
  b.add_step(MapStep{srcs, dst, std::visit([](auto op) -> std::variant<UnaryOp, BinaryOp, GradOp> { return op; }, function)});
  AtomView d{dst, b.value(dst).buffer, 0, {}};
  const Strides s = contiguous_strides(l.shape);
  for (std::size_t i = 0; i < out.size(); ++i) d.dims.push_back({out[i], l.shape[i], s[i]});
  const int result = b.merge(d, r.output);
  return std::move(b).finish(result);
}

std::vector<Shape> operand_shapes(const ast::Pattern& pattern, const AxisLengths& sizes) {
  auto size_of = [&](const std::string& n) {
    for (const auto& [name, len] : sizes)
      if (name == n) return len;
    throw ShapeError("the size of axis " + n + " is not given");
  };
  std::vector<Shape> shapes;
  for (const ast::Operand& op : pattern.operands) {
    Shape s;
    for (const ast::Term& t : op.terms) {
      if (const auto* n = std::get_if<ast::Named>(&t)) {
        s.push_back(size_of(n->name));
      } else if (const auto* a = std::get_if<ast::Anonymous>(&t)) {
        s.push_back(a->length);
      } else if (std::holds_alternative<ast::Unit>(t)) {
        s.push_back(1);
      } else if (std::holds_alternative<ast::Ellipsis>(t)) {
        throw ShapeError("'...' needs tensors to know what it stands for; name every axis to cost from sizes");
      } else {
        const auto& g = std::get<ast::Group>(t);
        std::int64_t len = g.concat ? 0 : 1;  // a concatenation's parts add up, a composition's multiply
        for (const ast::Atom& atom : g.atoms) {
          std::int64_t part = 0;
          if (const auto* gn = std::get_if<ast::Named>(&atom)) part = size_of(gn->name);
          else if (const auto* ga = std::get_if<ast::Anonymous>(&atom)) part = ga->length;
          else throw ShapeError("'...' needs tensors to know what it stands for; name every axis to cost from sizes");
          len = g.concat ? checked_add(len, part) : checked_mul(len, part);
        }
        s.push_back(len);
      }
    }
    shapes.push_back(std::move(s));
  }
  return shapes;
}

}  // namespace einexpr
