#pragma once
// Private to the runtime: copy_strided's permutation path (copy_permute.cpp), for copies whose
// dst and src have their unit strides on different dims.
#include <cstddef>
#include <cstdint>
#include <string>

#include "einexpr/runtime/layout.hpp"

namespace einexpr::detail {

/// dst = src over a collapsed nest (dims in any order, no dim of length 1, strides >= 0) as
/// register-transposed blocks (copy_simd.hpp) between P, the dst's innermost contiguous dims
/// (from its unit-stride dim; more until a P row is whole lines, then up to 1 KiB without the
/// src dims Q needs for its first 4 KiB), and Q, the src's innermost contiguous dims;
/// every other dim is an outer loop. Where one dim is contiguous on both sides and shorter
/// than 64 KiB, its rows are moved whole and P and Q are found among the others. Slabs of about
/// 128 KiB of src (P rows across a chunk of at most 4 KiB of Q) are walked Q block by Q block,
/// the next slab prefetched into L2 in address order; threads take contiguous ranges of
/// slabs. Returns false, copying nothing, where the nest has no such P and Q (no unit stride
/// on one side, a contiguous row of 64 KiB or more, a negative stride). `stream`: full aligned
/// dst lines are written with streaming stores; `parallel`: num_threads() threads share it.
bool copy_permute(std::byte* dst, const std::byte* src, const Shape& shape, const Strides& dst_strides,
                  const Strides& src_strides, std::size_t element_size, bool stream, bool parallel);

/// For tests: the panel kernel copy_permute uses: "avx512", "avx2", "scalar" (the element
/// loop), or "" (the fastest this CPU runs, the default). Returns false, changing nothing,
/// where the CPU does not run the one named.
bool force_panel_isa(const std::string& isa);

/// For tests and benchmarks: how copy_permute cuts this nest, as "P [dims] Q [dims] outer
/// [dims] slab ROWS x CHUNK block BP x BQ (kernel)", then " staged" where a block's rows (or
/// a block of P rows that are not whole lines) are gathered in L1 and streamed when the copy
/// streams; or "" where it does not apply.
std::string describe_permute(const Shape& shape, const Strides& dst_strides, const Strides& src_strides,
                             std::size_t element_size);

}  // namespace einexpr::detail
