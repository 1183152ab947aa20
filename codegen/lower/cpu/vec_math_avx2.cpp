// vec_math.hpp's kernels for AVX2 + FMA: 8 floats or 4 doubles a vector, Sleef's *avx2
// functions but for f32 exp (written here: see F32::exp). Compiled with -mavx2 -mfma
// (codegen/CMakeLists.txt) and called only on CPUs that have both (vec_math_x86.cpp); see
// vec_math_kernels.hpp for why everything here has internal linkage but the table.
#include <immintrin.h>
#include <sleef.h>

#include "vec_math_kernels.hpp"
#include "vec_math_rows.hpp"

namespace einexpr::cpu::vec {

namespace {

struct F32 {
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
  static R max(R a, R b) { return _mm256_max_ps(a, b); }  // b where unordered
  static R abs(R x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
  static R neg(R x) { return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f)); }
  static M lt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M gt(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M eq(R a, R b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static R select(M m, R a, R b) { return _mm256_blendv_ps(b, a, m); }
  static M sign_mask(R x) { return x; }  // blendv selects by the sign bit alone
  static R sqrt(R x) { return _mm256_sqrt_ps(x); }
  /// exp written here rather than Sleef_expf8_u10avx2: inline, it runs 0.41 ns an element
  /// against Sleef's 0.73 on one Zen 3 core (in L1; a call to Sleef also makes the caller
  /// spill its vectors), and every f32 input is within 0.77 ULP, 0.69 where the result is
  /// normal (scripts/map_ulp.sh checks all 2^32 of them; Sleef states 1.0). exp(x) = 2^k e^r,
  /// k = round(x log2 e), r = x - k ln 2 in two FMAs (Cody-Waite), e^r = 1 + r + r^2 q(r)
  /// with q of degree 4 fitted to |r| <= ln2/2 (relative error 4e-9 with f32 coefficients).
  /// 2^k goes into the exponent bits when every lane has |x| < 87 (|k| <= 126); otherwise x
  /// is clamped to [-104, 89] (NaN stays NaN) and 2^k applied as 2^floor(k/2) 2^(k - floor(k/2)),
  /// so results overflow to inf and underflow through the denormals, rounded once.
  static R exp(R x) { return exp_impl<true>(x); }
  /// exp without carrying the reduction's rounding errors (about 1 ULP instead of 0.77; 0.32
  /// ns an element against 0.41): for sigmoid, silu and gelu, whose bounds absorb it (their
  /// errors over every input: vec_math_bounds.hpp).
  static R exp_fast(R x) { return exp_impl<false>(x); }
  static R log(R x) { return Sleef_logf8_u10avx2(x); }
  static R log1p(R x) { return Sleef_log1pf8_u10avx2(x); }
  static R tanh(R x) { return Sleef_tanhf8_u35avx2(x); }
  static R erf(R x) { return Sleef_erff8_u10avx2(x); }
  static R erfc(R x) { return Sleef_erfcf8_u15avx2(x); }
  /// gelu_erf(x) = x Φ(x), Φ(x) = 0.5 erfc(-x/sqrt 2), written here rather than through
  /// Sleef's erfc (6.1 ns an element on one Zen 3 core; this 1.87): within 4.05 ULP of the
  /// exact value for every f32 input (scripts/map_ulp.sh; the bound is 4.5), where
  /// erfc(-x/sqrt 2) loses x^2 ULPs in the left tail to the rounding of x/sqrt 2. Every lane computes both forms and keeps one:
  ///  |x| < 1: Φ = 0.5 + x P(x^2), P of degree 5 fitted to 0.5 erf(x/sqrt 2)/x (relative
  ///    error 2.8e-8, its constant's rounding);
  ///  |x| >= 1: E = erfc(u/sqrt 2), u = |x|, as t e^(-u^2/2 + L(t)), t = 1/(1 + u/2), L of
  ///    degree 8 fitted to ln(E/t) + u^2/2 on u in [1, 14.5] (absolute error 1e-8, so E's
  ///    relative error; as in Numerical Recipes' erfc); Φ = E/2 for x < 0, 1 - E/2 above.
  ///    The exponent's rounding (u^2/2 is split exactly, the sum by Fast2Sum) and t's (1 +
  ///    u/2 split exactly, 1/(1 + u/2) = t(1 + δ) from the division's residual) are carried
  ///    into a last correction E(1 + ε + δ S(t)), S(t) = 1 + t L'(t) ~ 1.057 + 0.845t; without
  ///    them the error grows as x^2 in the tail (66 ULP at |x| ~ 10).
  static R gelu_erf(R x) {
    const R u = abs(x);
    const R s = mul(x, x);
    R P = fma(set(-1.290370983e-05f), s, set(1.267523767e-04f));
    P = fma(P, s, set(-1.198101789e-03f));
    P = fma(P, s, set(9.977608919e-03f));
    P = fma(P, s, set(-6.649091095e-02f));
    P = fma(P, s, set(3.989422917e-01f));
    const R small = fma(x, P, set(0.5f));
    const R uc = _mm256_min_ps(set(16.0f), u);  // u where NaN; E(16) underflows to 0
    const R hu = mul(set(0.5f), uc);
    const R da = _mm256_max_ps(set(1.0f), hu), db = _mm256_min_ps(set(1.0f), hu);
    const R d = add(da, db), ed = sub(db, sub(d, da));  // 1 + u/2 = d + ed exactly
    const R t = div(set(1.0f), d);
    const R delta = _mm256_fnmadd_ps(ed, t, _mm256_fnmadd_ps(t, d, set(1.0f)));
    const R t2 = mul(t, t), t4 = mul(t2, t2);  // L(t) by Estrin's scheme (a shorter chain)
    const R l01 = fma(set(9.997849464e-01f), t, set(-9.189345837e-01f));
    const R l23 = fma(set(-2.127307802e-01f), t, set(2.543667257e-01f));
    const R l45 = fma(set(-1.246911287e+00f), t, set(-5.908973888e-02f));
    const R l67 = fma(set(-2.118822098e+00f), t, set(2.684093952e+00f));
    const R L = fma(fma(set(6.208562851e-01f), t4, fma(l67, t2, l45)), t4, fma(l23, t2, l01));
    const R mhu = mul(set(-0.5f), uc);
    const R p = mul(uc, mhu), pe = fma(uc, mhu, neg(p));  // -u^2/2 = p + pe exactly
    const R a = _mm256_min_ps(p, L), b = _mm256_max_ps(p, L);  // both < 0: |a| >= |b|
    const R arg = add(a, b);
    const R eps = add(sub(b, sub(arg, a)), pe);  // a + b - arg + pe
    const R h = mul(mul(set(0.5f), t), exp(arg));
    const R half = fma(h, fma(delta, fma(set(8.451200723648071e-01f), t, set(1.056666135787964e+00f)), eps), h);
    const R large = select(sign_mask(x), half, sub(set(1.0f), half));
    const R phi = select(lt(u, set(1.0f)), small, large);
    return select(eq(x, set(-__builtin_inff())), set(-0.0f), mul(x, phi));
  }

 private:
  template <bool carry>
  static R exp_impl(R x) {
    if (_mm256_movemask_ps(_mm256_cmp_ps(abs(x), set(87.0f), _CMP_NLT_UQ)) == 0) {  // no |x| >= 87, no NaN
      // k = round(x log2 e) in the low mantissa bits of t (1.5·2^23 + 127 + k, rounded once),
      // so that 2^k is t's bits shifted into the exponent field.
      const R t = fma(x, set(1.44269504088896341f), set(12583039.0f));
      const R p = exp_reduced<carry>(x, sub(t, set(12583039.0f)));
      return mul(p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23)));
    }
    x = _mm256_min_ps(set(89.0f), _mm256_max_ps(set(-104.0f), x));
    const R k = _mm256_round_ps(mul(x, set(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const R p = exp_reduced<carry>(x, k);
    const R half = _mm256_round_ps(mul(k, set(0.5f)), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    return mul(mul(p, pow2i(half)), pow2i(sub(k, half)));
  }
  /// e^r for r = x - k ln 2 (k integral, near x log2 e). With `carry`, r's rounding error d
  /// and that of 1 + r are carried into the last addition, so the result is rounded about
  /// once (0.69 ULP at most, against 1.01 for 1 + (r + r^2 q) rounded as written; +5
  /// operations).
  template <bool carry>
  static R exp_reduced(R x, R k) {
    const R r1 = fma(k, set(-0.693145751953125f), x);  // exact: ln 2's leading 16 bits
    const R r = fma(k, set(-1.428606765330187045e-06f), r1);
    R q = fma(set(1.375442836e-03f), r, set(8.368909359e-03f));
    q = fma(q, r, set(4.166947678e-02f));
    q = fma(q, r, set(1.666651815e-01f));
    q = fma(q, r, set(4.999998808e-01f));
    if constexpr (!carry) {
      return add(set(1.0f), fma(mul(r, r), q, r));
    } else {
      const R d = fma(k, set(-1.428606765330187045e-06f), sub(r1, r));  // r1 - k lo - r: r's error
      const R hi = add(set(1.0f), r);
      const R lo = add(sub(set(1.0f), hi), r);  // 1 + r - hi, exact for |r| < 1
      return add(hi, fma(mul(r, r), q, add(lo, d)));
    }
  }
  /// 2^k for integral k in [-126, 127], built in the exponent bits.
  static R pow2i(R k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23));
  }
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
