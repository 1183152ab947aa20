// Costs from a pattern and sizes alone: contiguous layouts of the operands' shapes, planned
// the way the ops plan them, then cost(). No tensor is allocated.
#include "einexpr/cost.hpp"

#include <set>

#include "einexpr/parser/check.hpp"
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

Plan plan_sizes(std::string_view op_text, std::string_view pattern, const AxisLengths& sizes, DType dtype,
                Reduction reduction, std::int64_t correction) {
  const Op op = op_text == "einsum"      ? Op::einsum
                : op_text == "rearrange" ? Op::rearrange
                : op_text == "reduce"    ? Op::reduce
                : op_text == "repeat"    ? Op::repeat
                                         : throw Error("unknown op '" + std::string(op_text) +
                                                       "' (expected einsum, rearrange, reduce or repeat)");
  const ast::Pattern p = parse(pattern);
  check(p, op);
  const AxisLengths used = used_sizes(p, sizes);
  ast::Pattern left = p;
  left.output = {};
  const std::vector<Layout> in = layouts_of(operand_shapes(left, used));
  switch (op) {
    case Op::einsum: return plan_einsum(p, in, dtype, used);
    case Op::rearrange: return plan_rearrange(p, in.at(0), dtype, used);
    case Op::reduce: return plan_reduce(p, in.at(0), dtype, reduction, used, correction);
    default: return plan_repeat(p, in.at(0), dtype, used);
  }
}

/// The map's pattern, checked, and contiguous layouts of its operands' shapes.
struct MapOperands {
  ast::Pattern pattern;
  AxisLengths used;
  std::vector<Layout> layouts;
};
MapOperands map_operands(std::string_view text, const AxisLengths& sizes) {
  MapOperands m{parse(text), {}, {}};
  check(m.pattern, Op::map);
  m.used = used_sizes(m.pattern, sizes);
  ast::Pattern left = m.pattern;
  left.output = {};
  m.layouts = layouts_of(operand_shapes(left, m.used));
  return m;
}

}  // namespace

Plan plan_from_sizes(std::string_view op, std::string_view pattern, const AxisLengths& sizes, DType dtype,
                     Reduction reduction, std::int64_t correction) {
  return with_context(op, pattern, sizes,
                      [&] { return plan_sizes(op, pattern, sizes, dtype, reduction, correction); });
}

Plan plan_map_from_sizes(std::string_view pattern, std::string_view function, const AxisLengths& sizes,
                         DType dtype) {
  return with_context("map", pattern, sizes, [&] {
    const MapOperands m = map_operands(pattern, sizes);
    const auto f = parse_map_function(function, m.layouts.size());
    if (const auto* unary = std::get_if<UnaryOp>(&f)) return plan_unary(m.pattern, *unary, m.layouts[0], dtype, m.used);
    return plan_binary(m.pattern, std::get<BinaryOp>(f), m.layouts, dtype, m.used);
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
  return cost(plan_from_sizes("reduce", pattern, sizes, dtype, reduction, correction));
}
Cost cost_repeat(std::string_view pattern, const AxisLengths& sizes, DType dtype) {
  return cost(plan_from_sizes("repeat", pattern, sizes, dtype));
}

Cost cost_map(UnaryOp function, const Shape& shape, DType dtype) {
  return cost(plan_unary(function, Layout::contiguous(shape), dtype));
}

Cost cost_map(std::string_view pattern, UnaryOp function, const AxisLengths& sizes, DType dtype) {
  return with_context("cost_map", pattern, sizes, [&] {
    const MapOperands m = map_operands(pattern, sizes);
    return cost(plan_unary(m.pattern, function, m.layouts.at(0), dtype, m.used));
  });
}

Cost cost_map(std::string_view pattern, BinaryOp function, const AxisLengths& sizes, DType dtype) {
  return with_context("cost_map", pattern, sizes, [&] {
    const MapOperands m = map_operands(pattern, sizes);
    return cost(plan_binary(m.pattern, function, m.layouts, dtype, m.used));
  });
}

}  // namespace einexpr
