#pragma once
// Pure C++ (no CUDA types), so tests can check it on the CPU: the arguments of the direct
// cuBLAS baselines. cuBLAS is column-major; our tensors are row-major, and a row-major
// r x c matrix with row stride ld is the column-major c x r matrix with leading dimension ld.
// So the row-major product c[m, n] = x[m, k] y[k, n] is computed as the column-major
// c^T (n x m) = y^T (n x k) x^T (k x m): cuBLAS's A is y, its B is x, no transposes.
#include <cstdint>

namespace einexpr::bench {

/// One column-major (strided-batched) GEMM: C = op(A) op(B), C m x n.
struct ColMajorGemm {
  bool transa = false, transb = false;  // CUBLAS_OP_T when true
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries
  std::int64_t batch = 1;
  int a_operand = 0, b_operand = 1;  // which row-major operand (0: first, 1: second) is A, B
};

/// c[m, n] = x[m, k] y[k, n], all row-major contiguous.
ColMajorGemm rowmajor_gemm(std::int64_t m, std::int64_t k, std::int64_t n);
/// s[t, i, j] = sum_d q[t, i, d] kk[t, j, d] for t < batch, all row-major contiguous
/// (attention scores with t = b * h).
ColMajorGemm scores_gemm(std::int64_t batch, std::int64_t i, std::int64_t j, std::int64_t d);

}  // namespace einexpr::bench
