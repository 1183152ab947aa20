#pragma once
// Private to the runtime: copy_strided's permutation path (copy_permute.cpp), for copies whose
// dst and src have their unit strides on different dims.
#include <cstddef>
#include <cstdint>
#include <string>

#include "einexpr/runtime/layout.hpp"

namespace einexpr::detail {

/// dst = src over a collapsed nest (dims in any order, no dim of length 1, strides >= 0) as
/// panels of register-transposed blocks (copy_simd.hpp): P, the dst's innermost contiguous
/// dims (from its unit-stride dim; more of them while a P row is shorter than a cache line
/// or not a whole number of lines), against Q, the src's innermost contiguous dims (from
/// its unit-stride dim, while they are not in P); every other dim is an outer loop. A panel
/// is one dst line of P (block_p elements) across a chunk of Q (at most 4 KiB of src per
/// row); threads take contiguous ranges of panels. Returns false, copying nothing, where the
/// nest has no such P and Q (no unit stride on one side, the same dim on both, a negative
/// stride). `stream`: write full aligned dst lines with streaming stores.
bool copy_permute(std::byte* dst, const std::byte* src, const Shape& shape, const Strides& dst_strides,
                  const Strides& src_strides, std::size_t element_size, bool stream, bool parallel);

/// For tests: the panel kernel copy_permute uses: "avx512", "avx2", "scalar" (the element
/// loop), or "" (the fastest this CPU runs, the default). Returns false, changing nothing,
/// where the CPU does not run the one named.
bool force_panel_isa(const std::string& isa);

/// For tests and `explain`-like diagnostics: how copy_permute would cut this nest, as
/// "P [dims] Q [dims] outer [dims] panel NP x NQ (isa)", or "" where it does not apply.
std::string describe_permute(const Shape& shape, const Strides& dst_strides, const Strides& src_strides,
                             std::size_t element_size);

}  // namespace einexpr::detail
