// GEMM limits through Eigen's own kernels, and the one place that sets every thread count.
#include <Eigen/Core>
#include <omp.h>

#include "bench.hpp"

namespace bench {

void set_threads(int threads) {
  einexpr::set_num_threads(threads);
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
  set_openblas_threads(threads);
}

namespace {
template <int BOrder>
void eigen_product(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
                   std::int64_t m, std::int64_t n, std::int64_t k) {
  using Stride = Eigen::OuterStride<>;
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using BMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, BOrder>;
  const Eigen::Map<const RowMajor, 0, Stride> A(a, m, k, Stride(lda));
  const Eigen::Map<const BMatrix, 0, Stride> B(b, k, n, Stride(ldb));
  Eigen::Map<RowMajor, 0, Stride> C(c, m, n, Stride(ldc));
  C.noalias() = A * B;
}
}  // namespace

void gemm_eigen(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
                std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed) {
  if (b_transposed) eigen_product<Eigen::ColMajor>(a, lda, b, ldb, c, ldc, m, n, k);
  else eigen_product<Eigen::RowMajor>(a, lda, b, ldb, c, ldc, m, n, k);
}

}  // namespace bench
