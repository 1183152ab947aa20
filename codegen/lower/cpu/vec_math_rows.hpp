#pragma once
// The normalizations' row functions (vec_math.hpp's RowKernels: NormStep forward on the
// CPU) over one contiguous row of n elements, written once over an ISA's traits V as
// vec_math_kernels.hpp's functions are, and under the same rules (included only by the
// vec_math_{scalar,avx2,avx512}.cpp files; no library templates).
//   softmax      exp(x - m) / sum exp(x - m), m the row's maximum
//   log_softmax  (x - m) - log(sum exp(x - m))
//   layer_norm   (x - mean) / sqrt(var + eps), var the population variance by two passes
//                (everything centered on x[0] first, so rows far from 0 keep their digits)
//   rms_norm     x / sqrt(mean(x²) + eps)
// Row sums add blocks of 64 vectors in T, each block's sum into a double (Rows::sum): the
// error does not grow with the row. A row with NaN or +inf gives NaN everywhere (x - m is NaN there), as torch; a row of
// -inf too (-inf - -inf). The row is read from memory once: every later pass finds it in
// the L1 or L2 cache. `stream`: y is written with streaming stores where it is aligned for
// them (it is not read again; the caller fences). `scratch` (n elements, apart from x and
// y): softmax's exponentials before the scaling, so that y is written once.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "prefetch.hpp"
#include "vec_math_kernels.hpp"

namespace einexpr::cpu::vec {

template <class V>
struct Rows {
  using T = typename V::T;
  using R = typename V::R;
  static constexpr int w = V::width;

  static R load_partial(const T* x, std::int64_t n, T pad) {
    T b[w];
    for (int k = 0; k < w; ++k) b[k] = k < n ? x[k] : pad;
    return V::load(b);
  }
  static void store_partial(T* y, R v, std::int64_t n) {
    T b[w];
    V::store(b, v);
    for (std::int64_t k = 0; k < n; ++k) y[k] = b[k];
  }
  /// How many elements from y until y + that is aligned for V::stream (at most n), or -1
  /// where no element boundary is (y misaligned by part of an element) or streaming is off.
  /// A row of 50257 f32 starts aligned one row in 16: without this head, the rest were
  /// written with plain stores (a read for ownership of every line).
  static std::int64_t stream_head(const T* y, std::int64_t n, bool stream) {
    if (!stream || w == 1) return -1;
    const std::uintptr_t mis = reinterpret_cast<std::uintptr_t>(y) % V::align;
    if (mis == 0) return 0;
    if (mis % sizeof(T) != 0) return -1;
    return std::min<std::int64_t>(n, static_cast<std::int64_t>((V::align - mis) / sizeof(T)));
  }
  /// The lanes' sum in double, as a tree (halves added side by side: no chain of w adds).
  static double hsum(R v) {
    T b[w];
    V::store(b, v);
    double s[w];
    for (int k = 0; k < w; ++k) s[k] = b[k];
    for (int half = w / 2; half > 0; half /= 2)
      for (int k = 0; k < half; ++k) s[k] += s[k + half];
    return s[0];
  }
  /// Elements a row's sums add in vectors (two accumulators) before that block's sum joins a
  /// double total: a lane adds 32 values in T, so the error is a block's however long the row
  /// (numpy's pairwise sum's base case is 128 values over 8 accumulators, then a tree).
  static constexpr std::int64_t sum_block = 64 * w;
  /// Where a block starting at i ends: sum_block later, or at the last whole pair of vectors.
  static std::int64_t block_end(std::int64_t i, std::int64_t n) {
    return std::min(i + sum_block, i + (n - i) / (2 * w) * (2 * w));
  }
  static T hmax(R v) {
    T b[w];
    V::store(b, v);
    T m = b[0];
    for (int k = 1; k < w; ++k) m = b[k] > m ? b[k] : m;
    return m;
  }

