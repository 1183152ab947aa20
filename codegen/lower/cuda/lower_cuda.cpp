// lower_cuda(): Plan -> Program for a CUDA device, the sibling of lower_cpu. It visits the
// same Step variant with one overload per alternative (a step missing here is a compile
// error) and maps buffers the same way: plan buffer i < num_inputs is program buffer i, the
// plan's temporaries follow in order with elements * element_size bytes, and staging
// temporaries some steps need (partial sums, staged GEMM operands) are appended after them.
// Each kernel queues work on the device's stream; nothing waits for the GPU here.
#include <string>
#include <type_traits>
#include <variant>

#include "cuda_check.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/error.hpp"
#include "kernels.hpp"
#include "lowering.hpp"

namespace einexpr {

namespace gpu {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

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

void map_buffers(const Plan& plan, Program& program) {
  for (int i = 0; i < static_cast<int>(plan.buffers.size()); ++i) {
    const PlanBuffer& b = plan.buffers[static_cast<std::size_t>(i)];
    if (i < plan.num_inputs) {
      EINEXPR_ASSERT(b.input == i, "plan: buffer i < num_inputs must be input i");
      program.input_layouts.push_back(plan.values.at(static_cast<std::size_t>(i)).layout);
    } else {
      EINEXPR_ASSERT(b.input < 0, "plan: inputs' buffers come first");
      program.temp_bytes.push_back(static_cast<std::size_t>(b.elements) * element_size(plan.dtype));
    }
  }
}

}  // namespace

}  // namespace gpu

Program lower_cuda(const Plan& plan, Device device) {
  if (!device.is_cuda()) throw DeviceError("lower_cuda needs a CUDA device, not " + device.str());
  gpu::check_device(device.index);
  validate(plan);
  Program program;
  program.device = device;
  program.dtype = plan.dtype;
  gpu::map_buffers(plan, program);
  gpu::Lowering low{plan, program, device.index};
  for (const Step& step : plan.steps) {
    std::visit(gpu::Overloaded{
                   [](const ViewStep&) {},  // a view moves nothing
                   [&](const CopyStep& s) { gpu::lower_copy(s, low); },
                   [&](const ContractStep& s) { gpu::lower_contract(s, low); },
                   [&](const ReduceStep& s) { gpu::lower_reduce(s, low); },
                   [&](const MapStep& s) { gpu::lower_map(s, low); },
               },
               step);
  }
  const Value& out = plan.output_value();
  program.output_buffer = out.buffer;
  program.output_layout = out.layout;
  return program;
}

}  // namespace einexpr
