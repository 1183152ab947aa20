#pragma once
// How each reduction folds values: its identity, how two partial results combine, a
// vectorized fold of a strided run (omp simd), a fold of one element into each of a row of
// accumulators, and the final value (mean divides; var divides by n - correction). Shared
// by the reduce kernel's two loop shapes. Sums are as accurate as numpy's or more: f32 sums
// (and logsumexp's sum of exponentials, var's moments) accumulate in double, f64 sums of a
// run in blocks joined with compensation (Fold::blocked_sum).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "einexpr/codegen/plan.hpp"
#include "element.hpp"
#include "vec_math.hpp"

namespace einexpr::cpu {

/// Fold<R, C>: reduction R (sum, mean, max, min, prod; any/all are max/min on 0/1) over
/// compute type C, accumulating in A (uint64 for integer sums and products: they wrap).
template <Reduction R, class C>
struct Fold {
  using Compute = C;
  static constexpr bool additive = R == Reduction::sum || R == Reduction::mean;
  using A = std::conditional_t<additive || R == Reduction::prod, accumulate_t<C>, C>;

  static A identity() {
    using L = std::numeric_limits<C>;
    if constexpr (additive) return A(0);
    else if constexpr (R == Reduction::prod) return A(1);
    else if constexpr (R == Reduction::max) return L::has_infinity ? -L::infinity() : L::lowest();
    else return L::has_infinity ? L::infinity() : L::max();
  }
  static A combine(A a, A b) {
    if constexpr (additive) return a + b;
    else if constexpr (R == Reduction::prod) return a * b;
    else if constexpr (R == Reduction::max) return (b > a || is_nan(b)) ? b : a;  // NaN wins
    else return (b < a || is_nan(b)) ? b : a;
  }
  /// The fold of p[0], p[stride], ..., p[(n-1)*stride].
  static A row(const C* p, std::int64_t n, std::int64_t stride) {
    A acc = identity();
    if constexpr (additive && std::is_same_v<C, double>) {
      return blocked_sum(p, n, stride);
    } else if constexpr (additive) {
      if (stride == 1) return unit_sum(p, n);
#pragma omp simd reduction(+ : acc)
      for (std::int64_t i = 0; i < n; ++i) acc += A(p[i * stride]);
    } else if constexpr (R == Reduction::prod) {
#pragma omp simd reduction(* : acc)
      for (std::int64_t i = 0; i < n; ++i) acc *= A(p[i * stride]);
    } else {
      int nan = 0;
      if constexpr (R == Reduction::max) {
#pragma omp simd reduction(max : acc) reduction(| : nan)
        for (std::int64_t i = 0; i < n; ++i) {
          const C x = p[i * stride];
          acc = acc > x ? acc : x;
          nan |= is_nan(x);
        }
      } else {
#pragma omp simd reduction(min : acc) reduction(| : nan)
        for (std::int64_t i = 0; i < n; ++i) {
          const C x = p[i * stride];
          acc = acc < x ? acc : x;
          nan |= is_nan(x);
        }
      }
      if constexpr (std::is_floating_point_v<C>)
        if (nan) return std::numeric_limits<C>::quiet_NaN();
    }
    return acc;
  }
  /// acc[j] = combine(acc[j], p[j * stride]) for j < n.
  static void accumulate(A* acc, const C* p, std::int64_t n, std::int64_t stride) {
    if (stride == 1) {  // the usual case, as a plain vector loop (a runtime stride gathers)
#pragma omp simd
      for (std::int64_t j = 0; j < n; ++j) acc[j] = combine(acc[j], A(p[j]));
      return;
    }
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) acc[j] = combine(acc[j], A(p[j * stride]));
  }
  /// f32 sums over rows (reduce_cpu's accumulator rows): a block of up to block_rows rows
  /// adds in a float row (the loop a float accumulator runs at memory speed), then the block's
  /// row into the double accumulators: a float adds at most block_rows - 1 values, so the
  /// error stays a block's (double accumulators for every row ran at 0.6 of the speed here).
  static constexpr bool float_blocks = additive && std::is_same_v<C, float>;
  static constexpr std::int64_t block_rows = 8;
  /// part[j] = p[j * stride] (first) or part[j] += p[j * stride].
  static void block_add(float* part, const C* p, std::int64_t n, std::int64_t stride, bool first) {
    if (first) {
      for (std::int64_t j = 0; j < n; ++j) part[j] = p[j * stride];
    } else if (stride == 1) {
#pragma omp simd
      for (std::int64_t j = 0; j < n; ++j) part[j] += p[j];
    } else {
#pragma omp simd
      for (std::int64_t j = 0; j < n; ++j) part[j] += p[j * stride];
    }
  }
  static void block_flush(A* acc, const float* part, std::int64_t n) {
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) acc[j] += A(part[j]);
  }
  static C finish(A acc, std::int64_t count, std::int64_t /*correction*/) {
    if constexpr (R == Reduction::mean && std::is_floating_point_v<A>) return C(acc / A(count));  // 0 / 0 = NaN
    else if constexpr (R == Reduction::mean) return C(acc) / C(count);
    else return C(acc);
  }

  /// A double sum a block of sum_block at a time: each block by lanes (omp simd: each lane
  /// adds sum_block / lanes values), the blocks' sums into a running total with Neumaier's
  /// compensation, so the error is a block's, not the run's: as numpy's pairwise sum, whose
  /// blocks are 128 values over 8 accumulators.
  static A blocked_sum(const C* p, std::int64_t n, std::int64_t stride) {
    double total = 0, compensation = 0;
    for (std::int64_t b = 0; b < n; b += sum_block) {
      const std::int64_t m = std::min(sum_block, n - b);
      const C* q = p + b * stride;
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (std::int64_t i = 0; i < m; ++i) s += q[i * stride];
      const double t = total + s;
      compensation += std::abs(total) >= std::abs(s) ? (total - t) + s : (s - t) + total;
      total = t;
    }
    return total + compensation;
  }
  // (blocked_sum's lanes: sum_block / lanes adds each, one chain per vector; a block of 256
  // doubles is 32 adds deep on AVX-512, fast enough for memory.)
  static constexpr std::int64_t sum_block = 256;

  /// p[0] + ... + p[n-1] in 16 independent partial sums (a vector's lanes, in several
  /// registers): the adds do not wait on each other, so a long run is read at memory speed
  /// (one accumulator is an add's latency per vector: a quarter of the bandwidth here).
  static A unit_sum(const C* p, std::int64_t n) {
    constexpr int k = 16;
    A part[k] = {};
    std::int64_t i = 0;
    for (; i + k <= n; i += k) {
#pragma omp simd
      for (int j = 0; j < k; ++j) part[j] += A(p[i + j]);
    }
    A acc = A(0);
    for (; i < n; ++i) acc += A(p[i]);
    for (int j = 0; j < k; ++j) acc += part[j];
    return acc;
  }
};

