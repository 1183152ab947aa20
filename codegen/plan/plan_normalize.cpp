// Normalizations along named axes: softmax, log_softmax, layer_norm, rms_norm. The pattern
// is one tensor's dims with the axes to normalize along in brackets ("b h q [k]",
// parse_normalization): the input's atoms are read in place (any strides), one NormStep
// writes a new buffer contiguous in the input's atom order, and the output is that buffer
// viewed in the input's dims. layer_norm's and rms_norm's affine part, when given, follows
// as maps (· gain, + bias) over the same atoms, the gain and bias read in place along the
// bracketed atoms and broadcast along the others.
#include <algorithm>
#include <cmath>
#include <span>
#include <string>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/builder.hpp"
#include "plan/resolve.hpp"

namespace einexpr {

using detail::Axes;
using detail::AtomDim;
using detail::AtomView;
using detail::PlanBuilder;

namespace {

bool inside(const ast::Span& s, const std::vector<ast::Span>& brackets) {
  for (const ast::Span& b : brackets)
    if (s.begin >= b.begin && s.end <= b.end) return true;
  return false;
}

/// The dims the pattern brackets, in order, as the input's dims (their axes): each term's
/// dims (an ellipsis stands for as many as the input has to spare), kept where the term is
/// bracketed.
std::vector<std::size_t> bracketed_dims(const ast::Pattern& pattern, const std::vector<DimAxes>& input_dims) {
  const std::vector<ast::Term>& terms = pattern.operands.at(0).terms;
  const std::size_t spare = input_dims.size() + 1 - terms.size();  // dims of an ellipsis, if any
  std::vector<std::size_t> out;
  std::size_t d = 0;
  for (const ast::Term& t : terms) {
    const std::size_t dims = std::holds_alternative<ast::Ellipsis>(t) ? spare : 1;
    const bool in = inside(ast::span_of(t), pattern.brackets);
    for (std::size_t k = 0; k < dims; ++k, ++d)
      if (in) out.push_back(d);
  }
  return out;
}

/// A gain or bias (input `i` of the plan, over the bracketed dims) viewed along `order`'s
/// atoms: its own strides along the bracketed atoms, 0 along the others.
AtomView affine_view(PlanBuilder& b, int input, const std::vector<DimAxes>& dims, const Layout& layout,
                     const std::vector<AtomDim>& order) {
  std::vector<AtomDim> atoms;  // the input's atoms with their strides
  for (std::size_t d = 0; d < dims.size(); ++d) {
    std::int64_t stride = layout.strides[d];
    for (std::size_t k = dims[d].size(); k-- > 0;) {
      const AxisId id = dims[d][k];
      atoms.push_back({id, b.axes().length(id), stride});
      stride = checked_mul(stride, b.axes().length(id));
    }
  }
  AtomView v{-1, b.value(input).buffer, layout.offset, {}};
  for (const AtomDim& a : order) {
    const auto it = std::find_if(atoms.begin(), atoms.end(), [&](const AtomDim& x) { return x.id == a.id; });
    v.dims.push_back(it != atoms.end() ? *it : AtomDim{a.id, a.length, 0});
  }
  return b.emit(v);
}

}  // namespace

Plan plan_normalize(const ast::Pattern& pattern, Normalization kind, std::span<const Layout> inputs, DType dtype,
                    const AxisLengths& lengths, double eps) {
  const std::size_t most = kind == Normalization::layer_norm ? 3 : kind == Normalization::rms_norm ? 2 : 1;
  if (inputs.empty() || inputs.size() > most)
    throw Error(std::string(name(kind)) + " takes " +
                (most == 1 ? "one tensor" : most == 2 ? "1 or 2 tensors (x, a gain)" : "1 to 3 tensors (x, a gain, a bias)") +
                ", not " + std::to_string(inputs.size()));
  const Layout& input = inputs[0];

  if (!is_floating(dtype))
    throw DTypeError(std::string(name(kind)) + " needs a floating dtype, not " + std::string(name(dtype)) +
                     "; convert with .to(DType::f32) first");
  if (!(eps >= 0) || std::isinf(eps))
    throw Error(std::string(name(kind)) + ": eps must be a finite number >= 0, not " + std::to_string(eps));
  auto r = detail::resolve_single(pattern, Op::rearrange, input, lengths);
  const std::vector<std::size_t> bracketed = bracketed_dims(pattern, r.input_dims);
  Axes along;
  std::vector<DimAxes> affine_dims;  // a gain's and a bias's dims: the bracketed ones
  Shape affine_shape;
  for (std::size_t d : bracketed) {
    for (AxisId id : r.input_dims.at(d)) along.push_back(id);
    affine_dims.push_back(r.input_dims.at(d));
    affine_shape.push_back(input.shape.at(d));
  }
  for (std::size_t i = 1; i < inputs.size(); ++i)
    if (inputs[i].shape != affine_shape)
      throw ShapeError(std::string(name(kind)) + "'s " + (i == 1 ? "gain" : "bias") + " (tensor " + std::to_string(i + 1) +
                       ") has shape " + shape_str(inputs[i].shape) + " but the bracketed dims of x are " +
                       shape_str(affine_shape) + ": one element per position along them");
  PlanBuilder b(Op::normalize, pattern.text, dtype, std::move(r.axes));
  b.add_input(input, r.input_dims);
  std::vector<int> affine_inputs;
  for (std::size_t i = 1; i < inputs.size(); ++i) affine_inputs.push_back(b.add_input(inputs[i], affine_dims));
  const AtomView src = b.emit(r.input);
  std::vector<int> axes;
  for (std::size_t i = 0; i < src.dims.size(); ++i)
    if (std::find(along.begin(), along.end(), src.dims[i].id) != along.end()) axes.push_back(static_cast<int>(i));
  if (axes.empty())
    throw PatternError(std::string(name(kind)) + " along no axis: the brackets hold no named or numbered axis",
                       pattern.text, pattern.brackets.empty() ? 0 : pattern.brackets.front().begin);
  const Shape shape = src.shape();
  const Strides strides = contiguous_strides(shape);
  const int dst = b.new_temp_value(shape, strides, src.dims_axes());
  b.add_step(NormStep{{src.value}, dst, kind, false, axes, takes_eps(kind) ? eps : 0.0});
  AtomView d{dst, b.value(dst).buffer, 0, src.dims};
  for (std::size_t i = 0; i < d.dims.size(); ++i) d.dims[i].stride = strides[i];
  for (std::size_t i = 0; i < affine_inputs.size(); ++i) {  // · gain, then + bias
    const AtomView by = affine_view(b, affine_inputs[i], affine_dims, inputs[i + 1], d.dims);
    const int next = b.new_temp_value(shape, strides, src.dims_axes());
    b.add_step(MapStep{{d.value, by.value}, next, i == 0 ? BinaryOp::mul : BinaryOp::add});
    d.value = next;
    d.buffer = b.value(next).buffer;
  }
  const int out = b.merge(d, r.output);
  return std::move(b).finish(out);
}

}  // namespace einexpr
