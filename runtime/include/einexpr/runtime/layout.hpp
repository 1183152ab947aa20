#pragma once
// Shape + strides (in elements) + offset: where each element of a strided view lives.
// All size arithmetic here is overflow-checked and throws ShapeError.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace einexpr {

using Shape = std::vector<std::int64_t>;
using Strides = std::vector<std::int64_t>;

struct Layout {
  Shape shape;
  Strides strides;
  std::int64_t offset = 0;

  /// Row-major (C order) layout of `shape`, offset 0.
  static Layout contiguous(Shape shape);
  int dim() const noexcept { return static_cast<int>(shape.size()); }
  /// Product of the shape (checked: ShapeError if it overflows int64).
  std::int64_t numel() const;
  /// True when the strides are the row-major ones (dims of length 1 ignored).
  bool is_contiguous() const noexcept;
  /// One past the largest element index the view reaches (offset included); 0 if empty.
  std::int64_t extent() const;
  friend bool operator==(const Layout&, const Layout&) = default;
};

/// Row-major strides of `shape`.
Strides contiguous_strides(std::span<const std::int64_t> shape);
/// Product of `shape`; throws ShapeError naming the shape if a length is negative or
/// the product of its nonzero lengths overflows int64 (numpy's rule: order-free, and
/// an empty shape's partial products fit too).
std::int64_t checked_numel(std::span<const std::int64_t> shape);
/// a * b, throwing ShapeError("...overflows...") instead of wrapping.
std::int64_t checked_mul(std::int64_t a, std::int64_t b);
std::int64_t checked_add(std::int64_t a, std::int64_t b);
/// a * b, or INT64_MAX where that overflows: for work estimates only compared with thresholds
/// (a plan of huge lengths is made and costed though no run could finish it).
inline std::int64_t saturating_mul(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/// The strides that let `new_shape` view the elements of (shape, strides) in row-major
/// order without copying (torch's computeStride), or nullopt where no such strides exist.
std::optional<Strides> try_view_strides(std::span<const std::int64_t> shape,
                                        std::span<const std::int64_t> strides,
                                        std::span<const std::int64_t> new_shape);

/// Replaces one -1 in `shape` by the length that makes its product equal numel.
/// Throws ShapeError when that is impossible.
Shape infer_shape(std::span<const std::int64_t> shape, std::int64_t numel);

/// "[2, 3, 4]".
std::string shape_str(std::span<const std::int64_t> shape);

}  // namespace einexpr
