#pragma once
// Private, CUDA builds only: one cuBLAS strided-batched GEMM call site, shared by the
// contraction lowering (contract_cuda.cpp) and its fp8 path (contract_fp8.cpp).
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "einexpr/runtime/layout.hpp"
#include "lowering.hpp"

namespace einexpr::gpu {

/// An operand [batch.., rows, cols] in a program buffer, with its cuBLAS element type.
struct Operand {
  int buffer = 0;
  Layout layout;
  cudaDataType_t type = CUDA_R_32F;
  std::size_t element_size = 4;
  DType dtype = DType::f32;
};

/// The element types of one GEMM: A and B, C, and the compute type.
struct GemmTypes {
  cudaDataType_t ab = CUDA_R_32F, c = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  bool f64 = false;  // alpha and beta are doubles
};

/// cuBLAS's view of DType `d` (nullopt where cuBLAS has no GEMM for it).
std::optional<cudaDataType_t> cuda_type(DType d);

/// Adds kernels computing c[B.., m, n] = sum_k a[B.., m, k] b[B.., k, n] with cuBLAS, as
/// plan_gemm (gemm_plan.hpp) maps it: staging copies where needed, the calls, and the
/// copy of a staged result into c.
void add_gemm(Lowering& low, Operand a, Operand b, Operand c, const GemmTypes& types);

/// A contiguous copy of `op` at dtype `to` in a new temporary (kernels added to `low`).
Operand stage(Lowering& low, const Operand& op, DType to);

}  // namespace einexpr::gpu
