#pragma once
// Lowering: Plan -> Program for a device. Both lowerings visit the same Step variant with
// one overload per alternative, so a step missing from a backend is a compile error.
#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/program.hpp"

namespace einexpr {

/// OpenBLAS (or Eigen, EINEXPR_BLAS) GEMMs and our blocked loops on the CPU (OpenMP).
Program lower_cpu(const Plan& plan);
/// cuBLAS and our CUDA kernels on CUDA device `device.index`. In a build without CUDA,
/// throws DeviceError("einexpr was built without CUDA").
Program lower_cuda(const Plan& plan, Device device);
/// lower_cpu or lower_cuda, by device.
Program lower(const Plan& plan, Device device);

/// The GEMM library the CPU lowering calls: "eigen" or "openblas" (EINEXPR_BLAS).
const char* cpu_gemm_backend() noexcept;

}  // namespace einexpr
