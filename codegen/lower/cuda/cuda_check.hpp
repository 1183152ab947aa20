#pragma once
// Private, CUDA builds only: what codegen/lower/cuda shares with runtime/cuda. The runtime's
// private CUDA headers are reached by relative path (codegen may include runtime, never
// the reverse), so there is one EINEXPR_CUDA_CHECK, one stream per device, one
// definition of each element conversion.
#include "../../../runtime/cuda/cuda_check.hpp"     // EINEXPR_CUDA_CHECK, EINEXPR_CUBLAS_CHECK
#include "../../../runtime/cuda/device_context.hpp"  // DeviceGuard, stream(), properties()
#include "../../../runtime/cuda/owners.hpp"          // Owned<handle, destroy>