/// Elements per block of a var row: small enough to stay in L1 for the second pass.
inline constexpr std::int64_t moments_block = 512;

/// var (Sqrt: std) over a float type C, in double: the count, mean and sum of squared
/// deviations (m2) of the elements folded so far. A run is folded a block at a time, each
/// block in two passes (its mean from a sum, then the squares of the deviations from it),
/// and blocks combine by Chan, Golub and LeVeque's formula; single elements join by
/// Welford's update. The result is m2 / max(0, n - correction): NaN for n <= correction.
template <class C, bool Sqrt>
struct MomentsFold {
  using Compute = C;
  static constexpr bool float_blocks = false;  // one row at a time (Welford)
  struct A {
    double mean = 0, m2 = 0;
    std::int64_t n = 0;
  };
  static A identity() { return {}; }
  static A combine(A a, A b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const std::int64_t n = a.n + b.n;
    const double delta = b.mean - a.mean, share = double(b.n) / double(n);
    return {a.mean + delta * share, a.m2 + b.m2 + delta * delta * double(a.n) * share, n};
  }
  static A row(const C* p, std::int64_t n, std::int64_t stride) {
    A acc;
    for (std::int64_t b = 0; b < n; b += moments_block) {
      const std::int64_t m = std::min(moments_block, n - b);
      const C* q = p + b * stride;
      double sum = 0, m2 = 0;
#pragma omp simd reduction(+ : sum)
      for (std::int64_t i = 0; i < m; ++i) sum += double(q[i * stride]);
      const double mean = sum / double(m);
#pragma omp simd reduction(+ : m2)
      for (std::int64_t i = 0; i < m; ++i) m2 += (double(q[i * stride]) - mean) * (double(q[i * stride]) - mean);
      acc = combine(acc, {mean, m2, m});
    }
    return acc;
  }
  static void accumulate(A* acc, const C* p, std::int64_t n, std::int64_t stride) {
    for (std::int64_t j = 0; j < n; ++j) {
      A& a = acc[j];
      const double x = p[j * stride], d = x - a.mean;
      a.n += 1;
      a.mean += d / double(a.n);
      a.m2 += d * (x - a.mean);
    }
  }
  static C finish(A a, std::int64_t /*count*/, std::int64_t correction) {
    const double var = a.m2 / double(std::max<std::int64_t>(0, a.n - correction));
    if constexpr (Sqrt) return C(std::sqrt(var));
    else return C(var);
  }
};

