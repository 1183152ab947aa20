#pragma once
// Eigen's corner of the CPU lowering: strided matrices mapped in place (Eigen::Map with an
// OuterStride) and Eigen's GEMM between them. Included by gemm_eigen.cpp, and by
// gemm_blas.cpp for the integer GEMM no BLAS has.
#include <Eigen/Core>
#include <type_traits>
#include <utility>

#include "gemm.hpp"

namespace einexpr::cpu {

template <class T, int Order>
using ConstMatrixMap =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Order>, 0, Eigen::OuterStride<>>;
template <class T>
using ColMajorMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>, 0, Eigen::OuterStride<>>;

template <class T, int AOrder, int BOrder>
void eigen_gemm_orders(const T* a, const MatrixMap& am, const T* b, const MatrixMap& bm, ColMajorMap<T>& c) {
  const ConstMatrixMap<T, AOrder> A(a, am.rows, am.cols, Eigen::OuterStride<>(am.outer));
  const ConstMatrixMap<T, BOrder> B(b, bm.rows, bm.cols, Eigen::OuterStride<>(bm.outer));
  c.noalias() = A * B;
}

/// c = a * b through Eigen. A row-major c is computed as c^T = b^T a^T, so Eigen's GEMM is
/// instantiated for a column-major result only.
template <class T>
void eigen_gemm(const T* a, MatrixMap am, const T* b, MatrixMap bm, T* c, MatrixMap cm) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    // Integers wrap like numpy's and every other integer kernel's (element.hpp): the products
    // and sums are taken in the unsigned type, where wrapping is defined and gives the same
    // two's-complement bits (signed overflow is undefined; fuzz_plan's UBSan found it here).
    using U = std::make_unsigned_t<T>;
    eigen_gemm<U>(reinterpret_cast<const U*>(a), am, reinterpret_cast<const U*>(b), bm, reinterpret_cast<U*>(c), cm);
  } else {  // not instantiated for the signed integers, which go through the unsigned type above
    if (cm.rows == 0 || cm.cols == 0) return;
    const detail::ColumnMajorCall call = detail::column_major_call(am, bm, cm);
    if (call.swapped) std::swap(a, b);
    am = call.first;
    bm = call.second;
    cm = call.out;
    ColMajorMap<T> C(c, cm.rows, cm.cols, Eigen::OuterStride<>(cm.outer));
    if (am.cols == 0) {
      C.setZero();
      return;
    }
    constexpr int R = Eigen::RowMajor, K = Eigen::ColMajor;
    if (am.row_major && bm.row_major) eigen_gemm_orders<T, R, R>(a, am, b, bm, C);
    else if (am.row_major) eigen_gemm_orders<T, R, K>(a, am, b, bm, C);
    else if (bm.row_major) eigen_gemm_orders<T, K, R>(a, am, b, bm, C);
    else eigen_gemm_orders<T, K, K>(a, am, b, bm, C);
  }
}

/// Eigen's own GEMM on one thread (a process-wide setting; written only when it changes).
inline void eigen_single_threaded() {
  if (Eigen::nbThreads() != 1) Eigen::setNbThreads(1);
}

}  // namespace einexpr::cpu
