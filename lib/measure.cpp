// measure_run: a compiled expression timed (warm-up, repeats, median, device synchronized)
// beside the cost of its plan, as achieved FLOP/s, bandwidth and MFU.
#include <cstdio>

#include "einexpr/cost.hpp"
#include "einexpr/runtime/threads.hpp"

namespace einexpr {

RunReport measure_run(const Compiled& expression, std::span<const Tensor> inputs, const DeviceSpec& device,
                      const MeasureOptions& options) {
  RunReport r;
  const Plan& plan = expression.plan(inputs);
  r.cost = cost(plan);
  MeasureOptions o = options;
  o.device = inputs.empty() ? Device::cpu() : inputs[0].device();
  r.time = measure([&] { expression.run(inputs); }, o);
  r.flops_per_s = r.cost.flops.to_double() / r.time.median_s;
  r.bytes_per_s = r.cost.ideal_bytes().to_double() / r.time.median_s;
  r.mfu = mfu(r.cost.flops, r.time.median_s, device, plan.dtype);
  r.device = device.name;
  r.threads = num_threads();
  return r;
}

std::string RunReport::str() const {
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s '%s' (%s): %.4g ms median of %d, %.4g GFLOP/s, %.4g GB/s, MFU %.3f on %s",
                cost.op.c_str(), cost.pattern.c_str(), std::string(name(cost.dtype)).c_str(), time.median_s * 1e3,
                time.repeats, flops_per_s / 1e9, bytes_per_s / 1e9, mfu, device.c_str());
  return buf;
}

}  // namespace einexpr
