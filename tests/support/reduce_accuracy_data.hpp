#pragma once
// The inputs of tests/lib/reduce_accuracy.py, made bit for bit in C++ (its splitmix64, top
// 53 bits, five distributions rounded to f32 once), its committed cases with numpy's errors
// (reduce_accuracy.inc), and exact references in long double with Neumaier's compensation.
// Used by tests/lib/test_reduce_accuracy.cpp (the CPU) and tests/cuda/host (the GPU's folds,
// run on the host).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace accuracy {

struct Case {
  const char* name;
  const char* dist;
  const char* shape;  // flat, rows, strided, norm
  const char* op;     // sum, mean, var, logsumexp, dot; softmax, log_softmax, layer_norm, rms_norm
  std::uint64_t seed;
  double numpy_error;
};

inline const Case cases[] = {
#include "../lib/reduce_accuracy.inc"
};

inline constexpr std::int64_t N = 4 * 1024 * 1024;

/// reduce_accuracy.py's splitmix: value i is mix(seed + (i + 1)·golden), top 53 bits.
inline double uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  return static_cast<double>(z >> 11) * 0x1p-53;
}

inline std::vector<float> make(const std::string& dist, std::int64_t n, std::uint64_t seed) {
  // the distribution decided once, not per value (a string compare per value was half the
  // test's time in the Debug sanitizer build)
  enum class Dist { normal, uniform, symmetric, offset, heavy };
  const Dist d = dist == "normal"      ? Dist::normal
                 : dist == "uniform"   ? Dist::uniform
                 : dist == "symmetric" ? Dist::symmetric
                 : dist == "offset"    ? Dist::offset
                                       : Dist::heavy;
  std::vector<float> v(static_cast<std::size_t>(n));
  float* out = v.data();
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::uint64_t>(i);
    double x = 0;
    if (d == Dist::normal) {
      x = uniform(seed, 4 * k) + uniform(seed, 4 * k + 1) + uniform(seed, 4 * k + 2) + uniform(seed, 4 * k + 3) - 2.0;
    } else {
      const double u = uniform(seed, k);
      switch (d) {
        case Dist::uniform: x = u; break;
        case Dist::symmetric: x = 2.0 * u - 1.0; break;
        case Dist::offset: x = 1000.0 + (2.0 * u - 1.0); break;
        default: x = 1.0 / (u + 1e-3) - 1.0; break;  // heavy
      }
    }
    out[i] = static_cast<float>(x);
  }
  return v;
}

/// Neumaier's compensated sum in long double: the exact value to far below f32's precision.
struct ExactSum {
  long double sum = 0, c = 0;
  void add(long double x) {
    const long double t = sum + x;
    c += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  long double value() const { return sum + c; }
};

/// The exact op (sum, mean, var with correction 1, logsumexp) over `count` values at p[0],
/// p[stride], ...
inline long double exact(const std::string& op, const float* p, std::int64_t count, std::int64_t stride) {
  ExactSum s;
  if (op == "logsumexp") {
    float m = -INFINITY;
    for (std::int64_t i = 0; i < count; ++i) m = std::max(m, p[i * stride]);
    for (std::int64_t i = 0; i < count; ++i) s.add(std::exp(static_cast<long double>(p[i * stride]) - m));
    return m + std::log(s.value());
  }
  for (std::int64_t i = 0; i < count; ++i) s.add(p[i * stride]);
  if (op == "sum") return s.value();
  const long double mean = s.value() / count;
  if (op == "mean") return mean;
  ExactSum d;
  for (std::int64_t i = 0; i < count; ++i) {
    const long double e = p[i * stride] - mean;
    d.add(e * e);
  }
  return d.value() / (count - 1);
}

inline double relative(double got, long double want) {
  return static_cast<double>(std::fabs(got - want) / std::fabs(want));
}

}  // namespace accuracy
