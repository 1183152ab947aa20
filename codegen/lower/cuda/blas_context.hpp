#pragma once
// Private, CUDA builds only: the cuBLAS and cuBLASLt handles of each device.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>

namespace einexpr::gpu {

/// One device's handles, created on first use and kept until the process exits (as the
/// streams are). Both are bound to the device's stream and share one workspace, which is
/// safe because everything on that stream runs in order. The cuBLAS handle's math mode
/// forbids reduced-precision reductions: split-K partial sums stay in the compute type.
struct BlasContext {
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;  // 32 MiB on Hopper (cuBLAS's advice there), 4 MiB before
  const float* one = nullptr;       // a device float 1.0f: the fp8 scale pointers
};
const BlasContext& blas(int device);

/// The compute type of f32 GEMMs: CUBLAS_COMPUTE_32F (full f32 products), unless the
/// environment has EINEXPR_TF32=1, which opts in to CUBLAS_COMPUTE_32F_FAST_TF32 (tensor
/// cores; inputs rounded to 10 mantissa bits, relative error near 3e-4). Read once.
cublasComputeType_t f32_compute_type();

}  // namespace einexpr::gpu
