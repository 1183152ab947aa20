// The permutation panels of copy_simd.hpp for AVX2: a register block writes each dst line
// (64 bytes) with two 32-byte stores back to back.
//   4 bytes   16 x 8:  two 8 x 8 transposes (rows 0-7, 8-15), three shuffle stages each
//   8 bytes    8 x 4:  two 4 x 4 transposes
//   2 bytes   32 x 16: a 16 x 16 transpose of u16 (three in-lane stages, one across lanes) for
//                      p 0-15, then for p 16-31
//   1 byte    64 x 16: a ymm holds rows p and p + 16; a 16 x 16 byte transpose in each lane
//                      (four in-lane stages) for p 0-31, then for p 32-63
// Partial blocks: 4- and 8-byte ones use masked loads and stores (vmaskmov), which never
// touch the masked-out elements; 2- and 1-byte ones are copied element by element. Compiled
// with -mavx2 (runtime/CMakeLists.txt) and run only where the CPU has AVX2
// (copy_simd_x86.cpp); everything but the table has internal linkage and no library template
// is used here.
#include <immintrin.h>

#include <cstring>

#include "copy_simd.hpp"

namespace einexpr::simd::detail {

namespace {

using i64 = std::int64_t;

inline bool line_aligned(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 63) == 0; }

/// The element loop for a partial block: dst[doff[q] + p] = src[so[p] + q].
template <class T>
void block_loop(const T* s, const i64* so, int np, T* d, const i64* doff, i64 q0, int nb) {
  for (int k = 0; k < nb; ++k)
    for (int p = 0; p < np; ++p) d[doff[q0 + k] + p] = s[so[p] + q0 + k];
}

inline __m256i lane_mask32(int n) {  // the first n 32-bit lanes set
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}
inline __m256i lane_mask64(int n) {
  const __m256i idx = _mm256_setr_epi64x(0, 1, 2, 3);
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), idx);
}

// ---- 4-byte elements ----

inline void transpose8x8(__m256* r) {
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

void panel4(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, bool stream) {
  const auto* s = reinterpret_cast<const float*>(src);
  auto* d = reinterpret_cast<float*>(dst);
  const __m256i pm_lo = lane_mask32(np), pm_hi = lane_mask32(np - 8);
  for (i64 q0 = 0; q0 < nq; q0 += 8) {
    const int nb = nq - q0 < 8 ? static_cast<int>(nq - q0) : 8;
    const __m256i qm = lane_mask32(nb);
    __m256 lo[8], hi[8];
    for (int p = 0; p < 8; ++p) {
      const float* a = s + so[p] + q0;
      lo[p] = p >= np ? _mm256_setzero_ps() : nb == 8 ? _mm256_loadu_ps(a) : _mm256_maskload_ps(a, qm);
      const float* b = s + so[p + 8] + q0;
      hi[p] = p + 8 >= np ? _mm256_setzero_ps() : nb == 8 ? _mm256_loadu_ps(b) : _mm256_maskload_ps(b, qm);
    }
    transpose8x8(lo);
    transpose8x8(hi);
    for (int k = 0; k < nb; ++k) {
      float* o = d + doff[q0 + k];
      if (np < 16) {
        _mm256_maskstore_ps(o, pm_lo, lo[k]);
        _mm256_maskstore_ps(o + 8, pm_hi, hi[k]);
      } else if (stream && line_aligned(o)) {
        _mm256_stream_ps(o, lo[k]);
        _mm256_stream_ps(o + 8, hi[k]);
      } else {
        _mm256_storeu_ps(o, lo[k]);
        _mm256_storeu_ps(o + 8, hi[k]);
      }
    }
  }
}

// ---- 8-byte elements ----

inline void transpose4x4(__m256d* r) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

void panel8(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, bool stream) {
  const auto* s = reinterpret_cast<const double*>(src);
  auto* d = reinterpret_cast<double*>(dst);
  const __m256i pm_lo = lane_mask64(np), pm_hi = lane_mask64(np - 4);
  for (i64 q0 = 0; q0 < nq; q0 += 4) {
    const int nb = nq - q0 < 4 ? static_cast<int>(nq - q0) : 4;
    const __m256i qm = lane_mask64(nb);
    __m256d lo[4], hi[4];
    for (int p = 0; p < 4; ++p) {
      const double* a = s + so[p] + q0;
      lo[p] = p >= np ? _mm256_setzero_pd() : nb == 4 ? _mm256_loadu_pd(a) : _mm256_maskload_pd(a, qm);
      const double* b = s + so[p + 4] + q0;
      hi[p] = p + 4 >= np ? _mm256_setzero_pd() : nb == 4 ? _mm256_loadu_pd(b) : _mm256_maskload_pd(b, qm);
    }
    transpose4x4(lo);
    transpose4x4(hi);
    for (int k = 0; k < nb; ++k) {
      double* o = d + doff[q0 + k];
      if (np < 8) {
        _mm256_maskstore_pd(o, pm_lo, lo[k]);
        _mm256_maskstore_pd(o + 4, pm_hi, hi[k]);
      } else if (stream && line_aligned(o)) {
        _mm256_stream_pd(o, lo[k]);
        _mm256_stream_pd(o + 4, hi[k]);
      } else {
        _mm256_storeu_pd(o, lo[k]);
        _mm256_storeu_pd(o + 4, hi[k]);
      }
    }
  }
}

// ---- 2- and 1-byte elements ----

inline void store2(std::byte* o, __m256i a, __m256i b, bool stream) {
  auto* v = reinterpret_cast<__m256i*>(o);
  if (stream && line_aligned(o)) {
    _mm256_stream_si256(v, a);
    _mm256_stream_si256(v + 1, b);
  } else {
    _mm256_storeu_si256(v, a);
    _mm256_storeu_si256(v + 1, b);
  }
}

/// r[i] (16 rows of 16 u16) -> column i.
inline void transpose16x16_u16(__m256i* r) {
  __m256i a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm256_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm256_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  for (int j = 0; j < 4; ++j) {  // b[4j + m]: rows 4j..4j+3 at lane columns 2m, 2m + 1
    b[4 * j + 0] = _mm256_unpacklo_epi32(a[4 * j], a[4 * j + 2]);
    b[4 * j + 1] = _mm256_unpackhi_epi32(a[4 * j], a[4 * j + 2]);
    b[4 * j + 2] = _mm256_unpacklo_epi32(a[4 * j + 1], a[4 * j + 3]);
    b[4 * j + 3] = _mm256_unpackhi_epi32(a[4 * j + 1], a[4 * j + 3]);
  }
  for (int h = 0; h < 2; ++h)  // a[8h + k]: rows 8h..8h+7 at lane column k
    for (int m = 0; m < 4; ++m) {
      a[8 * h + 2 * m] = _mm256_unpacklo_epi64(b[8 * h + m], b[8 * h + 4 + m]);
      a[8 * h + 2 * m + 1] = _mm256_unpackhi_epi64(b[8 * h + m], b[8 * h + 4 + m]);
    }
  for (int k = 0; k < 8; ++k) {
    r[k] = _mm256_permute2x128_si256(a[k], a[8 + k], 0x20);
    r[8 + k] = _mm256_permute2x128_si256(a[k], a[8 + k], 0x31);
  }
}

void panel2(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, bool stream) {
  const auto* s = reinterpret_cast<const std::uint16_t*>(src);
  auto* d = reinterpret_cast<std::uint16_t*>(dst);
  i64 q0 = 0;
  if (np == 32)
    for (; q0 + 16 <= nq; q0 += 16) {
      __m256i lo[16], hi[16];
      for (int p = 0; p < 16; ++p) {
        lo[p] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + so[p] + q0));
        hi[p] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + so[p + 16] + q0));
      }
      transpose16x16_u16(lo);
      transpose16x16_u16(hi);
      for (int k = 0; k < 16; ++k) store2(reinterpret_cast<std::byte*>(d + doff[q0 + k]), lo[k], hi[k], stream);
    }
  if (q0 < nq) block_loop(s, so, np, d, doff, q0, static_cast<int>(nq - q0));
}

