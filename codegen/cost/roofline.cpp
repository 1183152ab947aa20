// roofline() and mfu(): a Cost against a device's promised peak and bandwidth.
//   time lower bound = max(flops / peak, ideal bytes / bandwidth)
// FLOPs are the 2-per-multiply-add count (cost.flops); the seeds' exact-count figures are
// in Cost::intensity_exact() for comparison.
#include <algorithm>
#include <cmath>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

Roofline roofline(const Cost& cost, const DeviceSpec& device) {
  Roofline r;
  r.device = device.name;
  r.dtype = cost.dtype;
  r.peak_flops = device.peak_for(cost.dtype);
  if (!(device.bandwidth > 0)) throw Error("device '" + device.name + "' has no memory bandwidth");
  r.bandwidth = device.bandwidth;
  r.accelerator_intensity = r.peak_flops / r.bandwidth;
  r.intensity = cost.intensity();
  r.compute_time_s = cost.flops.to_double() / r.peak_flops;
  r.memory_time_s = (cost.bytes_read.to_double() + cost.bytes_written.to_double()) / r.bandwidth;
  r.time_s = std::max(r.compute_time_s, r.memory_time_s);
  r.compute_bound = r.compute_time_s > 0 && r.compute_time_s >= r.memory_time_s;
  r.best_mfu = r.time_s > 0 ? r.compute_time_s / r.time_s : 0.0;
  return r;
}

double mfu(Count flops, double seconds, const DeviceSpec& device, DType dtype) {
  if (!(seconds > 0) || !std::isfinite(seconds))
    throw Error("mfu: the measured time must be a positive number of seconds, not " + std::to_string(seconds));
  return flops.to_double() / seconds / device.peak_for(dtype);
}

}  // namespace einexpr