/// logsumexp over a float type C: the largest element m and the sum of exp(x - m). A run
/// is folded a block at a time (its maximum, then vec_math's exp of the differences);
/// single elements join online. NaN wins; where m is +inf or -inf (all -inf, or no
/// elements) the result is m.
template <class C>
struct LogSumExpFold {
  using Compute = C;
  static constexpr bool float_blocks = false;
  struct A {  // the sum in double (rounded once, in finish), as sums are (element.hpp)
    C max = -std::numeric_limits<C>::infinity();
    double sum = 0;
  };
  static A identity() { return {}; }
  static A combine(A a, A b) {
    if (is_nan(a.max) || is_nan(b.max)) return {std::numeric_limits<C>::quiet_NaN(), 0};
    const C m = std::max(a.max, b.max);
    if (std::isinf(m)) return {m, 1};
    return {m, a.sum * std::exp(double(a.max) - double(m)) + b.sum * std::exp(double(b.max) - double(m))};
  }
  static A row(const C* p, std::int64_t n, std::int64_t stride) {
    const auto& table = vec::best_table();
    vec::Kernel<C> exp = nullptr;
    if constexpr (std::is_same_v<C, float>) exp = table.f32.exp;
    else exp = table.f64.exp;
    A acc;
    C buf[moments_block];
    for (std::int64_t b = 0; b < n; b += moments_block) {
      const std::int64_t m = std::min(moments_block, n - b);
      const C* q = p + b * stride;
      C top = -std::numeric_limits<C>::infinity();
      int nan = 0;
#pragma omp simd reduction(max : top) reduction(| : nan)
      for (std::int64_t i = 0; i < m; ++i) {
        top = top > q[i * stride] ? top : q[i * stride];
        nan |= is_nan(q[i * stride]);
      }
      if (nan || std::isinf(top)) {
        acc = combine(acc, {nan ? std::numeric_limits<C>::quiet_NaN() : top, 1});
        continue;
      }
      for (std::int64_t i = 0; i < m; ++i) buf[i] = q[i * stride] - top;
      exp(buf, buf, m, false);
      double sum = 0;
#pragma omp simd reduction(+ : sum)
      for (std::int64_t i = 0; i < m; ++i) sum += buf[i];
      acc = combine(acc, {top, sum});
    }
    return acc;
  }
  static void accumulate(A* acc, const C* p, std::int64_t n, std::int64_t stride) {
    for (std::int64_t j = 0; j < n; ++j) {
      A& a = acc[j];
      const C x = p[j * stride];
      if (is_nan(x) || is_nan(a.max)) {
        a.max = std::numeric_limits<C>::quiet_NaN();
      } else if (x > a.max) {
        a.sum = (std::isinf(a.max) ? 0.0 : a.sum * std::exp(double(a.max) - double(x))) + 1.0;
        a.max = x;
      } else if (!std::isinf(x)) {
        a.sum += std::exp(double(x) - double(a.max));
      }
    }
  }
  static C finish(A a, std::int64_t /*count*/, std::int64_t /*correction*/) {
    return std::isfinite(a.max) ? C(double(a.max) + std::log(a.sum)) : a.max;
  }
};

template <class C>
struct Fold<Reduction::var, C> : MomentsFold<C, false> {};
template <class C>
struct Fold<Reduction::std, C> : MomentsFold<C, true> {};
template <class C>
struct Fold<Reduction::logsumexp, C> : LogSumExpFold<C> {};

/// Elements converted per block when the storage type is not the compute type.
inline constexpr std::int64_t fold_block = 512;

/// Fold of n elements of storage type S at p with `stride`.
template <class F, class S>
typename F::A fold_run(const S* p, std::int64_t n, std::int64_t stride) {
  using C = typename F::Compute;
  if constexpr (std::is_same_v<S, C>) {
    return F::row(p, n, stride);
  } else {
    typename F::A acc = F::identity();
    C buf[fold_block];
    for (std::int64_t b = 0; b < n; b += fold_block) {
      const std::int64_t m = std::min(fold_block, n - b);
      for (std::int64_t i = 0; i < m; ++i) buf[i] = Element<S>::load(p[(b + i) * stride]);
      acc = F::combine(acc, F::row(buf, m, 1));
    }
    return acc;
  }
}

/// acc[j] = combine(acc[j], p[j * stride]) for j < n, p of storage type S.
template <class F, class S>
void accumulate_run(typename F::A* acc, const S* p, std::int64_t n, std::int64_t stride) {
  using C = typename F::Compute;
  if constexpr (std::is_same_v<S, C>) {
    F::accumulate(acc, p, n, stride);
  } else {
    C buf[fold_block];
    for (std::int64_t b = 0; b < n; b += fold_block) {
      const std::int64_t m = std::min(fold_block, n - b);
      for (std::int64_t i = 0; i < m; ++i) buf[i] = Element<S>::load(p[(b + i) * stride]);
      F::accumulate(acc + b, buf, m, 1);
    }
  }
}

}  // namespace einexpr::cpu
