// einops' pack and unpack through plans ("i j * k", seen as "i j ... k" by pack_as_pattern):
//   pack    each input's "*" dims flattened into its slice of one dim of a new buffer (a
//           CopyStep each), then a JoinStep: a concatenation
//   unpack  output j: the packed tensor's slice for it, viewed with its "*" dims (a view)
// The "*" dims are anonymous axes of the plan; the joined dim one more ("(*)").
#include <algorithm>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/builder.hpp"

namespace einexpr {

using detail::AtomDim;
using detail::AtomView;
using detail::PlanBuilder;
using detail::split_dim;

namespace {

/// The pattern's names before and after the "...".
struct Around {
  std::vector<std::string> before, after;
};
Around around(const ast::Pattern& p) {
  Around a;
  bool star = false;
  for (const ast::Term& t : p.operands.at(0).terms) {
    if (std::holds_alternative<ast::Ellipsis>(t)) {
      star = true;
      continue;
    }
    (star ? a.after : a.before).push_back(std::get<ast::Named>(t).name);
  }
  return a;
}

/// An AtomView of `layout` on buffer `buffer` whose dims are the axes `ids` (one per dim).
AtomView view_of(const Layout& layout, int buffer, const std::vector<AxisId>& ids) {
  AtomView v{-1, buffer, layout.offset, {}};
  for (std::size_t d = 0; d < ids.size(); ++d) v.dims.push_back(AtomDim{ids[d], layout.shape[d], layout.strides[d]});
  return v;
}

}  // namespace

Plan plan_pack(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype) {
  if (inputs.empty()) throw ShapeError("pack needs at least one tensor");
  const Around a = around(pattern);
  const std::size_t fixed = a.before.size() + a.after.size();
  AxisTable axes;
  std::vector<AxisId> before, after;
  for (const std::string& n : a.before)
    before.push_back(axes.add(Axis{n, inputs[0].shape.size() >= fixed ? inputs[0].shape[before.size()] : 0, AxisKind::named}));
  // The "*" dims of every input, and the checks of the dims around them.
  std::vector<std::vector<AxisId>> stars(inputs.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Shape& s = inputs[i].shape;
    if (s.size() < fixed)
      throw ShapeError("tensor " + std::to_string(i + 1) + " has " + std::to_string(s.size()) + " dims (shape " +
                       shape_str(s) + ") but '" + pattern.text + "' needs at least " + std::to_string(fixed));
    const Shape& first = inputs[0].shape;
    const bool same = std::equal(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a.before.size()), first.begin()) &&
                      std::equal(s.end() - static_cast<std::ptrdiff_t>(a.after.size()), s.end(),
                                 first.end() - static_cast<std::ptrdiff_t>(a.after.size()));
    if (!same)
      throw ShapeError("pack: tensor " + std::to_string(i + 1) + " has shape " + shape_str(s) +
                       " but the dims around '*' must match tensor 1's (" + shape_str(first) + ")");
    std::int64_t part = 1;
    for (std::size_t d = a.before.size(); d + a.after.size() < s.size(); ++d) {
      stars[i].push_back(axes.add(Axis{"*" + std::to_string(i + 1) + "." + std::to_string(d - a.before.size()), s[d],
                                       AxisKind::anonymous}));
      part = checked_mul(part, s[d]);
    }
    total = checked_add(total, part);
  }
  for (std::size_t k = 0; k < a.after.size(); ++k)
    after.push_back(axes.add(Axis{a.after[k], inputs[0].shape[inputs[0].shape.size() - a.after.size() + k], AxisKind::named}));
  const AxisId whole = axes.add(Axis{"(*)", total, AxisKind::anonymous});
  PlanBuilder b(Op::pack, pattern.text, dtype, std::move(axes));
  std::vector<std::vector<AxisId>> input_ids;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<AxisId> ids = before;
    ids.insert(ids.end(), stars[i].begin(), stars[i].end());
    ids.insert(ids.end(), after.begin(), after.end());
    std::vector<DimAxes> dims;
    for (AxisId id : ids) dims.push_back({id});
    b.add_input(inputs[i], dims);
    input_ids.push_back(std::move(ids));
  }
  // The result, contiguous: before, the joined dim, after.
  std::vector<AxisId> order = before;
  order.push_back(whole);
  order.insert(order.end(), after.begin(), after.end());
  Shape shape;
  for (AxisId id : order) shape.push_back(b.axes().length(id));
  const Strides strides = contiguous_strides(shape);
  std::vector<DimAxes> out_dims;
  for (AxisId id : order) out_dims.push_back({id});
  const int all = b.new_temp_value(shape, strides, out_dims);
  const int buffer = b.value(all).buffer;
  const std::size_t g = before.size();
  std::vector<int> parts;
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    // The slice: the joined dim cut to this input's part and split into its "*" dims.
    AtomView slice{-1, buffer, checked_mul(begin, strides[g]), {}};
    for (std::size_t d = 0; d < g; ++d) slice.dims.push_back(AtomDim{order[d], shape[d], strides[d]});
    for (const AtomDim& s : split_dim(b.axes(), stars[i], strides[g])) slice.dims.push_back(s);
    for (std::size_t d = g + 1; d < order.size(); ++d) slice.dims.push_back(AtomDim{order[d], shape[d], strides[d]});
    Layout in = inputs[i];
    in.offset = 0;
    const int from = b.emit(view_of(in, static_cast<int>(i), input_ids[i])).value;
    const int into = b.value_in(buffer, slice.layout(), slice.dims_axes());
    b.add_step(CopyStep{from, into});
    parts.push_back(into);
    std::int64_t n = 1;
    for (AxisId id : stars[i]) n = checked_mul(n, b.axes().length(id));
    begin = checked_add(begin, n);
  }
  b.add_step(JoinStep{parts, all});
  b.note("pack: " + std::to_string(inputs.size()) + " copies into one buffer");
  return std::move(b).finish(all);
}

