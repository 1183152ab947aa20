// lower_cuda(): Plan -> Program for a CUDA device, the sibling of lower_cpu on the same
// skeleton (lower/skeleton.hpp: validation, buffers, one overload per Step alternative, so a
// step missing here is a compile error). Staging temporaries some steps need (partial sums,
// staged GEMM operands) are appended after the plan's. Each kernel queues work on the
// device's stream; nothing waits for the GPU here.
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cuda_check.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/error.hpp"
#include "kernels.hpp"
#include "lowering.hpp"

namespace einexpr {

namespace gpu {

namespace {

void lower_copy(const CopyStep& s, Lowering& low) {
  const Value src = low.value(s.src), dst = low.value(s.dst);
  const std::size_t es = element_size(low.plan.dtype);
  const int device = low.device;
  low.add_kernel("copy", [=](const Workspace& ws) {
    copy_values(device, buffer_base(ws, dst.buffer), dst.layout, buffer_base(ws, src.buffer), src.layout, es);
  });
}

void lower_reduce(const ReduceStep& s, Lowering& low) {
  const Value src = low.value(s.src), dst = low.value(s.dst);
  const int device = low.device;
  ReducePlan plan = plan_reduction(properties(device).multiProcessorCount, src.layout, s.axes, dst.layout,
                                   low.plan.dtype, s.op);
  plan.correction = s.correction;
  const int partials = plan.partial_bytes > 0 ? low.add_temp(plan.partial_bytes) : -1;
  low.add_kernel(std::string("reduce.") + name(s.op), [=](const Workspace& ws) {
    run_reduction(device, plan, buffer_base(ws, dst.buffer), buffer_base(ws, src.buffer),
                  partials >= 0 ? buffer_base(ws, partials) : nullptr);
  });
}

void lower_map(const MapStep& s, Lowering& low) {
  const Value dst = low.value(s.dst);
  const DType dtype = low.plan.dtype;
  const int device = low.device;
  if (const auto* grad = std::get_if<GradOp>(&s.op)) {
    std::vector<Value> srcs;
    for (int v : s.srcs) srcs.push_back(low.value(v));
    low.add_kernel("map." + name(*grad), [=, op = *grad](const Workspace& ws) {
      std::vector<const std::byte*> bases;
      std::vector<Layout> layouts;
      for (const Value& v : srcs) {
        bases.push_back(buffer_base(ws, v.buffer));
        layouts.push_back(v.layout);
      }
      map_grad(device, op, dtype, buffer_base(ws, dst.buffer), dst.layout, bases, layouts);
    });
    return;
  }
  if (const auto* op = std::get_if<UnaryOp>(&s.op)) {
    EINEXPR_ASSERT(s.srcs.size() == 1, "a unary map has one source");
    const Value src = low.value(s.srcs[0]);
    low.add_kernel(std::string("map.") + name(*op), [=, op = *op](const Workspace& ws) {
      map_unary(device, op, dtype, buffer_base(ws, dst.buffer), dst.layout, buffer_base(ws, src.buffer), src.layout);
    });
    return;
  }
  const BinaryOp op = std::get<BinaryOp>(s.op);
  EINEXPR_ASSERT(s.srcs.size() == 2, "a binary map has two sources");
  const Value a = low.value(s.srcs[0]), b = low.value(s.srcs[1]);
  low.add_kernel(std::string("map.") + name(op), [=](const Workspace& ws) {
    map_binary(device, op, dtype, buffer_base(ws, dst.buffer), dst.layout, buffer_base(ws, a.buffer), a.layout,
               buffer_base(ws, b.buffer), b.layout);
  });
}

void lower_embed(const EmbedStep& s, Lowering& low) {
  const Value src = low.value(s.src), dst = low.value(s.dst);
  const std::size_t bytes = low.buffer_bytes(dst.buffer), es = element_size(low.plan.dtype);
  const Layout into = s.into;
  const int device = low.device;
  low.add_kernel("embed", [=](const Workspace& ws) {
    zero_bytes(device, buffer_base(ws, dst.buffer), bytes);
    copy_values(device, buffer_base(ws, dst.buffer), into, buffer_base(ws, src.buffer), src.layout, es);
  });
}

void lower_norm(const NormStep& s, Lowering& low) {
  const Value dst = low.value(s.dst);
  std::vector<Value> srcs;
  std::vector<const Layout*> layouts;
  for (int v : s.srcs) srcs.push_back(low.value(v));
  for (const Value& v : srcs) layouts.push_back(&v.layout);
  const NormPlan plan = plan_normalization(s, dst.layout, layouts, low.plan.dtype);
  const int device = low.device;
  low.add_kernel(std::string(s.backward ? "d." : "") + name(s.kind), [=](const Workspace& ws) {
    run_normalization(device, plan, buffer_base(ws, dst.buffer), buffer_base(ws, srcs[0].buffer),
                      srcs.size() > 1 ? buffer_base(ws, srcs[1].buffer) : nullptr);
  });
}

struct CudaBackend {
  int device;
  template <class S>
  void lower(const S& step, lowering::Context& c, void (*f)(const S&, Lowering&)) const {
    Lowering low{c, c.plan(), device};
    f(step, low);
  }
  void operator()(const ViewStep&, lowering::Context&) const {}  // a view moves nothing
  void operator()(const CopyStep& s, lowering::Context& c) const { lower(s, c, lower_copy); }
  void operator()(const ContractStep& s, lowering::Context& c) const { lower(s, c, lower_contract); }
  void operator()(const ReduceStep& s, lowering::Context& c) const { lower(s, c, lower_reduce); }
  void operator()(const MapStep& s, lowering::Context& c) const { lower(s, c, lower_map); }
  void operator()(const EmbedStep& s, lowering::Context& c) const { lower(s, c, lower_embed); }
  void operator()(const NormStep& s, lowering::Context& c) const { lower(s, c, lower_norm); }
};

}  // namespace

}  // namespace gpu

Program lower_cuda(const Plan& plan, Device device) {
  if (!device.is_cuda()) throw DeviceError("lower_cuda needs a CUDA device, not " + device.str());
  gpu::check_device(device.index);
  gpu::CudaBackend backend{device.index};
  return lowering::lower_plan(plan, device, backend);
}

}  // namespace einexpr
