// The x86-64 vector kernels under copy_strided: streaming copies with the widest stores the
// CPU has (AVX-512, AVX2, else SSE2), streaming fills with SSE2 (part of x86-64), and the
// choice of permutation panel: AVX-512 (F, BW, VL) where the CPU has it, else AVX2
// (copy_simd_avx512.cpp, copy_simd_avx2.cpp, each compiled for its instruction set), asked of
// the CPU once with __builtin_cpu_supports.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "copy_simd.hpp"

namespace einexpr::simd {

namespace {

struct Known {
  detail::PanelTable avx2{}, avx512{};
  bool has_avx2 = false, has_avx512 = false;
  Known() {
    __builtin_cpu_init();
    has_avx2 = __builtin_cpu_supports("avx2");
    has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl");
    if (has_avx2) avx2 = detail::avx2_panels();
    if (has_avx512) avx512 = detail::avx512_panels();
  }
};

const Known& known() noexcept {
  static const Known k;
  return k;
}

int size_index(std::size_t element_size) {
  switch (element_size) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: return -1;
  }
}

/// Bytes before p reaches a 16-byte boundary.
std::size_t to_boundary(const std::byte* p) {
  return (16 - reinterpret_cast<std::uintptr_t>(p) % 16) % 16;
}

}  // namespace

PanelKernel panel_kernel(std::size_t element_size) noexcept {
  PanelKernel k[2];
  return panel_kernels(element_size, k) > 0 ? k[0] : PanelKernel{};
}

int panel_kernels(std::size_t element_size, PanelKernel* out) noexcept {
  const int i = size_index(element_size);
  if (i < 0) return 0;
  const Known& k = known();
  int n = 0;
  if (k.has_avx512) out[n++] = k.avx512.by_size[i];
  if (k.has_avx2) out[n++] = k.avx2.by_size[i];
  return n;
}

void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
  const Known& k = known();
  if (k.has_avx512) return k.avx512.stream_copy(dst, src, bytes);
  if (k.has_avx2) return k.avx2.stream_copy(dst, src, bytes);
  const std::size_t head = std::min(bytes, to_boundary(dst));
  std::memcpy(dst, src, head);
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const auto* s = reinterpret_cast<const __m128i*>(src + i);
    auto* d = reinterpret_cast<__m128i*>(dst + i);
    const __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
    const __m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
    _mm_stream_si128(d, a);
    _mm_stream_si128(d + 1, b);
    _mm_stream_si128(d + 2, c);
    _mm_stream_si128(d + 3, e);
  }
  std::memcpy(dst + i, src + i, bytes - i);
}

void stream_fill(std::byte* dst, const std::byte* value, std::size_t element_size, std::size_t count) noexcept {
  const std::size_t bytes = element_size * count;
  std::size_t head = std::min(bytes, to_boundary(dst));
  if (head % element_size != 0) head = bytes;  // misaligned elements: no streaming
  for (std::size_t i = 0; i < head; i += element_size) std::memcpy(dst + i, value, element_size);
  alignas(16) std::byte pattern[16];
  for (std::size_t i = 0; i < 16; i += element_size) std::memcpy(pattern + i, value, element_size);
  const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(pattern));
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    auto* d = reinterpret_cast<__m128i*>(dst + i);
    _mm_stream_si128(d, v);
    _mm_stream_si128(d + 1, v);
    _mm_stream_si128(d + 2, v);
    _mm_stream_si128(d + 3, v);
  }
  for (; i < bytes; i += element_size) std::memcpy(dst + i, value, element_size);
}

void store_fence() noexcept { _mm_sfence(); }

}  // namespace einexpr::simd