Plan plan_unpack(const ast::Pattern& pattern, const Layout& input, DType dtype, const std::vector<Shape>& shapes,
                 int output) {
  const Around a = around(pattern);
  const std::size_t rank = a.before.size() + 1 + a.after.size();
  if (input.shape.size() != rank)
    throw ShapeError("unpack: '" + pattern.text + "' describes " + std::to_string(rank) +
                     " dims but the packed tensor has shape " + shape_str(input.shape));
  if (shapes.empty()) throw ShapeError("unpack needs the shapes of its outputs' '*' dims (pack returns them)");
  if (output < 0 || static_cast<std::size_t>(output) >= shapes.size())
    throw Error("unpack has " + std::to_string(shapes.size()) + " outputs; output " + std::to_string(output + 1) +
                " does not exist");
  const std::size_t g = a.before.size();
  const std::int64_t length = input.shape[g];
  // Each output's part of the packed dim; one shape may hold a -1, inferred (einops' rule).
  std::vector<Shape> resolved = shapes;
  std::vector<std::int64_t> sizes;
  std::int64_t known = 0;
  int infer = -1;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    std::int64_t n = 1;
    for (std::int64_t len : shapes[i]) {
      if (len < -1) throw ShapeError("unpack: invalid length " + std::to_string(len) + " in shape " + shape_str(shapes[i]));
      if (len == -1) {
        if (infer >= 0) throw ShapeError("unpack: only one shape may contain -1");
        infer = static_cast<int>(i);
      } else {
        n = checked_mul(n, len);
      }
    }
    sizes.push_back(n);
    if (infer != static_cast<int>(i)) known = checked_add(known, n);
  }
  if (infer >= 0) {
    const std::int64_t rest = length - known, per = sizes[static_cast<std::size_t>(infer)];
    if (rest < 0 || per == 0 || rest % per != 0)
      throw ShapeError("unpack: cannot infer the -1 in shape " + shape_str(shapes[static_cast<std::size_t>(infer)]) +
                       " from the " + std::to_string(rest) + " elements left of " + std::to_string(length));
    for (std::int64_t& len : resolved[static_cast<std::size_t>(infer)])
      if (len == -1) len = rest / per;
    sizes[static_cast<std::size_t>(infer)] = rest;
    known += rest;
  }
  if (known != length)
    throw ShapeError("unpack: the shapes hold " + std::to_string(known) + " elements along '*' but the packed " +
                     "tensor has " + std::to_string(length));
  AxisTable axes;
  std::vector<AxisId> ids;
  for (std::size_t d = 0; d < g; ++d) ids.push_back(axes.add(Axis{a.before[d], input.shape[d], AxisKind::named}));
  const AxisId whole = axes.add(Axis{"(*)", length, AxisKind::anonymous});
  ids.push_back(whole);
  for (std::size_t k = 0; k < a.after.size(); ++k)
    ids.push_back(axes.add(Axis{a.after[k], input.shape[g + 1 + k], AxisKind::named}));
  std::vector<AxisId> star;
  const Shape& mine = resolved[static_cast<std::size_t>(output)];
  for (std::size_t k = 0; k < mine.size(); ++k)
    star.push_back(axes.add(Axis{"*" + std::to_string(output + 1) + "." + std::to_string(k), mine[k], AxisKind::anonymous}));
  PlanBuilder b(Op::unpack, pattern.text, dtype, std::move(axes));
  std::vector<DimAxes> dims;
  for (AxisId id : ids) dims.push_back({id});
  Layout in = input;
  in.offset = 0;
  b.add_input(in, dims);
  std::int64_t begin = 0;
  for (int i = 0; i < output; ++i) begin = checked_add(begin, sizes[static_cast<std::size_t>(i)]);
  AtomView out{-1, 0, checked_mul(begin, input.strides[g]), {}};
  for (std::size_t d = 0; d < g; ++d) out.dims.push_back(AtomDim{ids[d], input.shape[d], input.strides[d]});
  for (const AtomDim& s : split_dim(b.axes(), star, input.strides[g])) out.dims.push_back(s);
  for (std::size_t d = g + 1; d < ids.size(); ++d) out.dims.push_back(AtomDim{ids[d], input.shape[d], input.strides[d]});
  const int result = b.emit(out).value;
  b.set_slice(SliceInfo{whole, sizes, output});
  return std::move(b).finish(result);
}

}  // namespace einexpr
