#pragma once
// Can a GEMM read this strided matrix in place, and how: one pure answer, used by the
// planner (plan_einsum.cpp: copy an operand only when no GEMM can read it), the CPU GEMM
// (lower/cpu: BLAS or Eigen) and the CUDA GEMM plan (lower/cuda/gemm_plan.cpp: cuBLAS).
// Private to codegen; no third-party types.
#include <algorithm>
#include <cstdint>
#include <optional>

namespace einexpr::detail {

/// How a strided [rows, cols] matrix is read in place: one dim has unit stride (the inner
/// one), the other a stride of at least the inner length (`outer`, BLAS's leading dimension).
struct MatrixMap {
  std::int64_t rows = 0, cols = 0;
  bool row_major = true;
  std::int64_t outer = 1;
  MatrixMap transposed() const { return {cols, rows, !row_major, outer}; }
  /// Elements between rows (cols) i and i + 1.
  std::int64_t row_step() const { return row_major ? outer : 1; }
  std::int64_t col_step() const { return row_major ? 1 : outer; }
  friend bool operator==(const MatrixMap&, const MatrixMap&) = default;
};

enum class Major : unsigned char { row, column };

/// The in-place map of a [rows, cols] matrix with strides (row_stride, col_stride), or
/// nullopt when none fits (no unit stride, a stride-0 dim of length > 1, or an outer stride
/// shorter than the inner dim). A dim of length 1 fits any stride. Where both orders fit
/// (a vector), `prefer` picks.
inline std::optional<MatrixMap> fit_matrix(std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                                           std::int64_t col_stride, Major prefer = Major::row) {
  const bool one_row = rows <= 1, one_col = cols <= 1;
  const std::int64_t r = std::max<std::int64_t>(rows, 1), c = std::max<std::int64_t>(cols, 1);
  std::optional<MatrixMap> row, column;
  if ((one_col || col_stride == 1) && (one_row || row_stride >= c))
    row = MatrixMap{rows, cols, true, one_row ? c : row_stride};
  if ((one_row || row_stride == 1) && (one_col || col_stride >= r))
    column = MatrixMap{rows, cols, false, one_col ? r : col_stride};
  if (prefer == Major::column) return column ? column : row;
  return row ? row : column;
}

/// c = a · b through a column-major GEMM interface (BLAS, cuBLAS): the three matrices as
/// that interface takes them. Where c is row-major the call computes c^T = b^T · a^T (c^T is
/// column-major), so `first` is b^T and `second` a^T; else first = a, second = b. Each
/// operand is read transposed (op T) where it is row-major as the call sees it.
struct ColumnMajorCall {
  MatrixMap first, second, out;  // out is column-major; first · second = out
  bool swapped = false;          // the operands were swapped (c^T = b^T a^T)
};
inline ColumnMajorCall column_major_call(const MatrixMap& a, const MatrixMap& b, const MatrixMap& c) {
  if (!c.row_major) return {a, b, c, false};
  return {b.transposed(), a.transposed(), c.transposed(), true};
}

}  // namespace einexpr::detail
