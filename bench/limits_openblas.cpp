// GEMM limit through OpenBLAS's sgemm, called directly with its own threads (built when
// CMake finds OpenBLAS; limits_openblas_none.cpp otherwise).
#include "bench.hpp"

extern "C" {
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc);
void openblas_set_num_threads(int threads);
}

namespace bench {

bool have_openblas() { return true; }

void set_openblas_threads(int threads) { openblas_set_num_threads(threads); }

bool gemm_openblas(const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
                   std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed) {
  // Row-major C = A B is column-major C^T = B^T A^T.
  const int M = static_cast<int>(n), N = static_cast<int>(m), K = static_cast<int>(k);
  const int la = static_cast<int>(ldb), lb = static_cast<int>(lda), lc = static_cast<int>(ldc);
  const float one = 1, zero = 0;
  sgemm_(b_transposed ? "T" : "N", "N", &M, &N, &K, &one, b, &la, a, &lb, &zero, c, &lc);
  return true;
}

}  // namespace bench
