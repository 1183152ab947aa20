// rearrange, reduce, repeat: view where the strides allow, else one copy.
//   rearrange: the input's atoms, permuted into the output's order, merged into its dims.
//   concatenation "b s1, b s2 -> b (s1 + s2)": each input copied into its slice of one
//              buffer (a CopyStep each), then a JoinStep that views the whole.
//   split "b (q + k) -> b q, b k": output j is a rearrange of the input's slice for part j.
//   reduce:    the atoms absent from the output are reduced (one ReduceStep writing a
//              buffer laid out in the output's order), then merged by a view.
//   repeat:    new atoms join with stride 0 (a broadcast view), then as rearrange.
#include <algorithm>

#include "plan/builder.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/resolve.hpp"
#include "plan/resolve_common.hpp"

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

namespace {

/// The index of the concatenation group among an operand's terms, or -1.
int concat_term(const ast::Operand& operand) {
  for (std::size_t k = 0; k < operand.terms.size(); ++k)
    if (const auto* g = std::get_if<ast::Group>(&operand.terms[k]); g != nullptr && g->concat) return static_cast<int>(k);
  return -1;
}

/// The dim of a tensor of `rank` dims that term k of `operand` stands for.
int dim_of_term(const ast::Operand& operand, int k, int rank, const std::string& where, const Shape& shape) {
  const int e = detail::resolving::ellipsis_dims(operand, rank, where, shape);
  int d = 0;
  for (int i = 0; i < k; ++i) d += detail::resolving::is_ellipsis(operand.terms[static_cast<std::size_t>(i)]) ? e : 1;
  return d;
}

/// The part names of a concatenation group.
std::vector<std::string> part_names(const ast::Group& g) {
  std::vector<std::string> names;
  for (const ast::Atom& a : g.atoms) names.push_back(std::get<ast::Named>(a).name);
  return names;
}

/// `lengths` without the parts' names.
AxisLengths without_parts(const AxisLengths& lengths, const std::vector<std::string>& parts) {
  AxisLengths out;
  for (const auto& l : lengths)
    if (std::find(parts.begin(), parts.end(), l.first) == parts.end()) out.push_back(l);
  return out;
}

std::string plus_text(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : " + ") + p;
  return "(" + s + ")";
}

/// A split: output `output` of "b (q + k) -> b q, b k", the input's slice for its part
/// rearranged as rearrange does (a view where the strides allow).
Plan plan_split(const ast::Pattern& pattern, const Layout& input, DType dtype, const AxisLengths& lengths,
                Copy copy, int output) {
  const ast::Operand& left = pattern.operands[0];
  const int k = concat_term(left);
  const auto& group = std::get<ast::Group>(left.terms[static_cast<std::size_t>(k)]);
  const std::vector<std::string> parts = part_names(group);
  const int nout = 1 + static_cast<int>(pattern.more_outputs.size());
  if (output < 0 || output >= nout)
    throw Error("split '" + pattern.text + "' has " + std::to_string(nout) + " outputs; output " +
                std::to_string(output + 1) + " does not exist");
  const int d = dim_of_term(left, k, input.dim(), "the input", input.shape);
  const std::int64_t total = input.shape.at(static_cast<std::size_t>(d));
  // The parts' lengths: given for all but one (that one inferred), or all given and adding up.
  std::vector<std::int64_t> len(parts.size(), -1);
  int unknown = -1, unknowns = 0;
  std::int64_t known = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (const auto& [n, l] : lengths)
      if (n == parts[i]) len[i] = l;
    if (len[i] < 0) {
      unknown = static_cast<int>(i);
      ++unknowns;
    } else {
      known = checked_add(known, len[i]);
    }
  }
  const std::string group_text = plus_text(parts);
  if (unknowns > 1)
    throw ShapeError("split '" + pattern.text + "': give the lengths of all parts of " + group_text +
                     " but one (the last is inferred from dim " + std::to_string(d) + ", of length " +
                     std::to_string(total) + "); " + std::to_string(unknowns) + " are not given");
  if (unknowns == 1) {
    if (known > total)
      throw ShapeError("split '" + pattern.text + "': the given parts of " + group_text + " add up to " +
                       std::to_string(known) + ", more than dim " + std::to_string(d) + "'s length " +
                       std::to_string(total));
    len[static_cast<std::size_t>(unknown)] = total - known;
  } else if (known != total) {
    throw ShapeError("split '" + pattern.text + "': the parts of " + group_text + " add up to " + std::to_string(known) +
                     " but dim " + std::to_string(d) + " of the input has length " + std::to_string(total));
  }
  std::int64_t begin = 0;
  for (int i = 0; i < output; ++i) begin += len[static_cast<std::size_t>(i)];
  const std::int64_t part_len = len[static_cast<std::size_t>(output)];
  // The part's pattern: the group replaced by the part's name, and this output.
  ast::Pattern sub = pattern;
  sub.operands[0].terms[static_cast<std::size_t>(k)] = ast::Named{parts[static_cast<std::size_t>(output)], group.span};
  sub.output = output == 0 ? pattern.output : pattern.more_outputs[static_cast<std::size_t>(output - 1)];
  sub.more_outputs.clear();
  Layout slice = input;
  slice.shape[static_cast<std::size_t>(d)] = part_len;
  AxisLengths sub_lengths = without_parts(lengths, parts);
  auto r = detail::resolve_single(sub, Op::rearrange, slice, sub_lengths);
  const AxisId whole = r.axes.add(Axis{group_text, total, AxisKind::anonymous});
  std::vector<DimAxes> input_dims = r.input_dims;
  input_dims[static_cast<std::size_t>(d)] = {whole};
  PlanBuilder b(Op::rearrange, pattern.text, dtype, std::move(r.axes));
  b.add_input(input, input_dims);
  AtomView atoms = r.input.permuted(detail::flatten(r.output));
  atoms.value = -1;
  atoms.offset = checked_mul(begin, input.strides.empty() ? 0 : input.strides[static_cast<std::size_t>(d)]);
  // The input value itself only where the part is the whole input and the atoms lay it out
  // exactly: a unit dim the output drops ("b (q + k) 1 -> b k" with q = 0) has no atom, so
  // the atoms' layout is not the input's and a copy must read a view of it.
  if (begin == 0 && atoms.dims == r.input.dims && slice == input && atoms.layout() == input) atoms.value = 0;
  const int out = place(b, atoms, r.output, copy,
                        "rearrange '" + pattern.text + "' (output " + std::to_string(output + 1) + ")");
  b.set_slice(SliceInfo{whole, len, output});
  return std::move(b).finish(out);
}

}  // namespace

