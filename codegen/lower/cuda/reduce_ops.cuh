#pragma once
// Private, CUDA builds only (nvcc): the reductions of reduce_cuda.cu as host-and-device code,
// so that CPU tests (tests/cuda/host) run the very folds a kernel runs, in its order, on the
// host. Each Op has an accumulator type Acc, identity() and combine(); var, std and logsumexp
// finish() theirs. Sums are wide: f32 (and the reduced floats, which compute in f32) add in
// double and round once at the end, so their error stays near f32's last bit however many
// values a thread folds (numpy's pairwise f32 sum gains a few bits; a float accumulator one
// per doubling); var / std fold (count, mean, m2) and logsumexp its sum of exponentials in
// double too.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "../../../runtime/cuda/element.cuh"

namespace einexpr::gpu {

/// What a sum or product of C accumulates in: double for float, uint64 for int64 (they wrap
/// like numpy), C otherwise.
template <class C>
using wide_t = std::conditional_t<std::is_same_v<C, float>, double,
                                  std::conditional_t<std::is_same_v<C, std::int64_t>, std::uint64_t, C>>;

template <class T>
EINEXPR_HD bool nan_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return is_nan(x);
  else return false;
}

template <class C>
struct SumOp {
  using Acc = wide_t<C>;
  static EINEXPR_HD Acc identity() { return Acc(0); }
  static EINEXPR_HD Acc combine(Acc a, Acc b) { return a + b; }
};
template <class C>
struct ProdOp {
  using Acc = wide_t<C>;
  static EINEXPR_HD Acc identity() { return Acc(1); }
  static EINEXPR_HD Acc combine(Acc a, Acc b) { return a * b; }
};
template <class C>
struct MaxOp {
  using Acc = C;
  static EINEXPR_HD Acc identity() {
    if constexpr (std::is_floating_point_v<C>) return -INFINITY;
    else if constexpr (std::is_same_v<C, std::int64_t>) return INT64_MIN;
    else return 0;
  }
  static EINEXPR_HD Acc combine(Acc a, Acc b) { return (a > b || nan_of(a)) ? a : b; }
};
template <class C>
struct MinOp {
  using Acc = C;
  static EINEXPR_HD Acc identity() {
    if constexpr (std::is_floating_point_v<C>) return INFINITY;
    else if constexpr (std::is_same_v<C, std::int64_t>) return INT64_MAX;
    else return 1;
  }
  static EINEXPR_HD Acc combine(Acc a, Acc b) { return (a < b || nan_of(a)) ? a : b; }
};
template <class C>
struct AnyOp {
  using Acc = std::uint8_t;
  static EINEXPR_HD Acc identity() { return 0; }
  static EINEXPR_HD Acc combine(Acc a, Acc b) { return a | b; }
};
template <class C>
struct AllOp {
  using Acc = std::uint8_t;
  static EINEXPR_HD Acc identity() { return 1; }
  static EINEXPR_HD Acc combine(Acc a, Acc b) { return a & b; }
};

// var / std: the count, mean and sum of squared deviations (m2) in double, combined by
// Chan, Golub and LeVeque's formula (an element is a count of 1); var = m2 / max(0, n -
// correction), rounded to C once.
struct Moments {
  double mean = 0, m2 = 0;
  std::int64_t n = 0;
  Moments() = default;
  EINEXPR_HD explicit Moments(double x) : mean(x), n(1) {}
  EINEXPR_HD Moments(double mean_, double m2_, std::int64_t n_) : mean(mean_), m2(m2_), n(n_) {}
};
template <class C, bool Sqrt>
struct MomentsOp {
  using Acc = Moments;
  static EINEXPR_HD Acc identity() { return Acc(); }
  static EINEXPR_HD Acc combine(Acc a, Acc b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const std::int64_t n = a.n + b.n;
    const double delta = b.mean - a.mean, share = double(b.n) / double(n);
    return Acc(a.mean + delta * share, a.m2 + b.m2 + delta * delta * double(a.n) * share, n);
  }
  static EINEXPR_HD C finish(Acc a, std::int64_t correction) {
    const double var = a.m2 / double(a.n > correction ? a.n - correction : 0);  // 0 / 0 = NaN
    return C(Sqrt ? sqrt(var) : var);
  }
};

// logsumexp: the largest element m and the sum of exp(x - m) (in double); NaN wins, and
// where m is +-inf (some +inf; all -inf or none) the result is m.
template <class C>
struct MaxSum {
  C max = -C(INFINITY);
  double sum = 0;
  MaxSum() = default;
  EINEXPR_HD explicit MaxSum(C x) : max(x), sum(1) {}
  EINEXPR_HD MaxSum(C max_, double sum_) : max(max_), sum(sum_) {}
};
template <class C>
struct LogSumExpOp {
  using Acc = MaxSum<C>;
  static EINEXPR_HD Acc identity() { return Acc(); }
  static EINEXPR_HD Acc combine(Acc a, Acc b) {
    if (is_nan(a.max) || is_nan(b.max)) return Acc(C(NAN), 0);
    const C m = a.max > b.max ? a.max : b.max;
    if (isinf(m)) return Acc(m, 1);
    return Acc(m, a.sum * exp(double(a.max) - double(m)) + b.sum * exp(double(b.max) - double(m)));
  }
  static EINEXPR_HD C finish(Acc a, std::int64_t) { return isfinite(a.max) ? C(double(a.max) + log(a.sum)) : a.max; }
};

/// One lane's fold in reduce_inner: elements begin + lane, begin + lane + 32, ... below end,
/// four loads in flight (load(r) gives element r as Acc).
template <class Op, class Load>
EINEXPR_HD typename Op::Acc lane_fold(Load load, std::int64_t begin, std::int64_t end, int lane) {
  typename Op::Acc acc = Op::identity();
  std::int64_t r = begin + lane;
  for (; r + 96 < end; r += 128)
    acc = Op::combine(acc, Op::combine(Op::combine(load(r), load(r + 32)), Op::combine(load(r + 64), load(r + 96))));
  for (; r < end; r += 32) acc = Op::combine(acc, load(r));
  return acc;
}

/// One thread's fold in reduce_outer: elements begin, begin + 1, ... below end, four at a time.
template <class Op, class Load>
EINEXPR_HD typename Op::Acc thread_fold(Load load, std::int64_t begin, std::int64_t end) {
  typename Op::Acc acc = Op::identity();
  std::int64_t r = begin;
  for (; r + 3 < end; r += 4)
    acc = Op::combine(acc, Op::combine(Op::combine(load(r), load(r + 1)), Op::combine(load(r + 2), load(r + 3))));
  for (; r < end; ++r) acc = Op::combine(acc, load(r));
  return acc;
}

/// Ops whose accumulator is finished by Op::finish (var, std, logsumexp).
template <class Op, class = void>
struct Finishes : std::false_type {};
template <class Op>
struct Finishes<Op, std::void_t<decltype(&Op::finish)>> : std::true_type {};

/// The value an output gets from its accumulator: finished (var, std, logsumexp), or divided
/// by `count` for a mean in the accumulator's type, then rounded to C once.
template <class Op, class Acc, class C>
EINEXPR_HD C finish_value(Acc acc, bool mean, std::int64_t count, std::int64_t correction) {
  if constexpr (Finishes<Op>::value) {
    return Op::finish(acc, correction);
  } else if constexpr (std::is_floating_point_v<C>) {
    return static_cast<C>(mean ? acc / static_cast<Acc>(count) : acc);
  } else {
    return static_cast<C>(acc);
  }
}

}  // namespace einexpr::gpu