  /// sum over the row of F(x), in double: blocks of two vectors in flight (block_end); the
  /// tail's missing lanes count 0.
  template <class F>
  static double sum(const T* x, std::int64_t n, F f) {
    double total = 0;
    std::int64_t i = 0;
    while (i + 2 * w <= n) {
      R s0 = V::zero(), s1 = V::zero();
      for (const std::int64_t end = block_end(i, n); i < end; i += 2 * w) {
        s0 = V::add(s0, f(V::load(x + i)));
        s1 = V::add(s1, f(V::load(x + i + w)));
      }
      total += hsum(V::add(s0, s1));
    }
    R s = V::zero();
    for (; i + w <= n; i += w) s = V::add(s, f(V::load(x + i)));
    if (i < n) {
      T b[w];
      V::store(b, f(load_partial(x + i, n - i, x[i])));
      for (std::int64_t k = n - i; k < w; ++k) b[k] = T(0);
      s = V::add(s, V::load(b));
    }
    return total + hsum(s);
  }

  static T max_of(const T* x, std::int64_t n) {
    const T minus_inf = -__builtin_inf();
    R m0 = V::set(minus_inf), m1 = m0;
    std::int64_t i = 0;
    for (; i + 2 * w <= n; i += 2 * w) {
      m0 = V::max(m0, V::load(x + i));
      m1 = V::max(m1, V::load(x + i + w));
    }
    for (; i + w <= n; i += w) m0 = V::max(m0, V::load(x + i));
    if (i < n) m1 = V::max(m1, load_partial(x + i, n - i, minus_inf));
    return hmax(V::max(m0, m1));
  }

  /// y[i] = F(x[i]), streamed where asked and y is aligned.
  template <class F>
  static void write(const T* x, T* y, std::int64_t n, bool stream, F f) {
    std::int64_t i = 0;
    if (const std::int64_t head = stream_head(y, n, stream); head >= 0) {
      if (head > 0) store_partial(y, f(load_partial(x, head, T(0))), head);
      for (i = head; i + w <= n; i += w) V::stream(y + i, f(V::load(x + i)));
    } else {
      for (; i + w <= n; i += w) V::store(y + i, f(V::load(x + i)));
    }
    if (i < n) store_partial(y + i, f(load_partial(x + i, n - i, T(0))), n - i);
  }

  static void softmax(const T* x, T* y, std::int64_t n, T /*eps*/, bool stream, T* scratch) {
    scaled_softmax(x, y, n, T(1), stream, scratch);
  }

  /// scale · softmax(x): softmax's passes with scale folded into the final multiply.
  static void scaled_softmax(const T* x, T* y, std::int64_t n, T scale, bool stream, T* scratch) {
    if (n <= 0) return;
    const R m = V::set(max_of(x, n));
    T* e = stream ? scratch : y;
    double total = 0;  // blocks of sum_block, as sum() adds them
    std::int64_t i = 0;
    while (i + 2 * w <= n) {
      R s0 = V::zero(), s1 = V::zero();
      for (const std::int64_t end = block_end(i, n); i < end; i += 2 * w) {
        // The memory after the row (the next row, where rows are contiguous) is fetched while
        // exp computes, a cache line an iteration: its max pass then reads from cache instead
        // of waiting on memory. (A prefetch never faults, past the buffer's end included; the
        // address is computed as an integer, since x + n + i may point past the array.)
        if constexpr (2 * w * sizeof(T) >= 64)
          __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(x) +
                                                           static_cast<std::uintptr_t>(n + i) * sizeof(T)));
        const R a = V::exp(V::sub(V::load(x + i), m)), b = V::exp(V::sub(V::load(x + i + w), m));
        V::store(e + i, a);
        V::store(e + i + w, b);
        s0 = V::add(s0, a);
        s1 = V::add(s1, b);
      }
      total += hsum(V::add(s0, s1));
    }
    R s = V::zero();
    for (; i + w <= n; i += w) {
      const R a = V::exp(V::sub(V::load(x + i), m));
      V::store(e + i, a);
      s = V::add(s, a);
    }
    if (i < n) {
      const R a = V::exp(V::sub(load_partial(x + i, n - i, -__builtin_inf()), m));  // padding: exp(-inf) = 0
      store_partial(e + i, a, n - i);
      s = V::add(s, a);
    }
    const R r = V::set(static_cast<T>(static_cast<double>(scale) / (total + hsum(s))));
    write(e, y, n, stream, [&](R v) { return V::mul(v, r); });
  }

  static void log_softmax(const T* x, T* y, std::int64_t n, T /*eps*/, bool stream, T* /*scratch*/) {
    if (n <= 0) return;
    const T mx = max_of(x, n);
    const R m = V::set(mx);
    const T s = static_cast<T>(sum(x, n, [&](R v) { return V::exp(V::sub(v, m)); }));
    T l[w] = {};
    l[0] = s;
    V::store(l, V::log(V::load(l)));  // log of the sum, through the ISA's log
    const R lv = V::set(l[0]);  // (x - m) - log s: m + log s would round away x's low digits
    write(x, y, n, stream, [&](R v) { return V::sub(V::sub(v, m), lv); });
  }

  static void layer_norm(const T* x, T* y, std::int64_t n, T eps, bool stream, T* /*scratch*/) {
    if (n <= 0) return;
    // Centered on p = x[0]: x - p is exact for x near p, so the mean of a row far from 0
    // (1e4 + noise in f32) keeps its digits: x - mean = (x - p) - d, d = mean(x - p).
    const R p = V::set(x[0]);
    const R d = V::set(static_cast<T>(sum(x, n, [&](R v) { return V::sub(v, p); }) / static_cast<double>(n)));
    const auto centered = [&](R v) { return V::sub(V::sub(v, p), d); };
    const T var = static_cast<T>(sum(x, n, [&](R v) {
                                   const R c = centered(v);
                                   return V::mul(c, c);
                                 }) /
                                 static_cast<double>(n));
    const R r = V::div(V::set(T(1)), V::sqrt(V::set(var + eps)));
    write(x, y, n, stream, [&](R v) { return V::mul(centered(v), r); });
  }

  static void rms_norm(const T* x, T* y, std::int64_t n, T eps, bool stream, T* /*scratch*/) {
    if (n <= 0) return;
    const T ms = static_cast<T>(sum(x, n, [&](R v) { return V::mul(v, v); }) / static_cast<double>(n));
    const R r = V::div(V::set(T(1)), V::sqrt(V::set(ms + eps)));
    write(x, y, n, stream, [&](R v) { return V::mul(v, r); });
  }
};

