#pragma once
// Private to codegen/cost: the measurement behind calibrate_cpu() (cpu_device.cpp), which
// device_specs.cpp puts into the device table.
#include "einexpr/codegen/cost.hpp"

namespace einexpr::detail {

/// Measures the 'cpu' device now and writes the cache (cpu_cache_path(), when it can).
CpuCalibration measure_cpu();

}  // namespace einexpr::detail
