#pragma once
// Element types of the CPU kernels: how each dtype is stored, the type it is computed in
// (plan.hpp's arithmetic contract: f64 in double, f32 and the reduced floats in float,
// integers in int64) and the conversions between the two.
#include <cstdint>
#include <type_traits>

#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/dtype_visit.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::cpu {

/// Element<S>: `Compute`, `load(S) -> Compute` and `store(Compute) -> S`.
template <class S>
struct Element;
template <>
struct Element<double> {
  using Compute = double;
  static double load(double x) { return x; }
  static double store(double x) { return x; }
};
template <>
struct Element<float> {
  using Compute = float;
  static float load(float x) { return x; }
  static float store(float x) { return x; }
};
template <>
struct Element<half_t> {
  using Compute = float;
  static float load(half_t x) { return f16_to_f32(x.bits); }
  static half_t store(float x) { return half_t{f32_to_f16(x)}; }
};
template <>
struct Element<bfloat16_t> {
  using Compute = float;
  static float load(bfloat16_t x) { return bf16_to_f32(x.bits); }
  static bfloat16_t store(float x) { return bfloat16_t{f32_to_bf16(x)}; }
};
template <>
struct Element<float8_e4m3_t> {
  using Compute = float;
  static float load(float8_e4m3_t x) { return e4m3_to_f32(x.bits); }
  static float8_e4m3_t store(float x) { return float8_e4m3_t{f32_to_e4m3(x)}; }
};
template <>
struct Element<float8_e5m2_t> {
  using Compute = float;
  static float load(float8_e5m2_t x) { return e5m2_to_f32(x.bits); }
  static float8_e5m2_t store(float x) { return float8_e5m2_t{f32_to_e5m2(x)}; }
};
template <>
struct Element<std::int64_t> {
  using Compute = std::int64_t;
  static std::int64_t load(std::int64_t x) { return x; }
  static std::int64_t store(std::int64_t x) { return x; }
};
template <>
struct Element<std::int32_t> {
  using Compute = std::int64_t;
  static std::int64_t load(std::int32_t x) { return x; }
  static std::int32_t store(std::int64_t x) { return static_cast<std::int32_t>(x); }  // wraps
};
template <>
struct Element<bool_t> {
  using Compute = std::uint8_t;  // 0 or 1
  static std::uint8_t load(bool_t x) { return x.bits != 0; }
  static bool_t store(std::uint8_t x) { return bool_t{static_cast<std::uint8_t>(x != 0)}; }
};

template <class S>
using compute_t = typename Element<S>::Compute;

/// What sums and products accumulate in. Integers wrap like numpy: uint64 (no signed
/// overflow). f32 (and the reduced floats, which compute in f32) accumulate in double, so a
/// sum's rounding error stays near f32's last bit however many values it folds (numpy's
/// pairwise f32 sum gains a few bits of error; a float accumulator gains one per ~2^k adds);
/// the result is rounded to f32 once. f64 stays double (reduce_fold.hpp blocks its sums).
template <class C>
using accumulate_t = std::conditional_t<std::is_same_v<C, std::int64_t>, std::uint64_t,
                                        std::conditional_t<std::is_same_v<C, float>, double, C>>;

/// NaN test that is false for integer compute types.
template <class C>
bool is_nan([[maybe_unused]] C x) {
  if constexpr (std::is_floating_point_v<C>) return x != x;
  else return false;
}

/// The DType in which a kernel computes: f64, f32, i64, or bool.
inline DType compute_dtype(DType dtype) {
  if (dtype == DType::f64 || dtype == DType::boolean) return dtype;
  return is_integer(dtype) ? DType::i64 : DType::f32;
}

}  // namespace einexpr::cpu