/// cross_entropy's row functions (RowKernels::logsumexp and scaled_softmax).
template <class V>
struct EntropyRows {
  using T = typename V::T;
  using R = typename V::R;
  static constexpr int w = V::width;

  /// Elements of a logsumexp block: read from memory once for its max, then again from L1
  /// for its exps (8 KiB of f32, 16 KiB of f64).
  static constexpr std::int64_t lse_block = 2048;

  /// One pass over memory, block by block. The first block: its max, then its exps while it
  /// is in L1. Each later block in one pass: exp(x - m) with m the running max, summed, and
  /// the block's least and largest x - m beside it, so that the exps do not wait for a max
  /// pass over memory first (the max pass then the exps, block by block: 0.38-0.48 ns an
  /// element on one Zen 3 core with the row in L2, 0.33-0.34 at 8192 x 50257 against a read
  /// of the logits). Where the block's x - m left [-86, 8] (a max more than 8 above the
  /// running one, -inf, +inf, a spread over 86) exp_near_max's terms are not e^(x - m): the
  /// block is summed again as before, its max first, the running sum rescaled (one scalar
  /// exp) when the max grows. A NaN makes the sum NaN either way.
  static T logsumexp(const T* x, std::int64_t n, bool far) {
    return far ? logsumexp_from<true>(x, n) : logsumexp_from<false>(x, n);
  }
  template <bool Far>
  static T logsumexp_from(const T* x, std::int64_t n) {
    const T minus_inf = -__builtin_inf();
    if (n <= 0) return minus_inf;
    T mx = minus_inf;
    double total = 0;
    for (std::int64_t i = 0; i < n; i += lse_block) {
      const std::int64_t len = std::min(lse_block, n - i);
      double s = 0;
      if (mx != minus_inf && near_max_sum<Far>(x + i, len, mx, s)) {
        total += s;
        continue;
      }
      const T bm = Rows<V>::max_of(x + i, len);
      if (bm != bm) return bm;  // max_of's NaN (where it keeps one; the sum below catches the others)
      if (bm == minus_inf) {    // a block of -inf adds nothing (exp(-inf - -inf) would be NaN)...
        for (std::int64_t j = i; j < i + len; ++j)
          if (x[j] != x[j]) return x[j];  // ...but a NaN beside them, which max_of may have passed over
        continue;
      }
      if (bm > mx) {
        if (mx != minus_inf) total *= std::exp(static_cast<double>(mx) - static_cast<double>(bm));
        mx = bm;
      }
      const R m = V::set(mx);
      // exp_fast (about 1 ULP a term): a sum of thousands of terms absorbs it, and the exps
      // are this loop's cost (0.32 ns an element against exp's 0.41; the row is in L1)
      total += Rows<V>::sum(x + i, len, [&](R v) { return Math<V>::exp_fast(V::sub(v, m)); });
    }
    if (mx == minus_inf) return minus_inf;  // a row of -inf
    return static_cast<T>(static_cast<double>(mx) + std::log(total));
  }

