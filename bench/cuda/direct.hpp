#pragma once
// The same-run baselines, called directly with no einexpr in between: cuBLAS on the same
// device matrices, and cudaMemcpyAsync / cudaMemsetAsync on the same bytes. All of them
// are queued on einexpr's stream of the device (gpu::stream), so GpuTimer's events and
// einexpr's own work order them.
#include <cublas_v2.h>

#include <cstddef>
#include <string>

#include "blas_args.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/tensor.hpp"
#include "owners.hpp"

namespace einexpr::bench {

/// How a DirectBlas handle is set up.
enum class BlasSettings {
  raw,      // cuBLAS's defaults: CUBLAS_DEFAULT_MATH and its default workspace
  einexpr,  // what codegen/lower/cuda/blas_context.cpp sets: reduced-precision split-K
            // reductions disallowed, and its own 32 MiB (Hopper) / 4 MiB workspace
};

/// A cuBLAS handle of its own, bound to einexpr's stream of `device`.
class DirectBlas {
 public:
  DirectBlas(int device, BlasSettings settings);
  DirectBlas(const DirectBlas&) = delete;
  DirectBlas& operator=(const DirectBlas&) = delete;

  /// c[m, n] = a[m, k] b[k, n], all row-major contiguous on the GPU, one dtype (bf16,
  /// f16 or f32): one cublasGemmEx with blas_args.hpp's rowmajor_gemm arguments (the
  /// mapping einexpr's gemm_plan.cpp makes for these layouts too).
  void gemm(const Tensor& a, const Tensor& b, Tensor& c) const;
  /// s[b, h, i, j] = sum_d q[b, h, i, d] k[b, h, j, d], row-major contiguous: one
  /// cublasGemmStridedBatchedEx over b*h matrices with blas_args.hpp's scores_gemm arguments.
  void scores(const Tensor& q, const Tensor& k, Tensor& s) const;
  std::string describe() const;

 private:
  /// The GEMM `g` with x, y the row-major operands it names, written into out.
  void call(const ColMajorGemm& g, const Tensor& x, const Tensor& y, Tensor& out) const;
  int device_;
  BlasSettings settings_;
  gpu::Owned<cublasHandle_t, cublasDestroy> handle_;
  gpu::OwnedDeviceMemory workspace_;
};

/// The compute type einexpr uses for `dtype` (codegen/lower/cuda/contract_cuda.cpp):
/// CUBLAS_COMPUTE_32F for bf16 / f16, and for f32 CUBLAS_COMPUTE_32F unless EINEXPR_TF32=1.
cublasComputeType_t compute_type_for(DType dtype);
/// True when f32 GEMMs run as TF32 (EINEXPR_TF32=1).
bool f32_is_tf32();
const char* compute_type_name(cublasComputeType_t type);

/// cudaMemcpyAsync device to device of `bytes` from src's data to dst's (both on the GPU).
void copy_d2d(Tensor& dst, const Tensor& src, std::size_t bytes);
/// cudaMemsetAsync of dst's first `bytes` bytes to `value`.
void memset_device(Tensor& dst, int value, std::size_t bytes);

}  // namespace einexpr::bench