Plan plan_concat(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype, const AxisLengths& lengths,
                 Copy copy, int output) {
  if (inputs.size() != pattern.operands.size())
    throw ShapeError("rearrange '" + pattern.text + "' takes " + std::to_string(pattern.operands.size()) +
                     (pattern.operands.size() == 1 ? " tensor" : " tensors") + ", got " + std::to_string(inputs.size()));
  if (pattern.operands.size() == 1) return plan_split(pattern, inputs[0], dtype, lengths, copy, output);
  if (output != 0) throw Error("a concatenation has one output; output " + std::to_string(output + 1) + " does not exist");
  if (copy == Copy::never)
    throw ShapeError("rearrange '" + pattern.text + "' concatenates, which copies every input into one buffer; "
                     "Copy::never forbids the copy");
  // Resolve the inputs as einsum's operands against the output without its group.
  const int k = concat_term(pattern.output);
  const auto& group = std::get<ast::Group>(pattern.output.terms[static_cast<std::size_t>(k)]);
  const std::vector<std::string> parts = part_names(group);
  ast::Pattern rest = pattern;
  rest.output.terms.erase(rest.output.terms.begin() + k);
  auto r = detail::resolve_multi(rest, inputs, lengths);
  std::int64_t total = 0;
  std::vector<std::int64_t> begin;
  for (const std::string& part : parts) {
    begin.push_back(total);
    total = checked_add(total, r.axes.length(r.axes.find(part)));
  }
  const std::string group_text = plus_text(parts);
  const AxisId whole = r.axes.add(Axis{group_text, total, AxisKind::anonymous});
  // The output's dims: the group's dim in its place. Terms before it: the OutDims before it
  // (an ellipsis term expands to several OutDims).
  std::vector<detail::OutDim> outs = r.output;
  {
    std::size_t at = 0;
    for (int i = 0; i < k; ++i) {
      if (detail::resolving::is_ellipsis(pattern.output.terms[static_cast<std::size_t>(i)])) {
        // as many OutDims as the ellipsis stands for: every output dim named by an ellipsis axis
        while (at < outs.size() && outs[at].name.size() == 1 && r.axes[outs[at].name[0]].kind == AxisKind::ellipsis) ++at;
      } else {
        ++at;
      }
    }
    outs.insert(outs.begin() + static_cast<std::ptrdiff_t>(at), detail::OutDim{{whole}, {whole}});
  }
  PlanBuilder b(Op::rearrange, pattern.text, dtype, std::move(r.axes));
  for (std::size_t i = 0; i < inputs.size(); ++i) b.add_input(inputs[i], r.input_dims[i]);
  // The whole buffer, contiguous in the output's atom order.
  const detail::Axes order = detail::flatten(outs);
  Shape shape;
  for (AxisId id : order) shape.push_back(b.axes().length(id));
  const Strides strides = contiguous_strides(shape);
  AtomView all{-1, -1, 0, {}};
  for (std::size_t i = 0; i < order.size(); ++i) all.dims.push_back(AtomDim{order[i], shape[i], strides[i]});
  all.value = b.new_temp_value(shape, strides, all.dims_axes());
  all.buffer = b.value(all.value).buffer;
  const auto g = static_cast<std::size_t>(std::find(order.begin(), order.end(), whole) - order.begin());
  std::vector<int> written;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const AxisId part = b.axes().find(parts[i]);
    AtomView slice = all;
    slice.dims[g] = AtomDim{part, b.axes().length(part), strides[g]};
    slice.offset = checked_mul(begin[i], strides[g]);
    detail::Axes slice_order = order;
    slice_order[g] = part;
    // The input's atoms in the slice's order (stride 0 along axes '...' broadcast away).
    const AtomView& in = r.inputs[i];
    AtomView src{-1, in.buffer, in.offset, {}};
    for (AxisId id : slice_order) {
      const int at = in.index_of(id);
      src.dims.push_back(at >= 0 ? in.dims[static_cast<std::size_t>(at)] : AtomDim{id, b.axes().length(id), 0});
    }
    if (src.dims == in.dims) src.value = in.value >= 0 ? in.value : -1;
    const int from = b.emit(src).value;
    const int into = b.value_in(all.buffer, slice.layout(), slice.dims_axes());
    b.add_step(CopyStep{from, into});
    written.push_back(into);
  }
  b.add_step(JoinStep{written, all.value});
  b.note("concatenation " + group_text + ": " + std::to_string(inputs.size()) + " copies into one buffer");
  return std::move(b).finish(b.merge(all, outs));
}

}  // namespace einexpr
