// vec_math.hpp's kernels for AVX-512F: 16 floats or 8 doubles a vector, Sleef's *avx512f
// functions but for f32 exp and gelu_erf (vec_math_f32.hpp, shared with the AVX2 table).
// Compiled with -mavx512f (codegen/CMakeLists.txt) and called only on CPUs that have it
// (vec_math_x86.cpp); see vec_math_kernels.hpp for why everything here has internal linkage
// but the table. It mirrors vec_math_avx2.cpp function for function.
#include <immintrin.h>
#include <sleef.h>

#include "vec_math_f32.hpp"
#include "vec_math_kernels.hpp"
#include "vec_math_rows.hpp"

namespace einexpr::cpu::vec {

namespace {

/// The primitive operations of 16 floats (for InlineF32, vec_math_f32.hpp) and the traits
/// vec_math_kernels.hpp needs of them.
struct F32Ops {
  using T = float;
  using R = __m512;
  using M = __mmask16;
  static constexpr int width = 16;
  static constexpr unsigned align = 64;
  static R load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, R v) { _mm512_storeu_ps(p, v); }
  static void stream(T* p, R v) { _mm512_stream_ps(p, v); }
  static void fence() { _mm_sfence(); }
  static R set(T c) { return _mm512_set1_ps(c); }
  static R zero() { return _mm512_setzero_ps(); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R div(R a, R b) { return _mm512_div_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R fms(R a, R b, R c) { return _mm512_fmsub_ps(a, b, c); }
  // b where unordered; the masked forms because _mm512_max_ps passes an undefined vector
  // through, which GCC 12 reports as used uninitialized once inlined into apply_partial.
  static R max(R a, R b) { return _mm512_mask_max_ps(b, __mmask16(0xFFFF), a, b); }
  static R min(R a, R b) { return _mm512_mask_min_ps(b, __mmask16(0xFFFF), a, b); }
  static R abs(R x) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
  }
  static R neg(R x) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
  }
  static M lt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M eq(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M not_le(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLE_UQ); }
  static M not_lt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ); }
  static bool any(M m) { return m != 0; }
  static M both(M m, M n) { return static_cast<M>(m & n); }
  static R select(M m, R a, R b) { return _mm512_mask_blend_ps(m, b, a); }  // a where m
  static R sqrt(R x) { return _mm512_sqrt_ps(x); }
  static R shl23(R t) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(t), 23)); }
  static R round_nearest(R x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static R floor(R x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  static R int_bits(R v) { return _mm512_castsi512_ps(_mm512_cvtps_epi32(v)); }
  static R pow2i(R k) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127)), 23));
  }
};

/// f32: exp and gelu_erf inline (vec_math_f32.hpp, the same operations as the AVX2 table's,
/// so the same results), the rest through Sleef.
struct F32 : F32Ops {
  static R exp(R x) { return InlineF32<F32Ops>::exp(x); }
  static R exp_fast(R x) { return InlineF32<F32Ops>::exp_fast(x); }
  static R exp_near_max(R d) { return InlineF32<F32Ops>::exp_near_max(d); }
  static R gelu_erf(R x) { return InlineF32<F32Ops>::gelu_erf(x); }
  static R log(R x) { return Sleef_logf16_u10avx512f(x); }
  static R log1p(R x) { return Sleef_log1pf16_u10avx512f(x); }
  static R tanh(R x) { return Sleef_tanhf16_u35avx512f(x); }
  static R erf(R x) { return Sleef_erff16_u10avx512f(x); }
  static R erfc(R x) { return Sleef_erfcf16_u15avx512f(x); }
};

struct F64 {
  using T = double;
  using R = __m512d;
  using M = __mmask8;
  static constexpr int width = 8;
  static constexpr unsigned align = 64;
  static R load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, R v) { _mm512_storeu_pd(p, v); }
  static void stream(T* p, R v) { _mm512_stream_pd(p, v); }
  static void fence() { _mm_sfence(); }
  static R set(T c) { return _mm512_set1_pd(c); }
  static R zero() { return _mm512_setzero_pd(); }
  static R add(R a, R b) { return _mm512_add_pd(a, b); }
  static R sub(R a, R b) { return _mm512_sub_pd(a, b); }
  static R mul(R a, R b) { return _mm512_mul_pd(a, b); }
  static R div(R a, R b) { return _mm512_div_pd(a, b); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_pd(a, b, c); }
  static R max(R a, R b) { return _mm512_mask_max_pd(b, __mmask8(0xFF), a, b); }  // as F32::max
  static R min(R a, R b) { return _mm512_mask_min_pd(b, __mmask8(0xFF), a, b); }  // as F32::min
  static R abs(R x) {
    return _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(INT64_MAX)));
  }
  static R neg(R x) {
    return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(INT64_MIN)));
  }
  static M lt(R a, R b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
  static M eq(R a, R b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
  static R select(M m, R a, R b) { return _mm512_mask_blend_pd(m, b, a); }
  static R sqrt(R x) { return _mm512_sqrt_pd(x); }
  static R exp(R x) { return Sleef_expd8_u10avx512f(x); }
  static R log(R x) { return Sleef_logd8_u10avx512f(x); }
  static R log1p(R x) { return Sleef_log1pd8_u10avx512f(x); }
  static R tanh(R x) { return Sleef_tanhd8_u35avx512f(x); }
  static R erf(R x) { return Sleef_erfd8_u10avx512f(x); }
  static R erfc(R x) { return Sleef_erfcd8_u15avx512f(x); }
};

}  // namespace

Table detail::avx512_table() noexcept {
  Table t;
  t.isa = "avx512";
  t.f32 = make_kernels<F32>();
  t.f64 = make_kernels<F64>();
  t.rows_f32 = make_row_kernels<F32>();
  t.rows_f64 = make_row_kernels<F64>();
  t.fma_f32 = make_fma_probe<F32>();
  t.fma_f64 = make_fma_probe<F64>();
  return t;
}

}  // namespace einexpr::cpu::vec
