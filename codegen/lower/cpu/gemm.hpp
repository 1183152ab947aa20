#pragma once
// The GEMM under ContractStep: c = a * b on strided matrices mapped in place, one call on
// one thread (contract_cpu.cpp shares batches and parts of a GEMM among threads itself, so
// the libraries' own thread pools never run beside OpenMP's). Two implementations, and
// CMake compiles one (EINEXPR_BLAS): gemm_eigen.cpp (Eigen's own kernels) and
// gemm_blas.cpp (OpenBLAS's sgemm/dgemm; Eigen for int64). No Eigen in this header.
#include <algorithm>
#include <cstdint>
#include <optional>

namespace einexpr::cpu {

/// How a strided [rows, cols] matrix is mapped in place: one dim has unit stride (the inner
/// one), the other a stride of at least the inner length (`outer`).
struct MatrixMap {
  std::int64_t rows = 0, cols = 0;
  bool row_major = true;
  std::int64_t outer = 1;
  MatrixMap transposed() const { return {cols, rows, !row_major, outer}; }
  /// Elements between rows (cols) i and i + 1.
  std::int64_t row_step() const { return row_major ? outer : 1; }
  std::int64_t col_step() const { return row_major ? 1 : outer; }
};

/// The in-place map of a matrix with strides (row_stride, col_stride), or nullopt when
/// no unit-stride map fits. A dim of length 1 fits any stride.
inline std::optional<MatrixMap> fit_matrix(std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                                           std::int64_t col_stride) {
  const bool one_row = rows <= 1, one_col = cols <= 1;
  const std::int64_t r = std::max<std::int64_t>(rows, 1), c = std::max<std::int64_t>(cols, 1);
  if ((one_col || col_stride == 1) && (one_row || row_stride >= c))
    return MatrixMap{rows, cols, true, one_row ? c : row_stride};
  if ((one_row || row_stride == 1) && (one_col || col_stride >= r))
    return MatrixMap{rows, cols, false, one_col ? r : col_stride};
  return std::nullopt;
}

/// c = a * b (a: [m, k], b: [k, n], c: [m, n]), on the calling thread.
void gemm(const float* a, const MatrixMap& am, const float* b, const MatrixMap& bm, float* c, const MatrixMap& cm);
void gemm(const double* a, const MatrixMap& am, const double* b, const MatrixMap& bm, double* c, const MatrixMap& cm);
void gemm(const std::int64_t* a, const MatrixMap& am, const std::int64_t* b, const MatrixMap& bm, std::int64_t* c,
          const MatrixMap& cm);

/// Keeps the library's own threads out (Eigen's and OpenBLAS's thread counts are process
/// settings): call before gemm() calls, outside any parallel region.
void gemm_single_threaded();

/// "eigen" or "openblas".
const char* gemm_library() noexcept;

}  // namespace einexpr::cpu
