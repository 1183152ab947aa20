#pragma once
// Builds small Plans by hand for the lowering tests: inputs from tensors, temporaries with
// any layout, one call per step kind, and layouts with chosen dim orders, padding and
// steps for non-contiguous values.
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/lower.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr::test {

/// A layout of `shape` whose dims are laid out in `order` (outermost first): the innermost
/// has stride `step`, each next one the previous extent plus `pad`.
inline Layout make_layout(const Shape& shape, std::vector<int> order = {}, std::int64_t step = 1,
                          std::int64_t pad = 0, std::int64_t offset = 0) {
  if (order.empty()) {
    order.resize(shape.size());
    std::iota(order.begin(), order.end(), 0);
  }
  Layout l{shape, Strides(shape.size(), 0), offset};
  std::int64_t s = step;
  for (std::size_t i = order.size(); i-- > 0;) {
    const auto d = static_cast<std::size_t>(order[i]);
    l.strides[d] = s;
    s = s * std::max<std::int64_t>(shape[d], 1) + pad;
  }
  return l;
}

class PlanBuilder {
 public:
  explicit PlanBuilder(DType dtype) {
    plan_.op = Op::einsum;  // hand-built: no op planned it
    plan_.dtype = dtype;
  }
  /// The next input, with the tensor's shape and strides (its buffer starts at its element 0).
  int input(const Tensor& t) {
    if (plan_.buffers.size() != static_cast<std::size_t>(plan_.num_inputs))
      throw Error("PlanBuilder: inputs must come before temporaries");
    plan_.buffers.push_back(PlanBuffer{plan_.num_inputs, 0, plan_.dtype});
    ++plan_.num_inputs;
    return add_value(plan_.num_inputs - 1, Layout{t.shape(), t.strides(), 0});
  }
  /// A value in a new temporary buffer, sized to reach every element of `layout` (+ slack).
  int temp(const Layout& layout) {
    plan_.buffers.push_back(PlanBuffer{-1, layout.extent() + 3, plan_.dtype});
    return add_value(static_cast<int>(plan_.buffers.size()) - 1, layout);
  }
  int view(int src, const Layout& layout) {
    const int dst = add_value(value(src).buffer, layout);
    plan_.steps.push_back(ViewStep{src, dst});
    return dst;
  }
  int copy(int src, const Layout& dst_layout) {
    const int dst = temp(dst_layout);
    plan_.steps.push_back(CopyStep{src, dst});
    return dst;
  }
  int contract(int a, int b, const Layout& dst_layout, int batch_dims,
               ContractStep::Kind kind = ContractStep::Kind::gemm) {
    const int dst = temp(dst_layout);
    ContractStep s;
    s.a = a, s.b = b, s.dst = dst, s.batch_dims = batch_dims, s.kind = kind;
    plan_.steps.push_back(s);
    return dst;
  }
  int reduce(int src, Reduction op, std::vector<int> axes, const Layout& dst_layout) {
    const int dst = temp(dst_layout);
    plan_.steps.push_back(ReduceStep{src, dst, op, std::move(axes)});
    return dst;
  }
  int map(std::vector<int> srcs, std::variant<UnaryOp, BinaryOp, GradOp> op, const Layout& dst_layout) {
    const int dst = temp(dst_layout);
    plan_.steps.push_back(MapStep{std::move(srcs), dst, op});
    return dst;
  }
  const Value& value(int v) const { return plan_.values.at(static_cast<std::size_t>(v)); }
  Plan finish(int output) {
    plan_.output = output;
    return plan_;
  }

 private:
  int add_value(int buffer, const Layout& layout) {
    Value v{buffer, layout, {}};
    v.dims.resize(static_cast<std::size_t>(layout.dim()));  // no axes named: unit names, lengths from the layout
    plan_.values.push_back(std::move(v));
    return static_cast<int>(plan_.values.size()) - 1;
  }
  Plan plan_;
};

/// Lowers on the CPU and runs on `inputs`.
inline Tensor run_cpu(const Plan& plan, const std::vector<Tensor>& inputs) {
  return lower_cpu(plan).run(inputs);
}

}  // namespace einexpr::test
