#pragma once
// Elementwise loops over strided views on the CPU, shared by Tensor (contiguous, to,
// copy_from) and the CPU lowering's copy steps. Layout offsets are relative to the base
// pointers passed. Strides may be 0 in a source (broadcast); never in a destination.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
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

/// A copy of `rows` rows of `length` contiguous elements: row r from src + r * src_step to
/// dst + r * dst_step (steps in elements; the pointers where row 0 starts).
struct RowCopy {
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  std::int64_t rows = 0, length = 0, dst_step = 0, src_step = 0;
};
/// copy_strided(dst, dst_layout, src, src_layout)'s work as rows, when its dims collapse
/// (collapse_dims) to one (rows of one element where it is not contiguous in both views) or
/// to two with the inner one contiguous in both; else nullopt.
std::optional<RowCopy> as_rows(std::byte* dst, const Layout& dst_layout, const std::byte* src, const Layout& src_layout,
                               std::size_t element_size);
/// Several row copies with the same number of rows, in one pass: row r of each copy in turn,
/// then row r + 1. Copies that read neighbouring parts of one source's rows (the outputs of a
/// split along its last axis) read that source once, front to back, where running them one
/// after the other reads it once per copy with gaps, each row's start a jump no hardware
/// prefetcher foresees (bench/RESULTS.md, "Rows streamed from their first aligned element,
/// and a copied split in one pass"). Parallel over rows, streamed from stream_output_bytes of
/// all the copies' outputs together, as copy_strided is.
void copy_rows_together(std::span<const RowCopy> copies, std::size_t element_size);

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