  /// The lines of the two vectors 4 KiB past x (past the block and the row too: the next
  /// ones follow in memory where the logits are contiguous; a prefetch never faults, and the
  /// address is an integer, since it may lie past the array): for rows read from memory, whose
  /// exps then overlap the loads. Zen 5, 8192 x 50257 f32 (bench/RESULTS.md, "Rows streamed
  /// from their first aligned element"): the forward 36.2-49.6 -> 34.2-35.8 ms against a
  /// 34-35 ms read; a standalone backward loop 71 -> 62 ms against a 60 ms streaming copy; rows
  /// in the caches 1.5-2.5% slower with it, hence only where the rows are far.
  static void prefetch_ahead(const T* x) {
    const std::uintptr_t next = reinterpret_cast<std::uintptr_t>(x) + 4096;
    for (std::uintptr_t b = 0; b < 2 * w * sizeof(T); b += 64) prefetch_line(reinterpret_cast<const void*>(next + b));
  }

  /// Whether every lane of lo (the least x - m seen) and hi (the largest) is in exp_near_max's
  /// [-86, 8] (NaN lanes aside: min and max may drop them; they make the result NaN).
  static bool near(R lo, R hi) {
    T l[w], h[w];
    V::store(l, lo);
    V::store(h, hi);
    bool in = true;
    for (int j = 0; j < w; ++j) in = in && l[j] >= T(-86) && h[j] <= T(8);
    return in;
  }

  /// sum = the sum of exp_near_max(x - m) over n elements (in T over sum_block elements, then
  /// in double, as Rows::sum); whether every x - m was in [-86, 8]. Two vectors in flight,
  /// each with its own sum, min and max.
  template <bool Far>
  static bool near_max_sum(const T* x, std::int64_t n, T m, double& sum) {
    const R mv = V::set(m);
    R lo0 = V::set(__builtin_inf()), lo1 = lo0, hi0 = V::set(-__builtin_inf()), hi1 = hi0;
    double total = 0;
    std::int64_t i = 0;
    while (i + 2 * w <= n) {
      R s0 = V::zero(), s1 = V::zero();
      for (const std::int64_t end = Rows<V>::block_end(i, n); i < end; i += 2 * w) {
        if constexpr (Far) prefetch_ahead(x + i);
        const R d0 = V::sub(V::load(x + i), mv), d1 = V::sub(V::load(x + i + w), mv);
        lo0 = V::min(lo0, d0);
        hi0 = V::max(hi0, d0);
        lo1 = V::min(lo1, d1);
        hi1 = V::max(hi1, d1);
        s0 = V::add(s0, Math<V>::exp_near_max(d0));
        s1 = V::add(s1, Math<V>::exp_near_max(d1));
      }
      total += Rows<V>::hsum(V::add(s0, s1));
    }
    for (; i < n; i += w) {  // the last vector or two, padded with an element of the block
      const R d = V::sub(i + w <= n ? V::load(x + i) : Rows<V>::load_partial(x + i, n - i, x[i]), mv);
      lo0 = V::min(lo0, d);
      hi0 = V::max(hi0, d);
      T b[w];
      V::store(b, Math<V>::exp_near_max(d));
      for (std::int64_t k = 0; k < w; ++k) total += k < n - i ? static_cast<double>(b[k]) : 0.0;
    }
    sum = total;
    return near(V::min(lo0, lo1), V::max(hi0, hi1));
  }

