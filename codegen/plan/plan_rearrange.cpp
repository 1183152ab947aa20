// rearrange, reduce, repeat: view where the strides allow, else one copy.
//   rearrange: the input's atoms, permuted into the output's order, merged into its dims.
//   reduce:    the atoms absent from the output are reduced (one ReduceStep writing a
//              buffer laid out in the output's order), then merged by a view.
//   repeat:    new atoms join with stride 0 (a broadcast view), then as rearrange.
#include <algorithm>

#include "plan/builder.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/resolve.hpp"

namespace einexpr {

using detail::AtomDim;
using detail::AtomView;
using detail::OutDim;
using detail::PlanBuilder;

namespace {

/// The value for `outs` from `atoms` (already in output order), honouring the copy policy.
int place(PlanBuilder& b, const AtomView& atoms, const std::vector<OutDim>& outs, Copy copy,
          const std::string& op) {
  if (copy == Copy::always) return b.merge(b.materialize(atoms, atoms.ids()), outs);
  if (auto v = b.try_merge_view(atoms, outs)) return *v;
  if (copy == Copy::never) {
    std::string which;
    for (const OutDim& o : outs) {
      if (o.atoms.size() < 2) continue;
      for (std::size_t k = 0; k + 1 < o.atoms.size(); ++k) {
        const AtomDim& x = atoms.at(o.atoms[k]);
        const AtomDim& y = atoms.at(o.atoms[k + 1]);
        if (x.length != 1 && y.length != 1 && x.stride != y.stride * y.length && which.empty())
          which = ": merging " + b.axes().name(x.id) + " (stride " + std::to_string(x.stride) + ") with " +
                  b.axes().name(y.id) + " (stride " + std::to_string(y.stride) + ", length " +
                  std::to_string(y.length) + ") needs stride " + std::to_string(y.stride * y.length);
      }
    }
    throw ShapeError(op + " cannot be a view of this input (shape " + shape_str(b.value(0).layout.shape) +
                     ", strides " + shape_str(b.value(0).layout.strides) + ")" + which +
                     "; Copy::never forbids the copy");
  }
  return b.merge(atoms, outs);
}

PlanBuilder start(Op op, const ast::Pattern& p, const Layout& input, DType dtype, detail::SingleResolution& r) {
  PlanBuilder b(op, p.text, dtype, std::move(r.axes));
  b.add_input(input, r.input_dims);
  return b;
}

void check_reduction_dtype(Reduction op, DType dtype) {
  const std::string what = "reduce '" + std::string(name(op)) + "' on " + std::string(name(dtype));
  const bool boolean = dtype == DType::boolean;
  if ((op == Reduction::any || op == Reduction::all) && !boolean)
    throw DTypeError(what + ": any and all take bool tensors (compare first, or use max/min)");
  if (boolean && (op == Reduction::sum || op == Reduction::mean || op == Reduction::prod))
    throw DTypeError(what + ": convert with .to(DType::i64) first, or use any/all");
  if (op == Reduction::mean && is_integer(dtype))
    throw DTypeError(what + ": mean is not defined for integer dtypes; convert with .to(DType::f32) first");
  const bool float_only = op == Reduction::var || op == Reduction::std || op == Reduction::logsumexp;
  if (float_only && (is_integer(dtype) || boolean))
    throw DTypeError(what + ": " + name(op) + " needs a floating dtype; convert with .to(DType::f32) first");
}

}  // namespace

Plan plan_rearrange(const ast::Pattern& pattern, const Layout& input, DType dtype, const AxisLengths& lengths,
                    Copy copy) {
  auto r = detail::resolve_single(pattern, Op::rearrange, input, lengths);
  PlanBuilder b = start(Op::rearrange, pattern, input, dtype, r);
  const AtomView atoms = r.input.permuted(detail::flatten(r.output));
  const int out = place(b, atoms, r.output, copy, "rearrange '" + pattern.text + "'");
  return std::move(b).finish(out);
}

Plan plan_repeat(const ast::Pattern& pattern, const Layout& input, DType dtype, const AxisLengths& lengths,
                 Copy copy) {
  auto r = detail::resolve_single(pattern, Op::repeat, input, lengths);
  PlanBuilder b = start(Op::repeat, pattern, input, dtype, r);
  AtomView all = r.input;
  for (const AtomDim& a : r.new_atoms) all.dims.push_back(a);
  const AtomView atoms = all.permuted(detail::flatten(r.output));
  const int out = place(b, atoms, r.output, copy, "repeat '" + pattern.text + "'");
  return std::move(b).finish(out);
}

Plan plan_reduce(const ast::Pattern& pattern, const Layout& input, DType dtype, Reduction reduction,
                 const AxisLengths& lengths, std::int64_t correction) {
  check_reduction_dtype(reduction, dtype);
  if (correction < 0)
    throw Error("reduce '" + std::string(name(reduction)) + "': correction must be 0 or more, not " +
                std::to_string(correction));
  auto r = detail::resolve_single(pattern, Op::reduce, input, lengths);
  PlanBuilder b = start(Op::reduce, pattern, input, dtype, r);
  const detail::Axes kept = detail::flatten(r.output);
  std::vector<int> axes;
  std::vector<AtomDim> rest;
  for (std::size_t i = 0; i < r.input.dims.size(); ++i) {
    const AtomDim& a = r.input.dims[i];
    if (std::find(kept.begin(), kept.end(), a.id) != kept.end()) {
      rest.push_back(a);
    } else {
      axes.push_back(static_cast<int>(i));
      if (a.length == 0 && (reduction == Reduction::max || reduction == Reduction::min))
        throw ShapeError("reduce '" + std::string(name(reduction)) + "' over axis " + b.axes().name(a.id) +
                         " of length 0: " + name(reduction) + " of no elements is undefined");
    }
  }
  // Nothing to reduce: a rearrange (each output is its one element), except for var and
  // std, whose value for one element is 0 or, with a correction, NaN.
  if (axes.empty() && reduction != Reduction::var && reduction != Reduction::std) {
    const int out = place(b, r.input.permuted(kept), r.output, Copy::if_needed, "reduce");
    return std::move(b).finish(out);
  }
  const AtomView src = b.emit(r.input);
  const Strides strides = detail::strides_for_order(rest, kept);
  AtomView dst{-1, -1, 0, rest};
  for (std::size_t i = 0; i < rest.size(); ++i) dst.dims[i].stride = strides[i];
  dst.value = b.new_temp_value(dst.shape(), strides, dst.dims_axes());
  dst.buffer = b.value(dst.value).buffer;
  b.add_step(ReduceStep{src.value, dst.value, reduction, axes, correction});
  const int out = b.merge(dst.permuted(kept), r.output);
  return std::move(b).finish(out);
}

}  // namespace einexpr
