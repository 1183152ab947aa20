#pragma once
// f32 exp and gelu_erf written here rather than through Sleef, once, over the primitive
// operations of an ISA's f32 traits P (vec_math_avx2.cpp's and vec_math_avx512.cpp's
// F32Ops): the same operations in the same order on 8 or 16 lanes, so both tables give the
// same result bit for bit (each lane's IEEE operations and FMAs are the same). Included only
// by those two files, each compiled for its instruction set with P in an anonymous namespace:
// as vec_math_kernels.hpp explains, every function here is then instantiated with internal
// linkage.
//
// P provides, besides vec_math_kernels.hpp's T, R, M, width, set, add, sub, mul, div, fma,
// max, min, abs, select (a where m):
//   fms(a, b, c)      a·b - c, rounded once
//   not_le(a, b)      the lanes where !(a <= b) (true where unordered)
//   not_lt(a, b)      the lanes where !(a < b)  (true where unordered)
//   both(m, n)        the lanes set in m and in n
//   any(m)            whether some lane of m is set
//   shl23(t)          t's bits shifted left by 23 as an integer (2^k from 1.5·2^23 + 127 + k)
//   round_nearest(x), floor(x)
//   pow2i(k)          2^k for integral k in [-126, 127], built in the exponent bits
//   int_bits(v)       v rounded to an integer (to nearest even), as the bits of a float
namespace einexpr::cpu::vec {

template <class P>
struct InlineF32 {
  using R = typename P::R;

  /// exp: 0.41 ns an element against Sleef's 0.73 on one Zen 3 core (in L1; a call to Sleef
  /// also makes the caller spill its vectors), and every f32 input is within 0.77 ULP, 0.69
  /// where the result is normal (scripts/map_ulp.sh checks all 2^32 of them; Sleef states
  /// 1.0). exp(x) = 2^k e^r, k = round(x log2 e), r = x - k ln 2 in two FMAs (Cody-Waite),
  /// e^r = 1 + r + r^2 q(r) with q of degree 4 fitted to |r| <= ln2/2 (relative error 4e-9
  /// with f32 coefficients). 2^k goes into the exponent bits when every lane has |x| < 87
  /// (|k| <= 126); otherwise x is clamped to [-104, 89] (NaN stays NaN) and 2^k applied as
  /// 2^floor(k/2) 2^(k - floor(k/2)), so results overflow to inf and underflow through the
  /// denormals, rounded once.
  static R exp(R x) { return exp_impl<true>(x); }
  /// exp without carrying the reduction's rounding errors (about 1 ULP instead of 0.77; 0.32
  /// ns an element against 0.41): for sigmoid, silu and gelu, whose bounds absorb it (their
  /// errors over every input: vec_math_bounds.hpp).
  static R exp_fast(R x) { return exp_impl<false>(x); }
  /// e^d for d in [-86, 8], a logit less a row's running maximum (a term of a log-sum-exp,
  /// which sums them): no range check and r = d - k ln 2 in one FMA with ln 2 rounded to f32
  /// (its error, 1.9e-9, times |k| <= 124: at most 2.4e-7 of a term, and only of one below
  /// 2^-100 of the row's largest), e^r by exp's polynomial. Outside [-86, 8] the result is
  /// not e^d (2^k leaves the exponent field): the caller checks its block's least and
  /// largest d and computes that block again with exp_fast. NaN stays NaN. 9 of its 11
  /// operations an FMA or a multiply, against exp_fast's 11 of 16.
  static R exp_near_max(R d) {
    const R t = fma(d, set(log2e), set(round_bias));
    const R k = P::sub(t, set(round_bias));
    const R r = fma(k, set(-ln2_f32), d);
    const R q = fma(exp_q(r), r, set(1.0f));
    return P::mul(fma(q, r, set(1.0f)), P::shl23(t));
  }