  /// scale · exp(x - shift), shift a row's log-sum-exp (x - shift <= 0 up to its rounding):
  /// block by block with exp_near_max, the block's least and largest x - shift beside it;
  /// a block where they left [-86, 8] (x - shift below -86, -inf, +inf) is written again
  /// with exp_fast (about 1 ULP, as torch's Sleef exp (u10) for its softmax). exp_near_max
  /// adds at most 1.9e-9 |k| (k = round((x - shift) log2 e)) to exp_fast's error: a tenth
  /// of an ULP above 2^-5 of the row's sum, 4 ULPs at e^-86.
  static void scaled_exp(const T* x, T* y, std::int64_t n, T shift, T scale, bool stream) {
    const R s = V::set(shift), k = V::set(scale);
    for (std::int64_t i = 0; i < n; i += lse_block) {
      const std::int64_t len = std::min(lse_block, n - i);
      if (!near_max_write(x + i, y + i, len, s, k, stream))
        Rows<V>::write(x + i, y + i, len, stream, [&](R v) { return V::mul(Math<V>::exp_fast(V::sub(v, s)), k); });
    }
  }

  /// y = k · exp_near_max(x - s) over n elements, two vectors an iteration (each with its
  /// least and largest x - s: one vector an iteration, its min and max chained, took 0.35-0.42
  /// ns an element against 0.29 on a Zen 3 core); whether every x - s was in [-86, 8].
  static bool near_max_write(const T* x, T* y, std::int64_t n, R s, R k, bool stream) {
    R lo0 = V::set(__builtin_inf()), lo1 = lo0, hi0 = V::set(-__builtin_inf()), hi1 = hi0;
    auto at = [&](const T* p, R& lo, R& hi) {
      const R d = V::sub(V::load(p), s);
      lo = V::min(lo, d);
      hi = V::max(hi, d);
      return V::mul(Math<V>::exp_near_max(d), k);
    };
    std::int64_t i = 0;
    if (const std::int64_t head = Rows<V>::stream_head(y, n, stream); head >= 0) {
      if (head > 0) {  // up to y's alignment, padded with an element of the block
        T b[w];
        V::store(b, Rows<V>::load_partial(x, head, x[0]));
        Rows<V>::store_partial(y, at(b, lo0, hi0), head);
        i = head;
      }
      // Streamed (a row set far larger than the caches): x's lines fetched ahead.
      for (; i + 2 * w <= n; i += 2 * w) {
        prefetch_ahead(x + i);
        V::stream(y + i, at(x + i, lo0, hi0));
        V::stream(y + i + w, at(x + i + w, lo1, hi1));
      }
    } else {
      for (; i + 2 * w <= n; i += 2 * w) {
        V::store(y + i, at(x + i, lo0, hi0));
        V::store(y + i + w, at(x + i + w, lo1, hi1));
      }
    }
    for (; i < n; i += w) {  // the last vector or two, padded with an element of the block
      const R v = i + w <= n ? V::load(x + i) : Rows<V>::load_partial(x + i, n - i, x[i]);
      T b[w];
      V::store(b, v);
      const R e = at(b, lo0, hi0);
      Rows<V>::store_partial(y + i, e, std::min<std::int64_t>(w, n - i));
    }
    return near(V::min(lo0, lo1), V::max(hi0, hi1));
  }

  static void scaled_softmax(const T* x, T* y, std::int64_t n, T scale, bool stream, T* scratch) {
    Rows<V>::scaled_softmax(x, y, n, scale, stream, scratch);
  }
};

/// The row kernels for the ISA traits V.
template <class V>
RowKernels<typename V::T> make_row_kernels() {
  RowKernels<typename V::T> k;
  k.softmax = &Rows<V>::softmax;
  k.log_softmax = &Rows<V>::log_softmax;
  k.layer_norm = &Rows<V>::layer_norm;
  k.rms_norm = &Rows<V>::rms_norm;
  k.fence = &V::fence;
  k.logsumexp = &EntropyRows<V>::logsumexp;
  k.scaled_softmax = &EntropyRows<V>::scaled_softmax;
  k.scaled_exp = &EntropyRows<V>::scaled_exp;
  return k;
}

}  // namespace einexpr::cpu::vec
