#pragma once
// Private to the runtime: the vector kernels under copy_strided (copy_strided.cpp,
// copy_permute.cpp). On x86-64, copy_simd_x86.cpp provides them: streaming copies with the
// widest stores the CPU has, SSE2 streaming fills (every x86-64 CPU has them), and the
// permutation panels; the AVX2 and AVX-512 kernels live in copy_simd_avx2.cpp and
// copy_simd_avx512.cpp, each file compiled for its instruction set and chosen at run time
// (__builtin_cpu_supports), so a build without -march flags uses them too. Elsewhere
// copy_simd_none.cpp provides plain loops. CMake picks the files.
#include <cstddef>
#include <cstdint>

namespace einexpr::simd {

/// One panel of a permutation, offsets in elements:
///   dst[dst_off[q] + p] = src[src_off[p] + q]   for p < np, q < nq
/// np is at most the kernel's block_p (one 64-byte line of dst: 64 / element size); nq is
/// any count (the panel walks it in blocks of block_q, the last one partial). Each block is
/// transposed in registers: block_p loads of block_q consecutive src elements, block_q stores
/// of block_p consecutive dst elements, so every full dst line is written by one store (or two
/// back to back). `stream`: full, 64-byte-aligned dst lines are written with streaming
/// stores (call store_fence() after the last panel); other stores are ordinary.
using PanelFn = void (*)(const std::byte* src, const std::int64_t* src_off, int np, std::byte* dst,
                         const std::int64_t* dst_off, std::int64_t nq, bool stream);

struct PanelKernel {
  PanelFn run = nullptr;
  int block_p = 0;       // p per call at most (one dst line)
  int block_q = 0;       // q per register block
  const char* isa = "";  // "avx512", "avx2" or "scalar"
};

/// The fastest panel for elements of `element_size` bytes this CPU runs, or {} (run null)
/// where none is vectorized (the caller's scalar loop then runs).
PanelKernel panel_kernel(std::size_t element_size) noexcept;
/// Every vectorized panel for `element_size` this CPU runs, fastest first (at most 2);
/// returns how many (tests compare each with the element loop).
int panel_kernels(std::size_t element_size, PanelKernel* out) noexcept;

/// memcpy with stores that bypass the cache (for outputs much larger than the caches).
void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept;
/// dst[0..count) = *value (elements of element_size bytes, a divisor of 16), streamed.
void stream_fill(std::byte* dst, const std::byte* value, std::size_t element_size, std::size_t count) noexcept;
/// Orders the streamed stores before whatever the thread stores next.
void store_fence() noexcept;

namespace detail {
using StreamCopyFn = void (*)(std::byte* dst, const std::byte* src, std::size_t bytes);
/// The per-ISA tables (x86-64 only), run null where a size has no panel.
struct PanelTable {
  PanelKernel by_size[4];  // element sizes 1, 2, 4, 8 at indices 0..3
  StreamCopyFn stream_copy = nullptr;  // stream_copy with this ISA's widest stores
};
PanelTable avx2_panels() noexcept;
PanelTable avx512_panels() noexcept;
}  // namespace detail

}  // namespace einexpr::simd
