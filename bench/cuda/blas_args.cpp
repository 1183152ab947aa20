#include "blas_args.hpp"

namespace einexpr::bench {

ColMajorGemm rowmajor_gemm(std::int64_t m, std::int64_t k, std::int64_t n) {
  ColMajorGemm g;
  // c^T (n x m, ld n) = y^T (n x k: y[k, n] stored with row stride n) x^T (k x m: ld k).
  g.m = n;
  g.n = m;
  g.k = k;
  g.a_operand = 1;
  g.lda = n;
  g.b_operand = 0;
  g.ldb = k;
  g.ldc = n;
  return g;
}

ColMajorGemm scores_gemm(std::int64_t batch, std::int64_t i, std::int64_t j, std::int64_t d) {
  ColMajorGemm g;
  // Per batch entry: s^T (j x i, ld j) = kk (j x d) q^T (d x i). Row-major kk[j, d] is the
  // column-major d x j matrix kk^T (ld d), so op(A) = A^T with A = kk: transa, lda d.
  // Row-major q[i, d] is column-major q^T (d x i, ld d): no transpose, ldb d.
  g.m = j;
  g.n = i;
  g.k = d;
  g.transa = true;
  g.a_operand = 1;
  g.lda = d;
  g.stride_a = j * d;
  g.b_operand = 0;
  g.ldb = d;
  g.stride_b = i * d;
  g.ldc = j;
  g.stride_c = i * j;
  g.batch = batch;
  return g;
}

}  // namespace einexpr::bench
