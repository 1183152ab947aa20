#pragma once
// How each reduction folds values: its identity, how two partial results combine, a
// vectorized fold of a strided run (omp simd), and the final value (mean divides). Shared
// by the reduce kernel's two loop shapes.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "einexpr/codegen/plan.hpp"
#include "element.hpp"

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
    if constexpr (additive) {
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
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) acc[j] = combine(acc[j], A(p[j * stride]));
  }
  static C finish(A acc, std::int64_t count) {
    if constexpr (R == Reduction::mean) return C(acc) / C(count);  // 0 / 0 = NaN
    else return C(acc);
  }
};

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
    for (std::int64_t j = 0; j < n; ++j) acc[j] = F::combine(acc[j], typename F::A(Element<S>::load(p[j * stride])));
  }
}

}  // namespace einexpr::cpu