  /// gelu_erf(x) = x Φ(x), Φ(x) = 0.5 erfc(-x/sqrt 2), written here rather than through
  /// Sleef's erfc (6.1 ns an element on one Zen 3 core, this 0.75): with a = |x|, x Φ(x) =
  /// relu(x) - a Φ(-a) for either sign, and Φ(-a) = e^(-a^2/2) M(a) with M = P/Q, P and Q
  /// of degrees 4 and 5 with positive coefficients, fitted to M's relative error on [0,
  /// 13.1] (1.1e-8 with the coefficients rounded to f32: scripts/fit_gelu_erf.py; M falls
  /// from 1/2 to ~1/(a sqrt(2 pi))). One path for both signs and no cancellation: relu(x) -
  /// a Φ(-a) is one FMA, and for x >= 0 it takes at most half of x away. -a^2/2 = p + pe is
  /// split exactly and pe carried into exp's reduced argument, so the argument's rounding
  /// (up to 64 ULPs of the result near -86) is not made. Vectors whose lanes all have |x| <=
  /// 13.1 (e^(-a^2/2) normal, 2^k built in the exponent bits) take the path below, the others
  /// (a larger |x|, ±inf or NaN in a lane) `gelu_erf_far`. Bound and measured error:
  /// vec_math_bounds.hpp.
  static R gelu_erf(R x) {
    const R a = P::abs(x);
    if (P::any(P::not_le(a, P::set(13.1f)))) return gelu_erf_far(x, a);
    const R mh = P::mul(a, P::set(-0.5f));
    const R p = P::mul(a, mh), pe = P::fms(a, mh, p);  // -a^2/2 = p + pe exactly
    R two_k;
    const R q = exp_split_near(p, pe, two_k);
    return P::fma(minus_a_mills(a, mh, p, two_k), q, relu_signed_zero(x));
  }

 private:
  static R set(float c) { return P::set(c); }
  static R fma(R a, R b, R c) { return P::fma(a, b, c); }

