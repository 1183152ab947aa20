// Normalizations along named axes: softmax, log_softmax, layer_norm, rms_norm. The pattern
// is one tensor's dims with the axes to normalize along in brackets ("b h q [k]",
// parse_normalization): the input's atoms are read in place (any strides), one NormStep
// writes a new buffer contiguous in the input's atom order, and the output is that buffer
// viewed in the input's dims.
#include <algorithm>
#include <cmath>
#include <string>

#include "einexpr/codegen/planner.hpp"
#include "einexpr/runtime/error.hpp"
#include "plan/builder.hpp"
#include "plan/resolve.hpp"

namespace einexpr {

using detail::Axes;
using detail::AtomView;
using detail::PlanBuilder;

namespace {

bool inside(const ast::Span& s, const std::vector<ast::Span>& brackets) {
  for (const ast::Span& b : brackets)
    if (s.begin >= b.begin && s.end <= b.end) return true;
  return false;
}

/// The axes of the dims the pattern brackets: each term's dims (an ellipsis stands for as
/// many as the input has to spare) and, where the term is bracketed, their axes.
Axes bracketed_axes(const ast::Pattern& pattern, const std::vector<DimAxes>& input_dims) {
  const std::vector<ast::Term>& terms = pattern.operands.at(0).terms;
  const std::size_t spare = input_dims.size() + 1 - terms.size();  // dims of an ellipsis, if any
  Axes out;
  std::size_t d = 0;
  for (const ast::Term& t : terms) {
    const std::size_t dims = std::holds_alternative<ast::Ellipsis>(t) ? spare : 1;
    const bool in = inside(ast::span_of(t), pattern.brackets);
    for (std::size_t k = 0; k < dims; ++k, ++d)
      if (in)
        for (AxisId id : input_dims.at(d)) out.push_back(id);
  }
  return out;
}

}  // namespace

Plan plan_normalize(const ast::Pattern& pattern, Normalization kind, const Layout& input, DType dtype,
                    const AxisLengths& lengths, double eps) {
  if (!is_floating(dtype))
    throw DTypeError(std::string(name(kind)) + " needs a floating dtype, not " + std::string(name(dtype)) +
                     "; convert with .to(DType::f32) first");
  if (!(eps >= 0) || std::isinf(eps))
    throw Error(std::string(name(kind)) + ": eps must be a finite number >= 0, not " + std::to_string(eps));
  auto r = detail::resolve_single(pattern, Op::rearrange, input, lengths);
  const Axes along = bracketed_axes(pattern, r.input_dims);
  PlanBuilder b(Op::normalize, pattern.text, dtype, std::move(r.axes));
  b.add_input(input, r.input_dims);
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
  const int out = b.merge(d, r.output);
  return std::move(b).finish(out);
}

}  // namespace einexpr
