// The permutation panels of copy_simd.hpp for AVX-512 (F, BW, VL): one register block is one
// 64-byte line of dst per q, so every full line goes out in one store.
//   4 bytes   16 x 16: 16 zmm loads of 16 q, four shuffle stages, 16 zmm stores of 16 p
//   8 bytes    8 x 8:  three stages
//   2 bytes   32 x 16: a zmm holds rows p and p + 16 (16 q each), a 16 x 16 transpose in
//                      each 256-bit half (three in-lane stages, one across lanes)
//   1 byte    64 x 16: a zmm holds rows p, p + 16, p + 32, p + 48, a 16 x 16 byte transpose
//                      in each 128-bit lane (four in-lane stages)
// Partial blocks (fewer p or q) use masked loads and stores, which never touch the masked-out
// elements. Compiled with -mavx512f -mavx512bw -mavx512vl (runtime/CMakeLists.txt) and run
// only where the CPU has them (copy_simd_x86.cpp); everything but the table has internal
// linkage and no library template is used, so no function compiled here can stand in for
// one that runs on any x86-64.
#include <immintrin.h>

#include "copy_simd.hpp"

namespace einexpr::simd::detail {

namespace {

using i64 = std::int64_t;

inline bool line_aligned(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 63) == 0; }

// ---- 4-byte elements ----

inline __m512 unpacklo_pd(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
inline __m512 unpackhi_pd(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

/// r[i][j] -> r[j][i] for 16 rows of 16 floats.
inline void transpose16(__m512* r) {
  __m512 a[16], b[16];
  for (int i = 0; i < 8; ++i) {  // rows 2i, 2i + 1 interleaved: a[2i] cols 4k, 4k+1; a[2i+1] cols 4k+2, 4k+3
    a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 4; ++g) {  // rows 4g..4g+3: b[4g + c] holds column 4k + c of lane k
    b[4 * g + 0] = unpacklo_pd(a[4 * g], a[4 * g + 2]);
    b[4 * g + 1] = unpackhi_pd(a[4 * g], a[4 * g + 2]);
    b[4 * g + 2] = unpacklo_pd(a[4 * g + 1], a[4 * g + 3]);
    b[4 * g + 3] = unpackhi_pd(a[4 * g + 1], a[4 * g + 3]);
  }
  for (int c = 0; c < 4; ++c) {  // lanes of the four row groups brought together
    const __m512 c1 = _mm512_shuffle_f32x4(b[c], b[4 + c], 0x88), c2 = _mm512_shuffle_f32x4(b[c], b[4 + c], 0xdd);
    const __m512 d1 = _mm512_shuffle_f32x4(b[8 + c], b[12 + c], 0x88);
    const __m512 d2 = _mm512_shuffle_f32x4(b[8 + c], b[12 + c], 0xdd);
    r[c] = _mm512_shuffle_f32x4(c1, d1, 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(c1, d1, 0xdd);
    r[4 + c] = _mm512_shuffle_f32x4(c2, d2, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(c2, d2, 0xdd);
  }
}

void panel4(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, bool stream) {
  const auto* s = reinterpret_cast<const float*>(src);
  auto* d = reinterpret_cast<float*>(dst);
  const auto pmask = static_cast<__mmask16>((1u << np) - 1);
  for (i64 q0 = 0; q0 < nq; q0 += 16) {
    const int nb = nq - q0 < 16 ? static_cast<int>(nq - q0) : 16;
    __m512 r[16];
    if (nb == 16) {
      for (int p = 0; p < 16; ++p) r[p] = p < np ? _mm512_loadu_ps(s + so[p] + q0) : _mm512_setzero_ps();
    } else {
      const auto qmask = static_cast<__mmask16>((1u << nb) - 1);
      for (int p = 0; p < 16; ++p) r[p] = p < np ? _mm512_maskz_loadu_ps(qmask, s + so[p] + q0) : _mm512_setzero_ps();
    }
    transpose16(r);
    for (int k = 0; k < nb; ++k) {
      float* o = d + doff[q0 + k];
      if (np < 16) _mm512_mask_storeu_ps(o, pmask, r[k]);
      else if (stream && line_aligned(o)) _mm512_stream_ps(o, r[k]);
      else _mm512_storeu_ps(o, r[k]);
    }
  }
}

// ---- 8-byte elements ----

/// r[i][j] -> r[j][i] for 8 rows of 8 doubles.
inline void transpose8(__m512d* r) {
  __m512d a[8];
  for (int i = 0; i < 4; ++i) {  // a[2i + c] holds column 2k + c of rows 2i, 2i + 1 in lane k
    a[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
  }
  for (int c = 0; c < 2; ++c) {
    const __m512d c1 = _mm512_shuffle_f64x2(a[c], a[2 + c], 0x88), c2 = _mm512_shuffle_f64x2(a[c], a[2 + c], 0xdd);
    const __m512d d1 = _mm512_shuffle_f64x2(a[4 + c], a[6 + c], 0x88);
    const __m512d d2 = _mm512_shuffle_f64x2(a[4 + c], a[6 + c], 0xdd);
    r[c] = _mm512_shuffle_f64x2(c1, d1, 0x88);
    r[4 + c] = _mm512_shuffle_f64x2(c1, d1, 0xdd);
    r[2 + c] = _mm512_shuffle_f64x2(c2, d2, 0x88);
    r[6 + c] = _mm512_shuffle_f64x2(c2, d2, 0xdd);
  }
}

void panel8(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, bool stream) {
  const auto* s = reinterpret_cast<const double*>(src);
  auto* d = reinterpret_cast<double*>(dst);
  const auto pmask = static_cast<__mmask8>((1u << np) - 1);
  for (i64 q0 = 0; q0 < nq; q0 += 8) {
    const int nb = nq - q0 < 8 ? static_cast<int>(nq - q0) : 8;
    __m512d r[8];
    if (nb == 8) {
      for (int p = 0; p < 8; ++p) r[p] = p < np ? _mm512_loadu_pd(s + so[p] + q0) : _mm512_setzero_pd();
    } else {
      const auto qmask = static_cast<__mmask8>((1u << nb) - 1);
      for (int p = 0; p < 8; ++p) r[p] = p < np ? _mm512_maskz_loadu_pd(qmask, s + so[p] + q0) : _mm512_setzero_pd();
    }
    transpose8(r);
    for (int k = 0; k < nb; ++k) {
      double* o = d + doff[q0 + k];
      if (np < 8) _mm512_mask_storeu_pd(o, pmask, r[k]);
      else if (stream && line_aligned(o)) _mm512_stream_pd(o, r[k]);
      else _mm512_storeu_pd(o, r[k]);
    }
  }
}

// ---- 2- and 1-byte elements: integer unpacks ----

/// Stores line k of a 2- or 1-byte block: 64 bytes, `pmask64` the bytes that are written.
inline void store_line(std::byte* o, __m512i v, bool full, __mmask64 pmask64, bool stream) {
  if (!full) _mm512_mask_storeu_epi8(o, pmask64, v);
  else if (stream && line_aligned(o)) _mm512_stream_si512(reinterpret_cast<__m512i*>(o), v);
  else _mm512_storeu_si512(o, v);
}

inline __mmask64 low_bytes(int n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

/// In each 256-bit half, r[i] (16 rows of 16 u16) -> column i.
inline void transpose16x16_u16(__m512i* r) {
  __m512i a[16], b[16];
  for (int i = 0; i < 8; ++i) {
    a[2 * i] = _mm512_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  for (int j = 0; j < 4; ++j) {  // b[4j + m]: rows 4j..4j+3 at lane columns 2m, 2m + 1
    b[4 * j + 0] = _mm512_unpacklo_epi32(a[4 * j], a[4 * j + 2]);
    b[4 * j + 1] = _mm512_unpackhi_epi32(a[4 * j], a[4 * j + 2]);
    b[4 * j + 2] = _mm512_unpacklo_epi32(a[4 * j + 1], a[4 * j + 3]);
    b[4 * j + 3] = _mm512_unpackhi_epi32(a[4 * j + 1], a[4 * j + 3]);
  }
  for (int h = 0; h < 2; ++h)  // a[8h + k]: rows 8h..8h+7 at lane column k
    for (int m = 0; m < 4; ++m) {
      a[8 * h + 2 * m] = _mm512_unpacklo_epi64(b[8 * h + m], b[8 * h + 4 + m]);
      a[8 * h + 2 * m + 1] = _mm512_unpackhi_epi64(b[8 * h + m], b[8 * h + 4 + m]);
    }
  const __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  for (int k = 0; k < 8; ++k) {  // lane 0 of each 256-bit half is columns 0-7, lane 1 columns 8-15
    r[k] = _mm512_permutex2var_epi64(a[k], lo, a[8 + k]);
    r[8 + k] = _mm512_permutex2var_epi64(a[k], hi, a[8 + k]);
  }
}

void panel2(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, bool stream) {
  const auto* s = reinterpret_cast<const std::uint16_t*>(src);
  auto* d = reinterpret_cast<std::uint16_t*>(dst);
  const __mmask64 pmask = low_bytes(2 * np);
  for (i64 q0 = 0; q0 < nq; q0 += 16) {
    const int nb = nq - q0 < 16 ? static_cast<int>(nq - q0) : 16;
    const auto qmask = static_cast<__mmask16>((1u << nb) - 1);
    auto row = [&](int p) {
      if (p >= np) return _mm256_setzero_si256();
      return nb == 16 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + so[p] + q0))
                      : _mm256_maskz_loadu_epi16(qmask, s + so[p] + q0);
    };
    __m512i r[16];
    for (int p = 0; p < 16; ++p) r[p] = _mm512_inserti64x4(_mm512_castsi256_si512(row(p)), row(p + 16), 1);
    transpose16x16_u16(r);
    for (int k = 0; k < nb; ++k) store_line(reinterpret_cast<std::byte*>(d + doff[q0 + k]), r[k], np == 32, pmask, stream);
  }
}

/// In each 128-bit lane, r[i] (16 rows of 16 bytes) -> column i.
inline void transpose16x16_u8(__m512i* r) {
  __m512i a[16], b[16];
  for (int i = 0; i < 8; ++i) {  // a[2i]: rows 2i, 2i + 1 at columns 0-7; a[2i + 1]: 8-15
    a[2 * i] = _mm512_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
  }
  for (int j = 0; j < 4; ++j) {  // b[4j + m]: rows 4j..4j+3 at columns 4m..4m+3
    b[4 * j + 0] = _mm512_unpacklo_epi16(a[4 * j], a[4 * j + 2]);
    b[4 * j + 1] = _mm512_unpackhi_epi16(a[4 * j], a[4 * j + 2]);
    b[4 * j + 2] = _mm512_unpacklo_epi16(a[4 * j + 1], a[4 * j + 3]);
    b[4 * j + 3] = _mm512_unpackhi_epi16(a[4 * j + 1], a[4 * j + 3]);
  }
  for (int h = 0; h < 2; ++h)  // a[8h + k]: rows 8h..8h+7 at columns 2k, 2k + 1
    for (int m = 0; m < 4; ++m) {
      a[8 * h + 2 * m] = _mm512_unpacklo_epi32(b[8 * h + m], b[8 * h + 4 + m]);
      a[8 * h + 2 * m + 1] = _mm512_unpackhi_epi32(b[8 * h + m], b[8 * h + 4 + m]);
    }
  for (int g = 0; g < 8; ++g) {
    r[2 * g] = _mm512_unpacklo_epi64(a[g], a[8 + g]);
    r[2 * g + 1] = _mm512_unpackhi_epi64(a[g], a[8 + g]);
  }
}

void panel1(const std::byte* src, const i64* so, int np, std::byte* dst, const i64* doff, i64 nq, bool stream) {
  const auto* s = reinterpret_cast<const std::uint8_t*>(src);
  const __mmask64 pmask = low_bytes(np);
  for (i64 q0 = 0; q0 < nq; q0 += 16) {
    const int nb = nq - q0 < 16 ? static_cast<int>(nq - q0) : 16;
    const auto qmask = static_cast<__mmask16>((1u << nb) - 1);
    auto row = [&](int p) {
      if (p >= np) return _mm_setzero_si128();
      return nb == 16 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + so[p] + q0))
                      : _mm_maskz_loadu_epi8(qmask, s + so[p] + q0);
    };
    __m512i r[16];
    for (int p = 0; p < 16; ++p) {
      __m512i v = _mm512_castsi128_si512(row(p));
      v = _mm512_inserti32x4(v, row(p + 16), 1);
      v = _mm512_inserti32x4(v, row(p + 32), 2);
      r[p] = _mm512_inserti32x4(v, row(p + 48), 3);
    }
    transpose16x16_u8(r);
    for (int k = 0; k < nb; ++k) store_line(dst + doff[q0 + k], r[k], np == 64, pmask, stream);
  }
}

// ---- streaming copy ----

// Plain (masked) stores up to dst's first 64-byte boundary, then one streaming store a line,
// then the tail: every line written whole goes out in one store that bypasses the caches.
// Measured against SSE2's four 16-byte streaming stores a line (copy_simd_x86.cpp), Zen 5,
// two threads, in a probe: 200 MiB 4.3 against 4.8-5.2 ms; GPT-2's 3 KB embedding rows gathered
// at 1.02-1.05 against 0.90-0.95 of a memcpy of their bytes.
void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) {
  const std::size_t head = std::size_t{63} & (std::size_t{0} - reinterpret_cast<std::uintptr_t>(dst));
  std::size_t i = 0;
  if (head != 0) {
    const std::size_t n = head < bytes ? head : bytes;
    const __mmask64 m = (std::uint64_t{1} << n) - 1;  // n < 64
    _mm512_mask_storeu_epi8(dst, m, _mm512_maskz_loadu_epi8(m, src));
    i = n;
  }
  for (; i + 128 <= bytes; i += 128) {
    const __m512i a = _mm512_loadu_si512(src + i), b = _mm512_loadu_si512(src + i + 64);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 64), b);
  }
  if (i + 64 <= bytes) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), _mm512_loadu_si512(src + i));
    i += 64;
  }
  if (i < bytes) {
    const __mmask64 m = (std::uint64_t{1} << (bytes - i)) - 1;  // < 64 bytes left
    _mm512_mask_storeu_epi8(dst + i, m, _mm512_maskz_loadu_epi8(m, src + i));
  }
}

}  // namespace

PanelTable avx512_panels() noexcept {
  PanelTable t;
  t.stream_copy = stream_copy;
  t.by_size[0] = {panel1, 64, 16, "avx512"};
  t.by_size[1] = {panel2, 32, 16, "avx512"};
  t.by_size[2] = {panel4, 16, 16, "avx512"};
  t.by_size[3] = {panel8, 8, 8, "avx512"};
  return t;
}

}  // namespace einexpr::simd::detail
