// The indexed ops (einx's notation: the indexed axis of the first operand in brackets):
//   get_at        "[v] d, b s -> b s d"          one GatherStep into a new buffer
//   add_at        "[v] d, b s, b s d -> [v] d"   the table copied, then one ScatterAddStep into it
//   cross_entropy "b s [v], b s -> b s"          one CrossEntropyStep (each row's log-sum-exp
//                                                and the target's logit, read once)
// The operands are resolved as einsum's (resolve_multi: ellipses, compositions, lengths); the
// indices are an integer tensor whose axes join the table's others.
#include <algorithm>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/builder.hpp"
#include "plan/resolve.hpp"

namespace einexpr {

using detail::AtomDim;
using detail::AtomView;
using detail::Axes;
using detail::PlanBuilder;

namespace {

/// The name of the bracketed axis of operand `operand` (check() made sure there is one).
std::string bracketed_name(const ast::Pattern& p, const ast::Operand& operand) {
  for (const auto& t : operand.terms)
    if (ast::in_brackets(p, t))
      if (const auto* n = std::get_if<ast::Named>(&t)) return n->name;
  throw InternalError("an indexed pattern without its bracketed axis", __FILE__, __LINE__);
}

void check_index_dtype(const char* op, DType index) {
  if (index != DType::i64 && index != DType::i32)
    throw DTypeError(std::string(op) + ": the indices are " + std::string(name(index)) +
                     "; they must be an integer tensor, i64 or i32: convert with .to(DType::i64) first");
}

void check_count(const char* op, std::span<const Layout> inputs, std::size_t want) {
  if (inputs.size() != want)
    throw ShapeError(std::string(op) + " takes " + std::to_string(want) + " tensors, got " +
                     std::to_string(inputs.size()));
}

/// `v`'s atoms laid out over `order` (stride 0 where v lacks an axis), on v's buffer.
AtomView broadcast(const PlanBuilder& b, const AtomView& v, const Axes& order) {
  AtomView out{-1, v.buffer, v.offset, {}};
  for (AxisId id : order) {
    const int k = v.index_of(id);
    out.dims.push_back(k >= 0 ? v.dims[static_cast<std::size_t>(k)] : AtomDim{id, b.axes().length(id), 0});
  }
  return out;
}

/// A new contiguous temporary with `atoms` (their lengths from the table), as an AtomView.
AtomView new_contiguous(PlanBuilder& b, const Axes& atoms, std::optional<DType> dtype = std::nullopt) {
  AtomView v{-1, -1, 0, {}};
  Shape shape;
  for (AxisId id : atoms) shape.push_back(b.axes().length(id));
  const Strides strides = contiguous_strides(shape);
  for (std::size_t i = 0; i < atoms.size(); ++i) v.dims.push_back(AtomDim{atoms[i], shape[i], strides[i]});
  v.value = b.new_temp_value(shape, strides, v.dims_axes(), dtype);
  v.buffer = b.value(v.value).buffer;
  return v;
}

/// An indexed axis of length 0 has no index in range: refused here, with the IndexError the
/// kernel would raise for the first index, when there is an index to look up (`over`, the
/// atoms the step walks, holds elements). The step's row view would otherwise reach past the
/// empty table. With no index at all the op plans (an empty result, as torch's).
void check_rows(const char* op, const ast::Pattern& pattern, const PlanBuilder& b, AxisId indexed, const Axes& over) {
  if (b.axes().length(indexed) != 0) return;
  std::int64_t n = 1;
  for (AxisId id : over) n = saturating_mul(n, b.axes().length(id));
  if (n == 0) return;
  throw IndexError(std::string(op) + " '" + pattern.text + "': the indexed axis " + b.axes().name(indexed) +
                   " has length 0, so no index is in range [0, 0); nothing was written");
}

}  // namespace

Plan plan_get_at(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype, DType index_dtype,
                 const AxisLengths& lengths) {
  check_count("get_at", inputs, 2);
  check_index_dtype("get_at", index_dtype);
  auto r = detail::resolve_multi(pattern, inputs, lengths);
  PlanBuilder b(Op::get_at, pattern.text, dtype, std::move(r.axes));
  b.add_input(inputs[0], r.input_dims[0]);
  b.add_input(inputs[1], r.input_dims[1], index_dtype);
  const AxisId indexed = b.axes().find(bracketed_name(pattern, pattern.operands[0]));
  const AtomDim row = r.inputs[0].at(indexed);
  const Axes out = detail::flatten(r.output);
  check_rows("get_at", pattern, b, indexed, out);
  const AtomView src = b.emit(broadcast(b, r.inputs[0], out));
  const AtomView index = b.emit(broadcast(b, r.inputs[1], out));
  const AtomView dst = new_contiguous(b, out);
  b.add_step(GatherStep{src.value, index.value, dst.value, row.length, row.stride});
  return std::move(b).finish(b.merge(dst, r.output));
}

Plan plan_add_at(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype, DType index_dtype,
                 const AxisLengths& lengths) {
  check_count("add_at", inputs, 3);
  check_index_dtype("add_at", index_dtype);
  if (dtype == DType::boolean) throw DTypeError("add_at on bool tensors is not defined; convert with .to() first");
  auto r = detail::resolve_multi(pattern, inputs, lengths);
  PlanBuilder b(Op::add_at, pattern.text, dtype, std::move(r.axes));
  b.add_input(inputs[0], r.input_dims[0]);
  b.add_input(inputs[1], r.input_dims[1], index_dtype);
  b.add_input(inputs[2], r.input_dims[2]);
  const AxisId indexed = b.axes().find(bracketed_name(pattern, pattern.operands[0]));
  // The result: the table copied into a new buffer in its own atom order (its output dims
  // are the table's), then the updates added into it.
  const AtomView& table = r.inputs[0];
  const AtomView acc = b.materialize(table, table.ids());
  const AtomDim row = acc.at(indexed);
  Axes updates_order = r.inputs[2].ids();
  check_rows("add_at", pattern, b, indexed, updates_order);
  const AtomView at = b.emit(broadcast(b, acc, updates_order));
  const AtomView index = b.emit(broadcast(b, r.inputs[1], updates_order));
  const int updates = b.emit(r.inputs[2]).value;
  const int dst = b.value_in(acc.buffer, b.value(acc.value).layout, b.value(acc.value).dims);
  b.add_step(ScatterAddStep{at.value, index.value, updates, dst, row.length, row.stride});
  AtomView whole = acc;
  whole.value = dst;
  return std::move(b).finish(b.merge(whole, r.output));
}

Plan plan_cross_entropy(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype, DType index_dtype,
                        std::int64_t ignore_index, const AxisLengths& lengths) {
  check_count("cross_entropy", inputs, 2);
  check_index_dtype("cross_entropy", index_dtype);
  if (!is_floating(dtype))
    throw DTypeError("cross_entropy needs floating logits, not " + std::string(name(dtype)) +
                     "; convert with .to(DType::f32) first");
  auto r = detail::resolve_multi(pattern, inputs, lengths);
  PlanBuilder b(Op::cross_entropy, pattern.text, dtype, std::move(r.axes));
  b.add_input(inputs[0], r.input_dims[0]);
  b.add_input(inputs[1], r.input_dims[1], index_dtype);
  const AxisId classes = b.axes().find(bracketed_name(pattern, pattern.operands[0]));
  // Rows in the logits' order; the classes' dim where the logits have it.
  const AtomView logits = b.emit(r.inputs[0]);
  Axes rows;
  for (const AtomDim& a : logits.dims)
    if (a.id != classes) rows.push_back(a.id);
  const int axis = logits.index_of(classes);
  const AtomView targets = b.emit(broadcast(b, r.inputs[1], rows));
  const AtomView loss = new_contiguous(b, rows);
  b.add_step(CrossEntropyStep{{logits.value, targets.value}, loss.value, false, axis, ignore_index});
  return std::move(b).finish(b.merge(loss.permuted(detail::flatten(r.output)), r.output));
}

}  // namespace einexpr
