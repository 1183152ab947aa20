#pragma once
// The formulas of vec_math.hpp, written once over an ISA's traits V:
//   T, R (a vector of T), M (a comparison mask), width, align (bytes a streamed store needs);
//   load store stream fence set zero add sub mul div fma max abs neg lt gt eq select;
//   exp log log1p tanh erf erfc sqrt; optionally exp_fast, sign_mask and gelu_erf (below).
// Included only by vec_math_{scalar,avx2,avx512}.cpp, each compiled for its instruction
// set, with V declared in an anonymous namespace: every function here is then a template
// instantiated with internal linkage, so no copy compiled for AVX2 or AVX-512 can stand in
// for one that runs on any x86-64. For the same reason this header uses no library
// templates (their inline functions would be emitted as shared symbols).
#include <cstdint>

#include "vec_math.hpp"

namespace einexpr::cpu::vec {

template <class V>
struct Math {
  using T = typename V::T;
  using R = typename V::R;

  static R c(double v) { return V::set(static_cast<T>(v)); }
  /// y where x is -inf becomes -0: the limit of gelu_erf, whose formula gives -inf · 0 = NaN
  /// there.
  static R limit_at_minus_inf(R x, R y) { return V::select(V::eq(x, c(-__builtin_inf())), c(-0.0), y); }

