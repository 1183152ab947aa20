#pragma once
// Plans built by hand for the GPU tests (the planners and the public ops are written
// elsewhere): inputs with any strides, then copy / contract / reduce / map steps, each
// making a new value in a new temporary buffer, as the planner's contract says.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr::test {

class PlanBuilder {
 public:
  explicit PlanBuilder(DType dtype, Op op = Op::einsum) {
    plan_.dtype = dtype;
    plan_.op = op;
  }

  /// Input i: a value over input buffer i with these strides (offset 0: Program binds the
  /// input's data pointer, element [0, ..., 0]). All inputs come before any step.
  int input(const Shape& shape, const Strides& strides) {
    EINEXPR_ASSERT(plan_.steps.empty(), "inputs come first");
    const int i = plan_.num_inputs++;
    plan_.buffers.push_back(PlanBuffer{i, 0, plan_.dtype});
    plan_.values.push_back(Value{i, Layout{shape, strides, 0}, names(shape.size())});
    return i;
  }
  int input(const Shape& shape) { return input(shape, contiguous_strides(shape)); }

  /// A view of `src`'s buffer with another layout (offset relative to the buffer base).
  int view(int src, const Layout& layout) {
    const int v = add_value(plan_.values.at(static_cast<std::size_t>(src)).buffer, layout);
    plan_.steps.push_back(ViewStep{src, v});
    return v;
  }

  /// A copy of `src` into a new buffer laid out with `dst_strides` (default contiguous).
  int copy(int src, const Strides& dst_strides = {}) {
    const Shape& shape = layout(src).shape;
    const int v = new_value(Layout{shape, dst_strides.empty() ? contiguous_strides(shape) : dst_strides, 0});
    plan_.steps.push_back(CopyStep{src, v});
    return v;
  }

  /// dst[B.., m, n] = sum_k a[B.., m, k] b[B.., k, n]; dst strides default contiguous.
  int contract(int a, int b, int batch_dims, ContractStep::Kind kind, const Strides& dst_strides = {}) {
    const Shape& as = layout(a).shape;
    Shape shape(as.begin(), as.end() - 1);
    shape.push_back(layout(b).shape.back());
    const int v = new_value(Layout{shape, dst_strides.empty() ? contiguous_strides(shape) : dst_strides, 0});
    plan_.steps.push_back(ContractStep{a, b, v, batch_dims, kind, {}});
    return v;
  }

  /// src reduced over `axes`; dst strides default contiguous.
  int reduce(int src, Reduction op, std::vector<int> axes, const Strides& dst_strides = {}) {
    const Shape& in = layout(src).shape;
    Shape shape;
    for (int d = 0; d < static_cast<int>(in.size()); ++d)
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) shape.push_back(in[static_cast<std::size_t>(d)]);
    const int v = new_value(Layout{shape, dst_strides.empty() ? contiguous_strides(shape) : dst_strides, 0});
    plan_.steps.push_back(ReduceStep{src, v, op, std::move(axes)});
    return v;
  }

  int unary(UnaryOp op, int src) {
    const int v = new_value(Layout::contiguous(layout(src).shape));
    plan_.steps.push_back(MapStep{{src}, v, op});
    return v;
  }
  /// Both sources must already have the output's shape (broadcast by stride-0 views).
  int binary(BinaryOp op, int a, int b) {
    const int v = new_value(Layout::contiguous(layout(a).shape));
    plan_.steps.push_back(MapStep{{a, b}, v, op});
    return v;
  }

  const Layout& layout(int v) const { return plan_.values.at(static_cast<std::size_t>(v)).layout; }

  Plan finish(int output) {
    plan_.output = output;
    validate(plan_);
    return plan_;
  }

 private:
  /// Hand-built values name no axes: one unnamed dim each (lengths from the layout).
  static std::vector<DimAxes> names(std::size_t n) { return std::vector<DimAxes>(n); }
  int add_value(int buffer, const Layout& layout) {
    plan_.values.push_back(Value{buffer, layout, names(layout.shape.size())});
    return static_cast<int>(plan_.values.size()) - 1;
  }
  int new_value(const Layout& layout) {
    plan_.buffers.push_back(PlanBuffer{-1, layout.extent(), plan_.dtype});
    return add_value(static_cast<int>(plan_.buffers.size()) - 1, layout);
  }

  Plan plan_;
};

}  // namespace einexpr::test
