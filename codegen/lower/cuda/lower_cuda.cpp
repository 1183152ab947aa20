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
  const std::size_t es = element_size(low.plan.dtype_of(s.dst));
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

void lower_fill(const FillStep& s, Lowering& low) {
  const Value dst = low.value(s.dst);
  const DType dtype = low.plan.dtype_of(s.dst);
  const int device = low.device;
  const double value = s.value;
  low.add_kernel("fill", [=](const Workspace& ws) { fill_values(device, dtype, buffer_base(ws, dst.buffer), dst.layout, value); });
}

/// A device's part of a split axis (plan.hpp's AxisPart: a mesh run, which is MPI's on the
/// CPU): not lowered to CUDA.
void cpu_only(const AxisPart& part, const char* what) {
  if (part.split())
    throw Error(std::string(what) + " on a device's part of a split axis (a run on a device mesh) is lowered to the CPU only");
}

void lower_gather(const GatherStep& s, Lowering& low) {
  cpu_only(s.part, "get_at");
  const Value src = low.value(s.src), index = low.value(s.index), dst = low.value(s.dst);
  const std::size_t es = element_size(low.plan.dtype_of(s.dst));
  const DType index_dtype = low.plan.dtype_of(s.index);
  const std::int64_t length = s.length, stride = s.stride;
  const int device = low.device, scratch = low.add_temp(8);
  low.add_kernel("gather", [=](const Workspace& ws) {
    check_indices(device, buffer_base(ws, index.buffer), index.layout, index_dtype, length,
                  "get_at's indices (operand 2)", buffer_base(ws, scratch));
    gather_values(device, es, buffer_base(ws, dst.buffer), dst.layout, buffer_base(ws, src.buffer), src.layout,
                  buffer_base(ws, index.buffer), index.layout, index_dtype, stride);
  });
}

void lower_scatter_add(const ScatterAddStep& s, Lowering& low) {
  cpu_only(s.part, "add_at");
  const Value acc = low.value(s.acc), index = low.value(s.index), updates = low.value(s.updates);
  const DType dtype = low.plan.dtype_of(s.dst), index_dtype = low.plan.dtype_of(s.index);
  const std::int64_t length = s.length, stride = s.stride;
  const int device = low.device, scratch = low.add_temp(8);
  low.add_kernel("scatter_add", [=](const Workspace& ws) {
    check_indices(device, buffer_base(ws, index.buffer), index.layout, index_dtype, length,
                  "add_at's indices (operand 2)", buffer_base(ws, scratch));
    scatter_add_values(device, dtype, buffer_base(ws, acc.buffer), acc.layout, buffer_base(ws, index.buffer),
                       index.layout, index_dtype, buffer_base(ws, updates.buffer), updates.layout, stride);
  });
}

void lower_cross_entropy(const CrossEntropyStep& s, Lowering& low) {
  cpu_only(s.part, "cross_entropy");
  const bool backward = s.backward;
  const Value logits = low.value(s.srcs[backward ? 1 : 0]), targets = low.value(s.srcs[backward ? 2 : 1]);
  const Value dst = low.value(s.dst);
  const Value per_row = backward ? low.value(s.srcs[0]) : dst;
  const XentGeometry g =
      plan_cross_entropy_rows(s, logits.layout, targets.layout, per_row.layout, backward ? &dst.layout : nullptr);
  const DType dtype = low.plan.dtype_of(s.dst), index_dtype = low.plan.dtype_of(s.srcs[backward ? 2 : 1]);
  const std::int64_t ignore = s.ignore_index;
  const int device = low.device, scratch = low.add_temp(8);
  low.add_kernel(backward ? "d.cross_entropy" : "cross_entropy", [=](const Workspace& ws) {
    check_indices(device, buffer_base(ws, targets.buffer), targets.layout, index_dtype, g.classes,
                  "cross_entropy's targets (operand 2)", buffer_base(ws, scratch), &ignore);
    cross_entropy_rows(device, dtype, g, backward, ignore, index_dtype, buffer_base(ws, dst.buffer),
                       buffer_base(ws, logits.buffer), buffer_base(ws, targets.buffer),
                       backward ? buffer_base(ws, per_row.buffer) : nullptr);
  });
}

void lower_random(const RandomStep& s, Lowering& low) {
  const Value seed = low.value(s.seed), dst = low.value(s.dst);
  const std::int64_t n = checked_numel(dst.layout.shape);
  const double p = s.p;
  const int device = low.device;
  low.add_kernel("random_mask", [=](const Workspace& ws) {
    random_mask(device, reinterpret_cast<std::uint8_t*>(buffer_base(ws, dst.buffer)) + dst.layout.offset, n,
                reinterpret_cast<const std::int64_t*>(buffer_base(ws, seed.buffer)) + seed.layout.offset, p);
  });
}

void lower_mask(const MaskStep& s, Lowering& low) {
  const Value src = low.value(s.src), mask = low.value(s.mask), dst = low.value(s.dst);
  const DType dtype = low.plan.dtype_of(s.dst);
  const double scale = s.scale;
  const int device = low.device;
  low.add_kernel("mask", [=](const Workspace& ws) {
    mask_values(device, dtype, buffer_base(ws, dst.buffer), dst.layout, buffer_base(ws, src.buffer), src.layout,
                buffer_base(ws, mask.buffer), mask.layout, scale);
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
  void operator()(const FillStep& s, lowering::Context& c) const { lower(s, c, lower_fill); }
  void operator()(const GatherStep& s, lowering::Context& c) const { lower(s, c, lower_gather); }
  void operator()(const ScatterAddStep& s, lowering::Context& c) const { lower(s, c, lower_scatter_add); }
  void operator()(const JoinStep&, lowering::Context&) const {}  // the parts' copies filled the buffer
  void operator()(const CrossEntropyStep& s, lowering::Context& c) const { lower(s, c, lower_cross_entropy); }
  void operator()(const RandomStep& s, lowering::Context& c) const { lower(s, c, lower_random); }
  void operator()(const MaskStep& s, lowering::Context& c) const { lower(s, c, lower_mask); }
};

}  // namespace

}  // namespace gpu

Program detail::lower_cuda(const Plan& plan, Device device, bool check) {
  if (!device.is_cuda()) throw DeviceError("lower_cuda needs a CUDA device, not " + device.str());
  gpu::check_device(device.index);
  gpu::CudaBackend backend{device.index};
  return lowering::lower_plan(plan, device, backend, check);
}

Program lower_cuda(const Plan& plan, Device device) { return detail::lower_cuda(plan, device, true); }

}  // namespace einexpr
