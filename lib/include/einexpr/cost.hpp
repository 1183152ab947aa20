#pragma once
// Costs from a pattern and axis sizes alone, with no tensors: the same path as the ops
// up to the Plan, then cost(). Sizes name every axis of the pattern; compositions take
// their lengths from their parts.
//
//   Cost c = cost_einsum("b s1 h, b s2 h -> b s1 s2",
//                        {{"b", 128}, {"s1", 100}, {"s2", 200}, {"h", 128}}, DType::bf16);
//   c.flops  == 2*128*100*200*128;  c.flops_formula.str() == "2·b·h·s1·s2"
#include <span>
#include <string>
#include <string_view>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/ops.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/timing.hpp"

namespace einexpr {

Cost cost_einsum(std::string_view pattern, const AxisLengths& sizes, DType dtype = DType::f32);
Cost cost_rearrange(std::string_view pattern, const AxisLengths& sizes, DType dtype = DType::f32);
/// `correction`: var and std only (torch's; 1 by default).
Cost cost_reduce(std::string_view pattern, Reduction reduction, const AxisLengths& sizes,
                 DType dtype = DType::f32, std::int64_t correction = 1);
Cost cost_repeat(std::string_view pattern, const AxisLengths& sizes, DType dtype = DType::f32);
/// A normalization from sizes: cost_normalize("b h q [k]", Normalization::softmax, sizes).
Cost cost_normalize(std::string_view pattern, Normalization kind, const AxisLengths& sizes, DType dtype = DType::f32,
                    double eps = 0);
/// Elementwise f(x) on a tensor of `shape`.
Cost cost_map(UnaryOp function, const Shape& shape, DType dtype = DType::f32);
/// Elementwise f(x) with a pattern: cost_map("b s h -> b s h", UnaryOp::gelu, sizes).
Cost cost_map(std::string_view pattern, UnaryOp function, const AxisLengths& sizes,
              DType dtype = DType::f32);
Cost cost_map(std::string_view pattern, BinaryOp function, const AxisLengths& sizes,
              DType dtype = DType::f32);

/// A measured run beside its computed cost: counts computed, timings measured, printed together.
struct RunReport {
  Cost cost;                 // of the plan that ran
  Measurement time;          // warm-up, repeats, median (device synchronized)
  double flops_per_s = 0;    // cost.flops / median
  double bytes_per_s = 0;    // ideal bytes / median
  double mfu = 0;            // flops_per_s / the device's promised peak for the dtype
  std::string device;        // the DeviceSpec's name
  int threads = 0;           // CPU threads used
  /// One line: "einsum 'i j, j k -> i k': 1.23 ms median, 45.6 GFLOP/s, 12.3 GB/s, MFU 0.27".
  std::string str() const;
};
/// Runs `expression` on `inputs` as measure() does and reports it against `device`'s peak.
RunReport measure_run(const Compiled& expression, std::span<const Tensor> inputs, const DeviceSpec& device,
                      const MeasureOptions& options = {});

/// The plan of an op from sizes alone (contiguous inputs), as `einexpr explain` prints it.
/// op: "einsum", "rearrange", "reduce", "repeat"; reduction only for "reduce".
Plan plan_from_sizes(std::string_view op, std::string_view pattern, const AxisLengths& sizes,
                     DType dtype = DType::f32, Reduction reduction = Reduction::sum);
/// The same for any op the planner takes (maps too): the sizes each axis of the pattern
/// needs; sizes of axes it does not name are ignored.
Plan plan_from_sizes(const OpSpec& spec, std::string_view pattern, const AxisLengths& sizes,
                     DType dtype = DType::f32);

}  // namespace einexpr