  /// -a P(a) / Q(a) for gelu_erf: its M(a) = P/Q times -a, with P's coefficients doubled so
  /// that `mh` = -a/2 (exact) is the factor; `scale` (a power of two) multiplies it before
  /// the division. P = p0 + a (E(s) + a O(s)) with s = a^2 = -2p (p = -a^2/2 rounded, so
  /// the coefficients of s are scaled by powers of -2, exactly), Q likewise: every term is
  /// positive, the rounding of s is common to P and Q and largely cancels in P/Q, and p0 or
  /// q0 is added last (P/Q within 2.9e-7 of M, relative; 3.6e-7 by Horner in a).
  static R minus_a_mills(R a, R mh, R p, R scale) {
    constexpr float p0 = 2 * 0.5f, p1 = 2 * 4.345304072e-01f, p2 = 2 * 1.804314852e-01f, p3 = 2 * 3.968352452e-02f,
                    p4 = 2 * 3.973853774e-03f;  // 2P: doubling is exact
    constexpr float q0 = 1.0f, q1 = 1.666945577e+00f, q2 = 1.190889835e+00f, q3 = 4.620645046e-01f,
                    q4 = 9.947954118e-02f, q5 = 9.960823692e-03f;
    const R Pa = fma(a, fma(a, fma(set(-2 * p4), p, set(p2)), fma(set(-2 * p3), p, set(p1))), set(p0));
    const R Qa = fma(a, fma(a, fma(set(-2 * q4), p, set(q2)), fma(fma(set(4 * q5), p, set(-2 * q3)), p, set(q1))),
                     set(q0));
    return P::div(P::mul(P::mul(mh, scale), Pa), Qa);
  }
  /// relu(x) with -0 for x <= -0, so that relu(x) + (a term <= -0) keeps gelu_erf's sign at
  /// x = -0 and -inf; NaN stays NaN (max gives its second operand where unordered).
  static R relu_signed_zero(R x) { return P::max(set(-0.0f), x); }
  /// e^(p + pe) = 2^k e^r for gelu_erf, p >= -86 (|x| <= 13.1, so k >= -124): returns e^r
  /// and sets `two_k`. r = p - k ln 2 + pe (p - k ln2_hi is exact, as in exp), e^r by exp's
  /// polynomial, 2^k in the exponent bits.
  static R exp_split_near(R p, R pe, R& two_k) {
    const R t = fma(p, set(log2e), set(round_bias));  // 1.5·2^23 + 127 + k
    const R k = P::sub(t, set(round_bias));
    const R r = P::add(fma(k, set(-ln2_hi), p), fma(k, set(-ln2_lo), pe));
    const R q = fma(exp_q(r), r, set(1.0f));
    two_k = P::shl23(t);
    return fma(q, r, set(1.0f));  // e^r = 1 + r(1 + r q(r))
  }
  /// gelu_erf where some lane has |x| > 13.1, ±inf or NaN. Subnormal numbers only where the
  /// result is one: a subnormal operand or result costs a microcode assist on every vector it
  /// is in (the form before this scaled every such lane by 2^-128, which made the vector 2x
  /// slower than the fast path on Zen 5 whatever the lane held). Lanes with -U <= x < -13.1
  /// (U = 14.356068, the largest float whose |x| Φ(-|x|) rounds to at least the smallest
  /// subnormal): e^(-a^2/2) as 2^-128 e^(-a^2/2 + 128 ln 2), so that exp_split_near's 2^k
  /// stays normal, the term -a Φ(-a) times 2^128 rounded once, then into the subnormals by
  /// integer rounding (below 2^-125 floats are the multiples of 2^-149, and a multiple's
  /// bits are the integer). The other far lanes need no arithmetic:
  /// x Φ(x) is x itself for x > 13.1 (1 - Φ(x) < 2^-128), -0 for x < -U (rounded to nearest),
  /// and relu_signed_zero gives them, ±inf and NaN. The lanes with |x| <= 13.1 exactly as
  /// `gelu_erf` computes them, so that a value's result does not depend on its neighbours.
  static R gelu_erf_far(R x, R a) {
    const auto far = P::not_le(a, set(13.1f));  // |x| > 13.1 or NaN
    const auto tail = P::both(P::lt(x, set(-13.1f)), P::not_lt(x, set(-14.356068f)));
    const R ac = P::select(tail, a, P::select(far, set(13.1f), a));  // any normal a will do where far but not tail
    const R mh = P::mul(ac, set(-0.5f));
    const R p = P::mul(ac, mh), pe = P::fms(ac, mh, p);
    R two_k;
    const R q = exp_split_near(P::add(p, P::select(tail, set(88.72283935546875f), set(0.0f))), pe, two_k);
    const R m = minus_a_mills(ac, mh, p, two_k);  // in tail lanes the term's factor times 2^128
    const R relu = relu_signed_zero(x);
    // The term in tail lanes, -|m q| 2^-128, below 2^-125: a multiple of 2^-149 whose bits
    // are |m q| 2^21 rounded to an integer, so no floating-point operation makes a subnormal.
    const R tiny = P::neg(P::int_bits(P::mul(P::abs(P::select(tail, P::mul(m, q), set(0.0f))), set(0x1p21f))));
    return P::select(tail, tiny, P::select(far, relu, fma(m, q, relu)));
  }
  static constexpr float log2e = 1.44269504088896341f;
  static constexpr float round_bias = 12583039.0f;  // 1.5·2^23 + 127: x log2 e + it is k + 127 in the low bits
  static constexpr float ln2_f32 = 0.693147182464599609375f;  // ln 2 rounded to f32 (1.9e-9 above it)
  static constexpr float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187045e-06f;  // ln 2 = hi + lo
  /// q(r) of e^r = 1 + r + r^2 q(r), degree 4, fitted to |r| <= ln2/2 (relative error 4e-9
  /// with f32 coefficients).
  static R exp_q(R r) {
    R q = fma(set(1.375442836e-03f), r, set(8.368909359e-03f));
    q = fma(q, r, set(4.166947678e-02f));
    q = fma(q, r, set(1.666651815e-01f));
    return fma(q, r, set(4.999998808e-01f));
  }
  template <bool carry>
  static R exp_impl(R x) {
    if (!P::any(P::not_lt(P::abs(x), set(87.0f)))) {  // no |x| >= 87, no NaN
      // k = round(x log2 e) in the low mantissa bits of t (1.5·2^23 + 127 + k, rounded once),
      // so that 2^k is t's bits shifted into the exponent field.
      const R t = fma(x, set(log2e), set(round_bias));
      const R p = exp_reduced<carry>(x, P::sub(t, set(round_bias)));
      return P::mul(p, P::shl23(t));
    }
    x = P::min(set(89.0f), P::max(set(-104.0f), x));
    const R k = P::round_nearest(P::mul(x, set(log2e)));
    const R p = exp_reduced<carry>(x, k);
    const R half = P::floor(P::mul(k, set(0.5f)));
    return P::mul(P::mul(p, P::pow2i(half)), P::pow2i(P::sub(k, half)));
  }
  /// e^r for r = x - k ln 2 (k integral, near x log2 e). With `carry`, r's rounding error d
  /// and that of 1 + r are carried into the last addition, so the result is rounded about
  /// once (0.69 ULP at most, against 1.01 for 1 + (r + r^2 q) rounded as written; +5
  /// operations).
  template <bool carry>
  static R exp_reduced(R x, R k) {
    const R r1 = fma(k, set(-ln2_hi), x);  // exact: ln 2's leading 16 bits
    const R r = fma(k, set(-ln2_lo), r1);
    const R q = exp_q(r);
    if constexpr (!carry) {
      return P::add(set(1.0f), fma(P::mul(r, r), q, r));
    } else {
      const R d = fma(k, set(-ln2_lo), P::sub(r1, r));  // r1 - k lo - r: r's error
      const R hi = P::add(set(1.0f), r);
      const R lo = P::add(P::sub(set(1.0f), hi), r);  // 1 + r - hi, exact for |r| < 1
      return P::add(hi, fma(P::mul(r, r), q, P::add(lo, d)));
    }
  }
};

}  // namespace einexpr::cpu::vec
