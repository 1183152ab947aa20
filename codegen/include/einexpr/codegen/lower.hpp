#pragma once
// Lowering: Plan -> Program for a device. Both lowerings visit the same Step variant with
// one overload per alternative, so a step missing from a backend is a compile error.
#include <cstdint>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/device.hpp"
#include "einexpr/runtime/program.hpp"

namespace einexpr {

/// OpenBLAS (or Eigen, EINEXPR_BLAS) GEMMs and our blocked loops on the CPU (OpenMP).
Program lower_cpu(const Plan& plan);
/// cuBLAS and our CUDA kernels on CUDA device `device.index`. In a build without CUDA,
/// throws DeviceError("einexpr was built without CUDA").
Program lower_cuda(const Plan& plan, Device device);
namespace detail {
/// lower_cpu and lower_cuda, validating the plan first only when `check` is set.
Program lower_cpu(const Plan& plan, bool check);
Program lower_cuda(const Plan& plan, Device device, bool check);
}  // namespace detail
/// lower_cpu or lower_cuda, by device.
Program lower(const Plan& plan, Device device);
/// The same for a plan validate() has passed already (the pipeline's, pipeline.hpp): it is
/// not checked again. lower_cpu, lower_cuda and lower validate what they lower.
Program lower_validated(const Plan& plan, Device device);

/// The GEMM library the CPU lowering calls: "eigen" or "openblas" (EINEXPR_BLAS).
const char* cpu_gemm_backend() noexcept;

/// The instruction set of the CPU lowering's vector kernels on this CPU: "scalar", "avx2"
/// or "avx512" (chosen at run time).
const char* cpu_isa() noexcept;
/// FMA chains on registers with those kernels' widest vectors, no memory traffic (the
/// 'cpu' device's peak is measured with it): `steps` fused multiply-adds on each chain, in
/// f64 or f32. Returns the FLOPs done (2 per multiply-add) and their sum (so that the work
/// is not optimized away).
struct CpuFmaRun {
  double flops = 0;
  double sum = 0;
};
CpuFmaRun cpu_fma_run(bool f64, std::int64_t steps);

}  // namespace einexpr
