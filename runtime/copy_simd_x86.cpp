// The x86-64 vector kernels under copy_strided: streaming copies and fills with SSE2 (part
// of x86-64, so no dispatch), and 8x8 transposes of 4-byte and 8-byte elements with AVX2,
// compiled for AVX2 by function attribute and chosen at run time (__builtin_cpu_supports),
// so a build without -march flags still uses them on a CPU that has AVX2.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "copy_simd.hpp"

namespace einexpr::simd {

namespace {

#define EINEXPR_AVX2 __attribute__((target("avx2")))

EINEXPR_AVX2 inline void transpose8x8(__m256* r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/// A 4x4 transpose of doubles, four registers of four.
EINEXPR_AVX2 inline void transpose4x4(__m256d* r) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

template <bool Stream>
EINEXPR_AVX2 inline void store8(float* p, __m256 v) {
  if constexpr (Stream) _mm256_stream_ps(p, v);
  else _mm256_storeu_ps(p, v);
}
template <bool Stream>
EINEXPR_AVX2 inline void store4(double* p, __m256d v) {
  if constexpr (Stream) _mm256_stream_pd(p, v);
  else _mm256_storeu_pd(p, v);
}

/// One 8x8 block of 4-byte elements: out[r][c] = in[c][r].
template <bool Stream>
EINEXPR_AVX2 inline void block8(const float* in, std::int64_t is, float* out, std::int64_t os) {
  __m256 a[8];
  for (int k = 0; k < 8; ++k) a[k] = _mm256_loadu_ps(in + k * is);
  transpose8x8(a);
  for (int k = 0; k < 8; ++k) store8<Stream>(out + k * os, a[k]);
}

/// One 16x16 block of 4-byte elements. Each input line (16 elements) is read whole at once
/// and each output line written whole at once, through a buffer on the stack: rows whose
/// stride is a multiple of 4 KiB share one L1 set, so a line must not be needed twice.
template <bool Stream>
EINEXPR_AVX2 inline void block16(const float* in, std::int64_t is, float* out, std::int64_t os) {
  alignas(64) float buf[16][16];
  for (int half = 0; half < 2; ++half) {
    __m256 a[8], b[8];
    for (int k = 0; k < 8; ++k) {
      a[k] = _mm256_loadu_ps(in + (half * 8 + k) * is);
      b[k] = _mm256_loadu_ps(in + (half * 8 + k) * is + 8);
    }
    transpose8x8(a);
    transpose8x8(b);
    for (int k = 0; k < 8; ++k) {
      _mm256_store_ps(buf[k] + half * 8, a[k]);
      _mm256_store_ps(buf[8 + k] + half * 8, b[k]);
    }
  }
  for (int k = 0; k < 16; ++k) {
    store8<Stream>(out + k * os, _mm256_load_ps(buf[k]));
    store8<Stream>(out + k * os + 8, _mm256_load_ps(buf[k] + 8));
  }
}

/// 4-byte elements: 16x16 blocks where they fit, 8x8 blocks for the rest.
template <bool Stream>
EINEXPR_AVX2 void transpose32(const float* in, std::int64_t is, float* out, std::int64_t os, std::int64_t rows,
                              std::int64_t cols) {
  std::int64_t r = 0;
  for (; r + 16 <= rows; r += 16) {
    std::int64_t c = 0;
    for (; c + 16 <= cols; c += 16) block16<Stream>(in + c * is + r, is, out + r * os + c, os);
    for (; c < cols; c += 8) {
      block8<Stream>(in + c * is + r, is, out + r * os + c, os);
      block8<Stream>(in + c * is + r + 8, is, out + (r + 8) * os + c, os);
    }
  }
  for (; r < rows; r += 8)
    for (std::int64_t c = 0; c < cols; c += 8) block8<Stream>(in + c * is + r, is, out + r * os + c, os);
}

/// 8-byte elements: 8x8 blocks as four 4x4 transposes; each output row gets 64 bytes.
template <bool Stream>
EINEXPR_AVX2 void transpose64(const double* in, std::int64_t is, double* out, std::int64_t os, std::int64_t rows,
                              std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; r += 8)
    for (std::int64_t c = 0; c < cols; c += 8)
      for (std::int64_t rh = 0; rh < 8; rh += 4) {
        __m256d lo[4], hi[4];
        for (int k = 0; k < 4; ++k) lo[k] = _mm256_loadu_pd(in + (c + k) * is + r + rh);
        for (int k = 0; k < 4; ++k) hi[k] = _mm256_loadu_pd(in + (c + 4 + k) * is + r + rh);
        transpose4x4(lo);
        transpose4x4(hi);
        for (int k = 0; k < 4; ++k) {
          store4<Stream>(out + (r + rh + k) * os + c, lo[k]);
          store4<Stream>(out + (r + rh + k) * os + c + 4, hi[k]);
        }
      }
}

bool aligned(const void* p, std::int64_t stride_bytes, std::int64_t to) {
  return reinterpret_cast<std::uintptr_t>(p) % static_cast<std::uintptr_t>(to) == 0 && stride_bytes % to == 0;
}

void transpose32_entry(const std::byte* in, std::int64_t is, std::byte* out, std::int64_t os, std::int64_t rows,
                       std::int64_t cols, bool stream) {
  const auto* i = reinterpret_cast<const float*>(in);
  auto* o = reinterpret_cast<float*>(out);
  if (stream && aligned(out, os * 4, 32)) transpose32<true>(i, is, o, os, rows, cols);
  else transpose32<false>(i, is, o, os, rows, cols);
}

void transpose64_entry(const std::byte* in, std::int64_t is, std::byte* out, std::int64_t os, std::int64_t rows,
                       std::int64_t cols, bool stream) {
  const auto* i = reinterpret_cast<const double*>(in);
  auto* o = reinterpret_cast<double*>(out);
  if (stream && aligned(out, os * 8, 32)) transpose64<true>(i, is, o, os, rows, cols);
  else transpose64<false>(i, is, o, os, rows, cols);
}

bool has_avx2() noexcept {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

/// Bytes before p reaches a 16-byte boundary.
std::size_t to_boundary(const std::byte* p) {
  return (16 - reinterpret_cast<std::uintptr_t>(p) % 16) % 16;
}

}  // namespace

TransposeFn transpose_kernel(std::size_t element_size) noexcept {
  if (!has_avx2()) return nullptr;
  if (element_size == 4) return transpose32_entry;
  if (element_size == 8) return transpose64_entry;
  return nullptr;
}

void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
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
