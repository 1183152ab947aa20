// gemm() through Eigen's own kernels (EINEXPR_BLAS=eigen).
#include "eigen_gemm.hpp"

namespace einexpr::cpu {

void gemm(const float* a, const MatrixMap& am, const float* b, const MatrixMap& bm, float* c, const MatrixMap& cm) {
  eigen_gemm(a, am, b, bm, c, cm);
}
void gemm(const double* a, const MatrixMap& am, const double* b, const MatrixMap& bm, double* c, const MatrixMap& cm) {
  eigen_gemm(a, am, b, bm, c, cm);
}
void gemm(const std::int64_t* a, const MatrixMap& am, const std::int64_t* b, const MatrixMap& bm, std::int64_t* c,
          const MatrixMap& cm) {
  eigen_gemm(a, am, b, bm, c, cm);
}

void gemm_single_threaded() { eigen_single_threaded(); }

const char* gemm_library() noexcept { return "eigen"; }

}  // namespace einexpr::cpu
