// gemm() through OpenBLAS (EINEXPR_BLAS=openblas): sgemm_ and dgemm_ on the matrices as
// mapped (a row-major operand is the transposed column-major one), single-threaded, since
// contract_cpu.cpp shares the work among einexpr's threads itself. int64 GEMMs, and matrices
// whose sizes or strides do not fit BLAS's 32-bit integers, go to Eigen.
#include <climits>
#include <utility>

#include "eigen_gemm.hpp"

extern "C" {
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc);
void openblas_set_num_threads(int threads);
int openblas_get_num_threads();
}

namespace einexpr::cpu {

namespace {

bool fits_int(std::initializer_list<std::int64_t> values) {
  for (std::int64_t v : values)
    if (v > INT_MAX) return false;
  return true;
}

template <class T, class Blas>
void blas_gemm(const T* a, MatrixMap am, const T* b, MatrixMap bm, T* c, MatrixMap cm, Blas blas) {
  if (cm.rows == 0 || cm.cols == 0) return;
  if (!fits_int({cm.rows, cm.cols, am.cols, am.outer, bm.outer, cm.outer})) return eigen_gemm(a, am, b, bm, c, cm);
  const detail::ColumnMajorCall call = detail::column_major_call(am, bm, cm);
  if (call.swapped) std::swap(a, b);
  am = call.first;
  bm = call.second;
  cm = call.out;
  if (am.cols == 0) {
    for (std::int64_t j = 0; j < cm.cols; ++j)
      for (std::int64_t i = 0; i < cm.rows; ++i) c[j * cm.outer + i] = T(0);
    return;
  }
  const int m = static_cast<int>(cm.rows), n = static_cast<int>(cm.cols), k = static_cast<int>(am.cols);
  const int lda = static_cast<int>(am.outer), ldb = static_cast<int>(bm.outer), ldc = static_cast<int>(cm.outer);
  const T one = 1, zero = 0;
  blas(am.row_major ? "T" : "N", bm.row_major ? "T" : "N", &m, &n, &k, &one, a, &lda, b, &ldb, &zero, c, &ldc);
}

}  // namespace

void gemm(const float* a, const MatrixMap& am, const float* b, const MatrixMap& bm, float* c, const MatrixMap& cm) {
  blas_gemm(a, am, b, bm, c, cm, sgemm_);
}
void gemm(const double* a, const MatrixMap& am, const double* b, const MatrixMap& bm, double* c, const MatrixMap& cm) {
  blas_gemm(a, am, b, bm, c, cm, dgemm_);
}
void gemm(const std::int64_t* a, const MatrixMap& am, const std::int64_t* b, const MatrixMap& bm, std::int64_t* c,
          const MatrixMap& cm) {
  eigen_gemm(a, am, b, bm, c, cm);
}

void gemm_single_threaded() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
  eigen_single_threaded();
}

const char* gemm_library() noexcept { return "openblas"; }

}  // namespace einexpr::cpu
