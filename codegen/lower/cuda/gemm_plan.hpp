#pragma once
// Private, CUDA builds only, but pure C++ (no CUDA types): how a batched row-major
// contraction c[B.., m, n] = sum_k a[B.., m, k] b[B.., k, n] maps onto cuBLAS's
// column-major strided-batched GEMM D = op(P) op(Q). Pure so that CPU tests can run the
// plan through an emulation of cuBLAS's documented semantics (tests/cuda/host).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "einexpr/runtime/layout.hpp"

namespace einexpr::gpu {

/// What a matrix argument of the call points at.
enum class Source : unsigned char { a, b, c, staged_a, staged_b, staged_c };

/// One matrix argument of the column-major call.
struct MatrixArg {
  Source source = Source::a;
  std::int64_t offset = 0;   // elements, from the source's base
  bool transpose = false;    // CUBLAS_OP_T
  std::int64_t ld = 1;
  Strides batch;             // per batch dim of GemmPlan::batch
};

struct GemmPlan {
  bool stage_a = false, stage_b = false, stage_c = false;  // copy to a contiguous temporary first
  Layout staged_a, staged_b, staged_c;                     // their layouts (offset 0)
  std::int64_t m = 0, n = 0, k = 0;                        // of the column-major call
  MatrixArg p, q, d;                                       // D (m x n) = op(P) op(Q)
  Shape batch;                                             // the call's batch dims
  std::size_t batched = 0;  // the dim of `batch` cuBLAS batches over (the longest); the others loop
};

/// The plan for a, b, c (layouts as in the Plan; batch dims first; c non-overlapping).
/// Element sizes feed the loop-or-stage choice (contract_cuda.cpp explains the model).
GemmPlan plan_gemm(Layout a, Layout b, Layout c, std::size_t ab_size, std::size_t c_size);

/// Calls fn(p_offset, q_offset, d_offset, count, p_stride, q_stride, d_stride) once per
/// cuBLAS call of the plan (offsets in elements; count matrices strided by the strides).
void for_each_gemm_call(const GemmPlan& plan,
                        const std::function<void(std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                 std::int64_t, std::int64_t)>& fn);

}  // namespace einexpr::gpu
