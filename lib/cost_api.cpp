// Costs from a pattern and sizes alone: contiguous layouts of the operands' shapes, planned
// the way the ops plan them, then cost(). No tensor is allocated.
#include "einexpr/cost.hpp"

#include <set>

#include "einexpr/parser/check.hpp"
#include "einexpr/parser/ops.hpp"
#include "einexpr/parser/parse.hpp"
#include "engine.hpp"

namespace einexpr {

namespace {

/// The sizes of the axes the pattern names (the others would be "unused" to a planner).
AxisLengths used_sizes(const ast::Pattern& p, const AxisLengths& sizes) {
  std::set<std::string> names;
  auto add_atom = [&](const ast::Atom& a) {
    if (const auto* n = std::get_if<ast::Named>(&a)) names.insert(n->name);
  };
  auto add_operand = [&](const ast::Operand& o) {
    for (const ast::Term& t : o.terms) {
      if (const auto* n = std::get_if<ast::Named>(&t)) names.insert(n->name);
      if (const auto* g = std::get_if<ast::Group>(&t))
        for (const ast::Atom& a : g->atoms) add_atom(a);
    }
  };
  for (const ast::Operand& o : p.operands) add_operand(o);
  add_operand(p.output);
  for (const ast::Operand& o : p.more_outputs) add_operand(o);
  AxisLengths out;
  for (const auto& kv : sizes)
    if (names.count(kv.first)) out.push_back(kv);
  return out;
}

template <class F>
auto with_context(std::string_view what, std::string_view pattern, const AxisLengths& sizes, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (Error& e) {
    e.add_context(engine::context(what, pattern, {}, &sizes));
    throw;
  }
}

std::vector<Layout> layouts_of(const std::vector<Shape>& shapes) {
  std::vector<Layout> l;
  for (const Shape& s : shapes) l.push_back(Layout::contiguous(s));
  return l;
}

/// The spec an op's name stands for (the registry's rows: "softmax" is normalize softmax).
OpSpec parse_op(std::string_view text) {
  const OpRow* row = find_op_row(text);
  if (row == nullptr) throw Error("unknown op '" + std::string(text) + "' (expected one of " + op_row_names() + ")");
  OpSpec spec = OpSpec::of(row->op);
  if (auto* n = spec.get_if<NormalizeOptions>()) {
    n->kind = parse_normalization(row->name);
    n->eps = default_eps(n->kind);
  }
  return spec;
}

Plan plan_sizes(OpSpec spec, std::string_view pattern, const AxisLengths& sizes, DType dtype) {
  const ast::Pattern p = parse_pattern(spec.op(), pattern);
  spec.lengths = used_sizes(p, sizes);
  ast::Pattern left = p;
  left.output = {};
  left.more_outputs.clear();
  const std::vector<Layout> in = layouts_of(operand_shapes(left, spec.lengths));
  std::vector<DType> dtypes(in.size(), dtype);
  const int index = op_row(spec.op()).index_operand;  // indices cost as i64
  if (index >= 0 && static_cast<std::size_t>(index) < dtypes.size()) dtypes[static_cast<std::size_t>(index)] = DType::i64;
  return plan(spec, &p, in, std::span<const DType>(dtypes));
}

}  // namespace

Plan plan_from_sizes(const OpSpec& spec, std::string_view pattern, const AxisLengths& sizes, DType dtype) {
  return with_context(spec.str(), pattern, sizes, [&] { return plan_sizes(spec, pattern, sizes, dtype); });
}

Plan plan_from_sizes(std::string_view op, std::string_view pattern, const AxisLengths& sizes, DType dtype,
                     Reduction reduction) {
  return with_context(op, pattern, sizes, [&] {
    OpSpec spec = parse_op(op);
    if (spec.op() == Op::map) throw Error("a map's cost needs its function: plan_from_sizes(OpSpec::map(f), ...)");
    if (auto* r = spec.get_if<ReduceOptions>()) r->reduction = reduction;
    return plan_sizes(spec, pattern, sizes, dtype);
  });
}

Cost cost_einsum(std::string_view pattern, const AxisLengths& sizes, DType dtype) {
  return cost(plan_from_sizes("einsum", pattern, sizes, dtype));
}
Cost cost_rearrange(std::string_view pattern, const AxisLengths& sizes, DType dtype) {
  return cost(plan_from_sizes("rearrange", pattern, sizes, dtype));
}
Cost cost_reduce(std::string_view pattern, Reduction reduction, const AxisLengths& sizes, DType dtype,
                 std::int64_t correction) {
  return cost(plan_from_sizes(OpSpec::reduce(reduction, {}, correction), pattern, sizes, dtype));
}
Cost cost_repeat(std::string_view pattern, const AxisLengths& sizes, DType dtype) {
  return cost(plan_from_sizes("repeat", pattern, sizes, dtype));
}

Cost cost_normalize(std::string_view pattern, Normalization kind, const AxisLengths& sizes, DType dtype, double eps) {
  return cost(plan_from_sizes(OpSpec::normalize(kind, eps), pattern, sizes, dtype));
}

Cost cost_map(UnaryOp function, const Shape& shape, DType dtype) {
  return cost(plan_unary(function, Layout::contiguous(shape), dtype));
}

Cost cost_map(std::string_view pattern, UnaryOp function, const AxisLengths& sizes, DType dtype) {
  return cost(plan_from_sizes(OpSpec::map(function), pattern, sizes, dtype));
}

Cost cost_map(std::string_view pattern, BinaryOp function, const AxisLengths& sizes, DType dtype) {
  return cost(plan_from_sizes(OpSpec::map(function), pattern, sizes, dtype));
}

}  // namespace einexpr
