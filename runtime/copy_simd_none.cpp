// The kernels under copy_strided on CPUs other than x86-64: no vectorized panels (the
// element loop in copy_permute.cpp runs instead), and ordinary stores.
#include <cstring>

#include "copy_simd.hpp"

namespace einexpr::simd {

PanelKernel panel_kernel(std::size_t) noexcept { return {}; }

int panel_kernels(std::size_t, PanelKernel*) noexcept { return 0; }

void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept { std::memcpy(dst, src, bytes); }

void stream_fill(std::byte* dst, const std::byte* value, std::size_t element_size, std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i) std::memcpy(dst + i * element_size, value, element_size);
}

void store_fence() noexcept {}

}  // namespace einexpr::simd
