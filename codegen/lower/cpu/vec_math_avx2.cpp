// vec_math.hpp's kernels for AVX2 + FMA: 8 floats or 4 doubles a vector, Sleef's *avx2
// functions but for f32 exp and gelu_erf (vec_math_f32.hpp). Compiled with -mavx2 -mfma
// (codegen/CMakeLists.txt) and called only on CPUs that have both (vec_math_x86.cpp); see
// vec_math_kernels.hpp for why everything here has internal linkage but the table.
#include <immintrin.h>
#include <sleef.h>

#include "vec_math_f32.hpp"
#include "vec_math_kernels.hpp"
#include "vec_math_rows.hpp"

namespace einexpr::cpu::vec {

namespace {

/// The primitive operations of 8 floats (for InlineF32, vec_math_f32.hpp) and the traits
/// vec_math_kernels.hpp needs of them.
struct F32Ops {
  using T = float;
  using R = __m256;
  using M = __m256;
  static constexpr int width = 8;
  static constexpr unsigned align = 32;
  static R load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, R v) { _mm256_storeu_ps(p, v); }
  static void stream(T* p, R v) { _mm256_stream_ps(p, v); }
  static void fence() { _mm_sfence(); }
  static R set(T c) { return _mm256_set1_ps(c); }
  static R zero() { return _mm256_setzero_ps(); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R sub(R a, R b) { return _mm256_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R div(R a, R b) { return _mm256_div_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R fms(R a, R b, R c) { return _mm256_fmsub_ps(a, b, c); }
  static R max(R a, R b) { return _mm256_max_ps(a, b); }  // b where unordered
  static R min(R a, R b) { return _mm256_min_ps(a, b); }  // b where unordered
  static R abs(R x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
  static R neg(R x) { return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f)); }
  static M lt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M eq(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M not_le(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_NLE_UQ); }
  static M not_lt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_NLT_UQ); }
  static bool any(M m) { return _mm256_movemask_ps(m) != 0; }
  static M both(M m, M n) { return _mm256_and_ps(m, n); }
  static R select(M m, R a, R b) { return _mm256_blendv_ps(b, a, m); }
  static M sign_mask(R x) { return x; }  // blendv selects by the sign bit alone
  static R sqrt(R x) { return _mm256_sqrt_ps(x); }
  static R shl23(R t) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23)); }
  static R round_nearest(R x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static R floor(R x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  static R int_bits(R v) { return _mm256_castsi256_ps(_mm256_cvtps_epi32(v)); }
  static R pow2i(R k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23));
  }
};

/// f32: exp and gelu_erf inline (vec_math_f32.hpp), the rest through Sleef.
struct F32 : F32Ops {
  static R exp(R x) { return InlineF32<F32Ops>::exp(x); }
  static R exp_fast(R x) { return InlineF32<F32Ops>::exp_fast(x); }
  static R exp_near_max(R d) { return InlineF32<F32Ops>::exp_near_max(d); }
  static R gelu_erf(R x) { return InlineF32<F32Ops>::gelu_erf(x); }
  static R log(R x) { return Sleef_logf8_u10avx2(x); }
  static R log1p(R x) { return Sleef_log1pf8_u10avx2(x); }
  static R tanh(R x) { return Sleef_tanhf8_u35avx2(x); }
  static R erf(R x) { return Sleef_erff8_u10avx2(x); }
  static R erfc(R x) { return Sleef_erfcf8_u15avx2(x); }
};

struct F64 {
  using T = double;
  using R = __m256d;
  using M = __m256d;
  static constexpr int width = 4;
  static constexpr unsigned align = 32;
  static R load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, R v) { _mm256_storeu_pd(p, v); }
  static void stream(T* p, R v) { _mm256_stream_pd(p, v); }
  static void fence() { _mm_sfence(); }
  static R set(T c) { return _mm256_set1_pd(c); }
  static R zero() { return _mm256_setzero_pd(); }
  static R add(R a, R b) { return _mm256_add_pd(a, b); }
  static R sub(R a, R b) { return _mm256_sub_pd(a, b); }
  static R mul(R a, R b) { return _mm256_mul_pd(a, b); }
  static R div(R a, R b) { return _mm256_div_pd(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_pd(a, b, c); }
  static R max(R a, R b) { return _mm256_max_pd(a, b); }
  static R min(R a, R b) { return _mm256_min_pd(a, b); }
  static R abs(R x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
  static R neg(R x) { return _mm256_xor_pd(x, _mm256_set1_pd(-0.0)); }
  static M lt(R a, R b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
  static M eq(R a, R b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
  static R select(M m, R a, R b) { return _mm256_blendv_pd(b, a, m); }
  static M sign_mask(R x) { return x; }
  static R sqrt(R x) { return _mm256_sqrt_pd(x); }
  static R exp(R x) { return Sleef_expd4_u10avx2(x); }
  static R log(R x) { return Sleef_logd4_u10avx2(x); }
  static R log1p(R x) { return Sleef_log1pd4_u10avx2(x); }
  static R tanh(R x) { return Sleef_tanhd4_u35avx2(x); }
  static R erf(R x) { return Sleef_erfd4_u10avx2(x); }
  static R erfc(R x) { return Sleef_erfcd4_u15avx2(x); }
};

}  // namespace

Table detail::avx2_table() noexcept {
  Table t;
  t.isa = "avx2";
  t.f32 = make_kernels<F32>();
  t.f64 = make_kernels<F64>();
  t.rows_f32 = make_row_kernels<F32>();
  t.rows_f64 = make_row_kernels<F64>();
  t.fma_f32 = make_fma_probe<F32>();
  t.fma_f64 = make_fma_probe<F64>();
  return t;
}

}  // namespace einexpr::cpu::vec
