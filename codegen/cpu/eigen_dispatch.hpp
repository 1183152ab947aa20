#pragma once
// Eigen's corner of the CPU lowering: strided matrices mapped in place (Eigen::Map with an
// OuterStride) and the GEMM between them. Only contract_cpu.cpp includes this header.
#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

namespace einexpr::cpu {

/// How Eigen maps a strided [rows, cols] matrix in place: one dim has unit stride (the
/// inner one), the other a stride of at least the inner length (`outer`).
struct MatrixMap {
  std::int64_t rows = 0, cols = 0;
  bool row_major = true;
  std::int64_t outer = 1;
  MatrixMap transposed() const { return {cols, rows, !row_major, outer}; }
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

template <class T, int Order>
using ConstMatrixMap =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, 0, Eigen::OuterStride<>>;
template <class T>
using ColMajorMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>, 0, Eigen::OuterStride<>>;

template <class T, int AOrder, int BOrder>
void gemm_orders(const T* a, const MatrixMap& am, const T* b, const MatrixMap& bm, ColMajorMap<T>& c) {
  const ConstMatrixMap<T, AOrder> A(a, am.rows, am.cols, Eigen::OuterStride<>(am.outer));
  const ConstMatrixMap<T, BOrder> B(b, bm.rows, bm.cols, Eigen::OuterStride<>(bm.outer));
  c.noalias() = A * B;
}

/// c = a * b for matrices mapped in place. A row-major c is computed as c^T = b^T a^T, so
/// Eigen's GEMM is instantiated for a column-major result only.
template <class T>
void gemm(const T* a, MatrixMap am, const T* b, MatrixMap bm, T* c, MatrixMap cm) {
  if (cm.rows == 0 || cm.cols == 0) return;
  if (cm.row_major) {
    std::swap(a, b);
    std::swap(am, bm);
    am = am.transposed();
    bm = bm.transposed();
    cm = cm.transposed();
  }
  ColMajorMap<T> C(c, cm.rows, cm.cols, Eigen::OuterStride<>(cm.outer));
  if (am.cols == 0) {
    C.setZero();
    return;
  }
  constexpr int R = Eigen::RowMajor, K = Eigen::ColMajor;
  if (am.row_major && bm.row_major) gemm_orders<T, R, R>(a, am, b, bm, C);
  else if (am.row_major) gemm_orders<T, R, K>(a, am, b, bm, C);
  else if (bm.row_major) gemm_orders<T, K, R>(a, am, b, bm, C);
  else gemm_orders<T, K, K>(a, am, b, bm, C);
}

/// Eigen's own GEMM threads (a process-wide setting; written only when it changes).
inline void set_gemm_threads(int threads) {
  if (Eigen::nbThreads() != threads) Eigen::setNbThreads(threads);
}

}  // namespace einexpr::cpu
