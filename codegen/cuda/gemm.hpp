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

/// Adds kernels computing c[B.., m, n] = sum_k a[B.., m, k] b[B.., k, n] with cuBLAS.
/// Operands are used in place where a unit stride in one of their last two dims allows
/// (a transpose is an op flag and a leading dimension); otherwise they are staged by a
/// copy. Batch dims are merged where their strides nest; several that do not are either
/// looped over or staged, whichever moves less time (see contract_cuda.cpp).
void add_gemm(Lowering& low, Operand a, Operand b, Operand c, const GemmTypes& types);

/// A contiguous copy of `op` at dtype `to` in a new temporary (kernels added to `low`).
Operand stage(Lowering& low, const Operand& op, DType to);

}  // namespace einexpr::gpu
