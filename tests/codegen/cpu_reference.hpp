#pragma once
// Naive references for the CPU lowering tests: logical index helpers, tolerances by dtype,
// and comparisons of a result tensor with a reference computed in f64 (floats, with the
// magnitude of the terms each element sums) or in wrapping int64 (integers, exactly).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "einexpr/runtime/tensor.hpp"

namespace einexpr::test {

/// Relative tolerance of a float dtype, against the magnitude of the summed terms.
inline double tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64: return 1e-12;
    case DType::f32: return 1e-5;
    case DType::f16: return 1e-3;
    case DType::bf16: return 1e-2;
    case DType::f8_e4m3: return 0.07;
    case DType::f8_e5m2: return 0.13;
    default: return 0.0;
  }
}

inline std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

inline std::int64_t ravel(const std::vector<std::int64_t>& index, const Shape& shape) {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

/// Integer arithmetic that wraps like numpy's int64.
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}
/// An int64 result as the dtype stores it (i32 keeps the low 32 bits).
inline std::int64_t as_dtype(std::int64_t v, DType dtype) {
  return dtype == DType::i32 ? static_cast<std::int32_t>(v) : v;
}

/// A float reference: each element's value and the magnitude its error is measured against.
struct Expected {
  std::vector<double> value;
  std::vector<double> magnitude;
};

/// got == want within tolerance(dtype) * scale * magnitude (+ the dtype's smallest
/// subnormal); NaN matches NaN. Reports the
/// first few mismatches.
inline void check_close(const Tensor& got, const Expected& want, double scale = 1.0) {
  REQUIRE(static_cast<std::size_t>(got.numel()) == want.value.size());
  const std::vector<double> v = got.to_vector<double>();
  const double tol = tolerance(got.dtype()) * scale;
  const double floor = finfo(got.dtype()).smallest_subnormal;  // subnormal results round absolutely
  int bad = 0;
  for (std::size_t i = 0; i < v.size() && bad < 5; ++i) {
    const double w = want.value[i];
    const bool ok = v[i] == w || (std::isnan(v[i]) && std::isnan(w)) ||
                    std::abs(v[i] - w) <= tol * want.magnitude[i] + floor;
    if (!ok) {
      ++bad;
      INFO("element " << i << ": got " << v[i] << ", want " << w << " (tolerance " << tol * want.magnitude[i] << ")");
      CHECK(ok);
    }
  }
  CHECK(bad == 0);
}

/// Integers: exactly equal.
inline void check_exact(const Tensor& got, const std::vector<std::int64_t>& want) {
  REQUIRE(static_cast<std::size_t>(got.numel()) == want.size());
  const std::vector<std::int64_t> v = got.to_vector<std::int64_t>();
  int bad = 0;
  for (std::size_t i = 0; i < v.size() && bad < 5; ++i) {
    if (v[i] != want[i]) {
      ++bad;
      INFO("element " << i << ": got " << v[i] << ", want " << want[i]);
      CHECK(v[i] == want[i]);
    }
  }
  CHECK(bad == 0);
}

inline const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> d = {DType::f32, DType::f64, DType::bf16, DType::f16};
  return d;
}
inline const std::vector<DType>& numeric_dtypes() {
  static const std::vector<DType> d = {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i64, DType::i32};
  return d;
}

}  // namespace einexpr::test
