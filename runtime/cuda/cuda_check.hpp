#pragma once
// Private, CUDA builds only: CUDA and cuBLAS status codes become einexpr::DeviceError.
//
//   EINEXPR_CUDA_CHECK(cudaMalloc(&p, n));      // throws DeviceError on failure
//   EINEXPR_CUBLAS_CHECK(cublasCreate(&h));
//   kernel<<<grid, block, 0, stream>>>(...);
//   EINEXPR_CUDA_CHECK_LAUNCH("copy_strided");  // the launch's own error, if any
//
// Each evaluates its argument once. The message names the call as written, the error's
// name and description, and file:line, e.g.
//   "CUDA call failed: cudaSetDevice(9999): invalid device ordinal (cudaErrorInvalidDevice)
//    [runtime/cuda/device_context.cpp:41]".
// codegen/lower/cuda includes this header too (by a relative path): the runtime is below
// codegen in the dependency rule, so both layers share one definition.
#include <cublas_api.h>
#include <cuda_runtime_api.h>

namespace einexpr::gpu {

/// Throws DeviceError for a failed CUDA runtime call (and clears CUDA's last-error state,
/// so a later check does not report this error again).
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
/// Throws DeviceError for a failed cuBLAS or cuBLASLt call.
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
/// "CUBLAS_STATUS_NOT_SUPPORTED", ... (our own table: the runtime does not link cuBLAS).
const char* cublas_status_name(cublasStatus_t status) noexcept;
/// After a kernel launch: throws DeviceError naming `kernel` if the launch failed.
void check_launch(const char* kernel, const char* file, int line);

}  // namespace einexpr::gpu

#define EINEXPR_CUDA_CHECK(call)                                                        \
  do {                                                                                  \
    const cudaError_t einexpr_cuda_status_ = (call);                                    \
    if (einexpr_cuda_status_ != cudaSuccess)                                            \
      ::einexpr::gpu::throw_cuda_error(einexpr_cuda_status_, #call, __FILE__, __LINE__); \
  } while (false)

#define EINEXPR_CUBLAS_CHECK(call)                                                           \
  do {                                                                                       \
    const cublasStatus_t einexpr_cublas_status_ = (call);                                    \
    if (einexpr_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                     \
      ::einexpr::gpu::throw_cublas_error(einexpr_cublas_status_, #call, __FILE__, __LINE__); \
  } while (false)

#define EINEXPR_CUDA_CHECK_LAUNCH(kernel) ::einexpr::gpu::check_launch((kernel), __FILE__, __LINE__)