/// In each 128-bit lane, r[i] (16 rows of 16 bytes) -> column i.
inline void transpose16x16_u8(__m256i* r) {
  __m256i a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm256_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm256_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
  }
  for (int j = 0; j < 4; ++j) {
    b[4 * j + 0] = _mm256_unpacklo_epi16(a[4 * j], a[4 * j + 2]);
    b[4 * j + 1] = _mm256_unpackhi_epi16(a[4 * j], a[4 * j + 2]);
    b[4 * j + 2] = _mm256_unpacklo_epi16(a[4 * j + 1], a[4 * j + 3]);
    b[4 * j + 3] = _mm256_unpackhi_epi16(a[4 * j + 1], a[4 * j + 3]);
  }
  for (int h = 0; h < 2; ++h)
    for (int m = 0; m < 4; ++m) {
      a[8 * h + 2 * m] = _mm256_unpacklo_epi32(b[8 * h + m], b[8 * h + 4 + m]);
      a[8 * h + 2 * m + 1] = _mm256_unpackhi_epi32(b[8 * h + m], b[8 * h + 4 + m]);
    }
  for (int g = 0; g < 8; ++g) {
    r[2 * g] = _mm256_unpacklo_epi64(a[g], a[8 + g]);
    r[2 * g + 1] = _mm256_unpackhi_epi64(a[g], a[8 + g]);
  }
}

void panel1(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, bool stream) {
  const auto* s = reinterpret_cast<const std::uint8_t*>(src);
  auto* d = reinterpret_cast<std::uint8_t*>(dst);
  auto pair = [&](int p, i64 q0) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + so[p] + q0));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + so[p + 16] + q0));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
  };
  i64 q0 = 0;
  if (np == 64)
    for (; q0 + 16 <= nq; q0 += 16) {
      __m256i lo[16], hi[16];
      for (int p = 0; p < 16; ++p) {
        lo[p] = pair(p, q0);
        hi[p] = pair(p + 32, q0);
      }
      transpose16x16_u8(lo);
      transpose16x16_u8(hi);
      for (int k = 0; k < 16; ++k) store2(reinterpret_cast<std::byte*>(d + doff[q0 + k]), lo[k], hi[k], stream);
    }
  if (q0 < nq) block_loop(s, so, np, d, doff, q0, static_cast<int>(nq - q0));
}

// ---- streaming copy ----

// Plain stores up to dst's first 64-byte boundary, then two 32-byte streaming stores a line,
// then the tail (avx512's stream_copy says why wider than SSE2's).
void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
  const std::size_t head = std::size_t{63} & (std::size_t{0} - reinterpret_cast<std::uintptr_t>(dst));
  std::size_t i = head < bytes ? head : bytes;
  std::memcpy(dst, src, i);
  for (; i + 64 <= bytes; i += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32), b);
  }
  std::memcpy(dst + i, src + i, bytes - i);
}

}  // namespace

PanelTable avx2_panels() noexcept {
  PanelTable t;
  t.stream_copy = stream_copy;
  t.by_size[0] = {panel1, 64, 16, "avx2"};
  t.by_size[1] = {panel2, 32, 16, "avx2"};
  t.by_size[2] = {panel4, 16, 8, "avx2"};
  t.by_size[3] = {panel8, 8, 4, "avx2"};
  return t;
}

}  // namespace einexpr::simd::detail