  static R relu(R x) { return V::max(V::zero(), x); }  // max returns x where x is NaN
  static R abs(R x) { return V::abs(x); }
  static R neg(R x) { return V::neg(x); }
  static R square(R x) { return V::mul(x, x); }
  static R sqrt(R x) { return V::sqrt(x); }
  static R rsqrt(R x) { return V::div(c(1), V::sqrt(x)); }
  static R reciprocal(R x) { return V::div(c(1), x); }
  static R exp(R x) { return V::exp(x); }
  static R log(R x) { return V::log(x); }
  static R tanh(R x) { return V::tanh(x); }
  static R erf(R x) { return V::erf(x); }
  /// exp where the caller's error bound absorbs about 1 ULP: the ISA's exp_fast if it has
  /// one (AVX2's and AVX-512's f32 exp without its error carrying, 0.32 ns an element
  /// against 0.41), else exp.
  static R exp_fast(R x) {
    if constexpr (requires(R r) { V::exp_fast(r); })
      return V::exp_fast(x);
    else
      return V::exp(x);
  }
  /// e^d for d in [-86, 8] (a logit less a running maximum), unspecified outside it: the
  /// ISA's exp_near_max if it has one (f32 under AVX2 and AVX-512), else exp_fast.
  static R exp_near_max(R d) {
    if constexpr (requires(R r) { V::exp_near_max(r); })
      return V::exp_near_max(d);
    else
      return exp_fast(d);
  }
  /// The lanes whose sign bit is set: AVX2's blendv reads the sign bit itself (V::sign_mask
  /// is x), elsewhere x < 0, which differs only at -0 and at NaN, where the callers below
  /// give the same result either way.
  static typename V::M negative(R x) {
    if constexpr (requires(R r) { V::sign_mask(r); })
      return V::sign_mask(x);
    else
      return V::lt(x, V::zero());
  }
  /// x · sigmoid(t) = x / (1 + exp(-t)) in one division, from e = exp(-|t|), which never
  /// overflows: x / (1 + e) for t >= 0, x·e / (1 + e) for t < 0 (so tiny results stay
  /// accurate instead of becoming x / inf = 0). x·e takes x as at least -max, so that at
  /// x = t = -inf (e = 0) the result is -0, the limit, rather than -inf · 0 = NaN.
  static R times_sigmoid(R x, R t) {
    const R e = exp_fast(V::neg(V::abs(t)));
    const R finite = V::max(c(sizeof(T) == 4 ? -3.4028234663852886e38 : -1.7976931348623157e308), x);  // x where NaN
    return V::div(V::select(negative(t), V::mul(finite, e), x), V::add(c(1), e));
  }
  /// 1 / (1 + exp(-x)) as above, without the product by 1: e / (1 + e) for x < 0.
  static R sigmoid(R x) {
    const R e = exp_fast(V::neg(V::abs(x)));
    return V::div(V::select(negative(x), e, c(1)), V::add(c(1), e));
  }
  static R silu(R x) { return times_sigmoid(x, x); }
  /// torch's softplus(beta=1, threshold=20): x where x > 20, else log1p(exp(x)).
  static R softplus(R x) { return V::select(V::gt(x, c(20)), x, V::log1p(V::exp(x))); }
  /// 0.5·x·(1 + tanh(z)) = x·sigmoid(2z), 2z = x·(k1 + k2·x²) with k1 = 2·sqrt(2/pi) and
  /// k2 = k1·0.044715: no cancellation of 1 + tanh(z) in the left tail.
  static R gelu(R x) {
    constexpr double k1 = 1.5957691216057308, k2 = k1 * 0.044715;
    const R t = V::mul(x, V::fma(c(k2), V::mul(x, x), c(k1)));
    return times_sigmoid(x, t);
  }
  /// 0.5·x·(1 + erf(x/sqrt 2)) = 0.5·x·erfc(-x/sqrt 2): no cancellation for x < 0.
  static R gelu_erf(R x) {
    if constexpr (requires(R r) { V::gelu_erf(r); }) return V::gelu_erf(x);  // AVX2 and AVX-512 f32: inline
    const R e = V::erfc(V::mul(x, c(-0.70710678118654752440)));
    return limit_at_minus_inf(x, V::mul(V::mul(c(0.5), x), e));
  }
};

/// f on the n < width elements at x, through a vector padded with zeros.
template <class V, typename V::R (*F)(typename V::R)>
void apply_partial(const typename V::T* x, typename V::T* y, std::int64_t n) {
  if (n <= 0) return;
  typename V::T buf[V::width];
  for (int k = 0; k < V::width; ++k) buf[k] = k < n ? x[k] : typename V::T(0);
  V::store(buf, F(V::load(buf)));
  for (std::int64_t k = 0; k < n; ++k) y[k] = buf[k];
}

template <class V, typename V::R (*F)(typename V::R)>
void apply(const typename V::T* x, typename V::T* y, std::int64_t n, bool stream) {
  using T = typename V::T;
  constexpr int w = V::width;
  const auto address = reinterpret_cast<std::uintptr_t>(y);
  std::int64_t i = 0;
  if (stream && w > 1 && address % sizeof(T) == 0) {
    std::int64_t head = static_cast<std::int64_t>((V::align - address % V::align) % V::align / sizeof(T));
    head = head < n ? head : n;
    apply_partial<V, F>(x, y, head);
    for (i = head; i + 2 * w <= n; i += 2 * w) {  // two vectors in flight
      const typename V::R a = F(V::load(x + i)), b = F(V::load(x + i + w));
      V::stream(y + i, a);
      V::stream(y + i + w, b);
    }
    for (; i + w <= n; i += w) V::stream(y + i, F(V::load(x + i)));
    V::fence();
  } else {
    for (; i + 2 * w <= n; i += 2 * w) {
      const typename V::R a = F(V::load(x + i)), b = F(V::load(x + i + w));
      V::store(y + i, a);
      V::store(y + i + w, b);
    }
    for (; i + w <= n; i += w) V::store(y + i, F(V::load(x + i)));
  }
  apply_partial<V, F>(x + i, y + i, n - i);
}

/// vec_math.hpp's FmaProbe for the ISA traits V.
template <class V>
typename V::T fma_probe(std::int64_t steps) {
  using T = typename V::T;
  typename V::R acc[fma_chains];
  for (int c = 0; c < fma_chains; ++c) acc[c] = V::set(T(1) + T(c) * T(1e-3));
  const typename V::R mul = V::set(T(0.999999)), add = V::set(T(1e-7));
  for (std::int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int c = 0; c < fma_chains; ++c) acc[c] = V::fma(acc[c], mul, add);
  }
  for (int c = 1; c < fma_chains; ++c) acc[0] = V::add(acc[0], acc[c]);
  T lanes[V::width];
  V::store(lanes, acc[0]);
  T sum = 0;
  for (int k = 0; k < V::width; ++k) sum += lanes[k];
  return sum;
}

template <class V>
FmaProbe<typename V::T> make_fma_probe() {
  return {&fma_probe<V>, V::width};
}

/// The kernels of every function for the ISA traits V.
template <class V>
Kernels<typename V::T> make_kernels() {
  using M = Math<V>;
  Kernels<typename V::T> k;
  k.relu = &apply<V, &M::relu>;
  k.abs = &apply<V, &M::abs>;
  k.neg = &apply<V, &M::neg>;
  k.square = &apply<V, &M::square>;
  k.sqrt = &apply<V, &M::sqrt>;
  k.rsqrt = &apply<V, &M::rsqrt>;
  k.reciprocal = &apply<V, &M::reciprocal>;
  k.exp = &apply<V, &M::exp>;
  k.log = &apply<V, &M::log>;
  k.tanh = &apply<V, &M::tanh>;
  k.erf = &apply<V, &M::erf>;
  k.sigmoid = &apply<V, &M::sigmoid>;
  k.silu = &apply<V, &M::silu>;
  k.softplus = &apply<V, &M::softplus>;
  k.gelu = &apply<V, &M::gelu>;
  k.gelu_erf = &apply<V, &M::gelu_erf>;
  return k;
}

}  // namespace einexpr::cpu::vec
