#pragma once
// Private to the runtime: the vector kernels under copy_strided (copy_strided.cpp). On
// x86-64, copy_simd_x86.cpp provides them (SSE2 streaming stores, which every x86-64 CPU
// has, and AVX2 transposes chosen at run time, so a baseline build gets them too); on other
// CPUs copy_simd_none.cpp provides plain loops. CMake picks the file.
#include <cstddef>
#include <cstdint>

namespace einexpr::simd {

/// out[r * out_stride + c] = in[c * in_stride + r] for r < rows, c < cols (strides in
/// elements); rows and cols are multiples of transpose_block(). `stream`: stores bypass
/// the cache where out's rows are aligned for it (call store_fence() after the last one).
using TransposeFn = void (*)(const std::byte* in, std::int64_t in_stride, std::byte* out, std::int64_t out_stride,
                             std::int64_t rows, std::int64_t cols, bool stream);

/// The vectorized transpose for elements of `element_size` bytes on this CPU, or nullptr.
TransposeFn transpose_kernel(std::size_t element_size) noexcept;
/// The block side transpose kernels work in (8).
inline constexpr std::int64_t transpose_block = 8;

/// memcpy with stores that bypass the cache (for outputs much larger than the caches).
void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept;
/// dst[0..count) = *value (elements of element_size bytes, a divisor of 16), streamed.
void stream_fill(std::byte* dst, const std::byte* value, std::size_t element_size, std::size_t count) noexcept;
/// Orders the streamed stores before whatever the thread stores next.
void store_fence() noexcept;

}  // namespace einexpr::simd
