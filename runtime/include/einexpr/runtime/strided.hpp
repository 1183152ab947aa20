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

/// Outputs from this many bytes on are written with streaming stores by the copies here (and
/// by kernels that copy rows through copy_bytes_streamed): a constant, since a VM's CPUID may
/// report a 320 MiB L3 for a 32 MiB one.
inline constexpr std::int64_t stream_output_bytes = std::int64_t{8} << 20;

/// memcpy whose stores bypass the caches (no read for ownership of dst's lines): for rows of an
/// output much larger than the caches. Call streamed_fence() once after a thread's last one.
void copy_bytes_streamed(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept;
/// dst[0..count) = *value (elements of element_size bytes, 1, 2, 4, 8 or 16), streamed as
/// copy_bytes_streamed's stores are.
void fill_streamed(std::byte* dst, const std::byte* value, std::size_t element_size, std::size_t count) noexcept;
/// Orders the calling thread's streamed stores before whatever it stores next.
void streamed_fence() noexcept;

/// dst[i] = convert(src[i]) for every index i of the (same) shape.
void convert_strided(std::byte* dst, const Layout& dst_layout, DType dst_dtype,
                     const std::byte* src, const Layout& src_layout, DType src_dtype);

}  // namespace einexpr
