#pragma once
// Elementwise loops over strided views on the CPU, shared by Tensor (contiguous, to,
// copy_from) and the CPU lowering's copy steps. Layout offsets are relative to the base
// pointers passed. Strides may be 0 in a source (broadcast); never in a destination.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

/// Dims of several same-shaped views merged wherever every view is contiguous across the
/// pair, and length-1 dims dropped: the loop nest a strided kernel really needs.
struct CollapsedDims {
  Shape shape;
  std::vector<Strides> strides;  // one per view, each of shape's rank
};
CollapsedDims collapse_dims(const Shape& shape, const std::vector<const Strides*>& strides);

/// dst[i] = src[i] for every index i of the (same) shape; element_size bytes each.
void copy_strided(std::byte* dst, const Layout& dst_layout, const std::byte* src,
                  const Layout& src_layout, std::size_t element_size);

/// dst[i] = convert(src[i]) for every index i of the (same) shape.
void convert_strided(std::byte* dst, const Layout& dst_layout, DType dst_dtype,
                     const std::byte* src, const Layout& src_layout, DType src_dtype);

}  // namespace einexpr
