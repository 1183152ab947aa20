// vec_math.hpp's kernels for AVX-512F: 16 floats or 8 doubles a vector, Sleef's *avx512f
// functions. Compiled with -mavx512f (codegen/CMakeLists.txt) and called only on CPUs that
// have it (vec_math_x86.cpp); see vec_math_kernels.hpp for why everything here has
// internal linkage but the table. Not run on the development machine (Zen 3, no AVX-512):
// it mirrors vec_math_avx2.cpp function for function.
#include <immintrin.h>
#include <sleef.h>

#include "vec_math_kernels.hpp"
#include "vec_math_rows.hpp"

namespace einexpr::cpu::vec {

namespace {

struct F32 {
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
  // b where unordered; the masked form because _mm512_max_ps passes an undefined vector
  // through, which GCC 12 reports as used uninitialized once inlined into apply_partial.
  static R max(R a, R b) { return _mm512_mask_max_ps(b, __mmask16(0xFFFF), a, b); }
  static R abs(R x) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff)));
  }
  static R neg(R x) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)));
  }
  static M lt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M eq(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static R select(M m, R a, R b) { return _mm512_mask_blend_ps(m, b, a); }  // a where m
  static R sqrt(R x) { return _mm512_sqrt_ps(x); }
  static R exp(R x) { return Sleef_expf16_u10avx512f(x); }
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
