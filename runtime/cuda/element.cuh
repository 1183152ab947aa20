#pragma once
// Private, CUDA builds only (nvcc): elements on the GPU. Everything here is host-and-device
// code, so CPU tests check it bit for bit against runtime/convert.cpp.
//
//   encode / decode       the reduced float formats, exactly as convert.cpp (one rounding
//                         from double, to nearest even; e4m3 saturates at +-448 and keeps
//                         NaN; f16, bf16 and e5m2 overflow to inf)
//   convert_element       one element of any dtype to any dtype, as einexpr::convert
//   Elem<S>               plan.hpp's arithmetic contract: the type a kernel computes in
//                         (double for f64; float for f32, f16, bf16, fp8; int64 for integers;
//                         0/1 for bool), load() from storage and store() back (round to
//                         nearest even; i32 wraps like numpy)
//   (visit_dtype, from a DType to its storage type, is einexpr/runtime/dtype_visit.hpp)
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/dtype_visit.hpp"
#include "einexpr/runtime/error.hpp"

#define EINEXPR_HD __host__ __device__ __forceinline__

namespace einexpr::gpu {

// ---- bit casts (memcpy: well defined on both sides, one move after optimization) ----
EINEXPR_HD std::uint64_t bits_of(double x) {
  std::uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}
EINEXPR_HD double double_of(std::uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}
EINEXPR_HD std::uint32_t bits_of(float x) {
  std::uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}
EINEXPR_HD float float_of(std::uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}
EINEXPR_HD bool is_nan(double x) { return (bits_of(x) & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull; }
EINEXPR_HD bool is_nan(float x) { return (bits_of(x) & 0x7FFFFFFFu) > 0x7F800000u; }

// ---- the small float formats ----
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  bool ieee;  // all-ones exponent is inf/nan (f16, bf16, e5m2); false: e4m3fn
};
EINEXPR_HD constexpr FloatFormat f16_format() { return {5, 10, true}; }
EINEXPR_HD constexpr FloatFormat bf16_format() { return {8, 7, true}; }
EINEXPR_HD constexpr FloatFormat e4m3_format() { return {4, 3, false}; }
EINEXPR_HD constexpr FloatFormat e5m2_format() { return {5, 2, true}; }

/// m / 2^shift rounded to the nearest integer, ties to even.
EINEXPR_HD std::uint64_t round_shift(std::uint64_t m, int shift) {
  if (shift <= 0) return m << -shift;
  if (shift > 63) return 0;
  const std::uint64_t q = m >> shift;
  const std::uint64_t r = m & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  return (r > half || (r == half && (q & 1))) ? q + 1 : q;
}

/// `x` in format f (convert.cpp's encode): one rounding, to nearest even.
EINEXPR_HD std::uint32_t encode(double x, FloatFormat f) {
  const int E = f.exponent_bits, M = f.mantissa_bits;
  const std::uint64_t bits = bits_of(x);
  const std::uint32_t sign = (bits >> 63) ? (1u << (E + M)) : 0u;
  const std::uint32_t exp_all = (1u << E) - 1;
  const std::uint32_t inf_code = exp_all << M;
  const std::uint32_t max_code = f.ieee ? inf_code - 1 : (exp_all << M) | ((1u << M) - 2);
  const std::uint32_t nan_code = f.ieee ? inf_code | (1u << (M - 1)) : (exp_all << M) | ((1u << M) - 1);
  const int e64 = static_cast<int>((bits >> 52) & 0x7FF);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (e64 == 0x7FF) return sign | (frac != 0 ? nan_code : (f.ieee ? inf_code : max_code));
  if (e64 == 0) return sign;  // f64 subnormals are far below every format's subnormals
  const std::uint64_t m = frac | (std::uint64_t{1} << 52);
  const int bias = (1 << (E - 1)) - 1;
  const int et = e64 - 1023 + bias;
  std::uint64_t code;
  if (et >= 1) {
    code = (static_cast<std::uint64_t>(et) << M) + round_shift(m, 52 - M) - (std::uint64_t{1} << M);
  } else {
    code = round_shift(m, 52 - M + (1 - et));  // subnormal (may round up to the first normal)
  }
  if (code > max_code) return sign | (f.ieee ? inf_code : max_code);
  return sign | static_cast<std::uint32_t>(code);
}

/// 2^k as a double, for the exponents the small formats reach.
EINEXPR_HD double pow2(int k) { return double_of(static_cast<std::uint64_t>(1023 + k) << 52); }

/// The value of `code` in format f (convert.cpp's decode), exactly.
EINEXPR_HD double decode(std::uint32_t code, FloatFormat f) {
  const int E = f.exponent_bits, M = f.mantissa_bits;
  const bool neg = (code >> (E + M)) & 1u;
  const std::uint32_t e = (code >> M) & ((1u << E) - 1);
  const std::uint32_t m = code & ((1u << M) - 1);
  const int bias = (1 << (E - 1)) - 1;
  double v;
  if (f.ieee && e == (1u << E) - 1) {
    v = double_of(m != 0 ? 0x7FF8000000000000ull : 0x7FF0000000000000ull);
  } else if (!f.ieee && e == (1u << E) - 1 && m == (1u << M) - 1) {
    v = double_of(0x7FF8000000000000ull);
  } else if (e == 0) {
    v = static_cast<double>(m) * pow2(1 - bias - M);
  } else {
    v = static_cast<double>(m | (1u << M)) * pow2(static_cast<int>(e) - bias - M);
  }
  return double_of(bits_of(v) | (neg ? 0x8000000000000000ull : 0));  // the sign by bits: -NaN too
}

// ---- fast paths for the compute kernels ----
EINEXPR_HD float f16_to_float(std::uint16_t bits) {  // convert.cpp's f16_to_f32
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t e = (bits >> 10) & 0x1Fu, m = bits & 0x3FFu;
  if (e == 0x1F) return float_of(sign | 0x7F800000u | (m << 13));
  if (e != 0) return float_of(sign | ((e + 112) << 23) | (m << 13));
  const float v = static_cast<float>(m) * 5.9604644775390625e-08f;  // m * 2^-24
  return sign ? -v : v;
}
/// To nearest even, overflow to inf, as f32_to_f16 (NaN payloads may differ).
EINEXPR_HD std::uint16_t float_to_f16(float x) {
  const __half_raw r = __float2half_rn(x);
  return r.x;
}
EINEXPR_HD float bf16_to_float(std::uint16_t bits) { return float_of(static_cast<std::uint32_t>(bits) << 16); }
EINEXPR_HD std::uint16_t float_to_bf16(float x) {  // convert.cpp's f32_to_bf16, bit for bit
  const std::uint32_t bits = bits_of(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

// ---- Elem<S>: load to the compute type, store back ----
template <class S>
struct Elem;
template <>
struct Elem<double> {
  using C = double;
  static EINEXPR_HD double load(double x) { return x; }
  static EINEXPR_HD double store(double x) { return x; }
};
template <>
struct Elem<float> {
  using C = float;
  static EINEXPR_HD float load(float x) { return x; }
  static EINEXPR_HD float store(float x) { return x; }
};
template <>
struct Elem<half_t> {
  using C = float;
  static EINEXPR_HD float load(half_t x) { return f16_to_float(x.bits); }
  static EINEXPR_HD half_t store(float x) { return half_t{float_to_f16(x)}; }
};
template <>
struct Elem<bfloat16_t> {
  using C = float;
  static EINEXPR_HD float load(bfloat16_t x) { return bf16_to_float(x.bits); }
  static EINEXPR_HD bfloat16_t store(float x) { return bfloat16_t{float_to_bf16(x)}; }
};
template <>
struct Elem<float8_e4m3_t> {
  using C = float;
  static EINEXPR_HD float load(float8_e4m3_t x) { return static_cast<float>(decode(x.bits, e4m3_format())); }
  static EINEXPR_HD float8_e4m3_t store(float x) {
    return float8_e4m3_t{static_cast<std::uint8_t>(encode(x, e4m3_format()))};
  }
};
template <>
struct Elem<float8_e5m2_t> {
  using C = float;
  static EINEXPR_HD float load(float8_e5m2_t x) { return static_cast<float>(decode(x.bits, e5m2_format())); }
  static EINEXPR_HD float8_e5m2_t store(float x) {
    return float8_e5m2_t{static_cast<std::uint8_t>(encode(x, e5m2_format()))};
  }
};
template <>
struct Elem<std::int64_t> {
  using C = std::int64_t;
  static EINEXPR_HD std::int64_t load(std::int64_t x) { return x; }
  static EINEXPR_HD std::int64_t store(std::int64_t x) { return x; }
};
template <>
struct Elem<std::int32_t> {
  using C = std::int64_t;
  static EINEXPR_HD std::int64_t load(std::int32_t x) { return x; }
  static EINEXPR_HD std::int32_t store(std::int64_t x) { return static_cast<std::int32_t>(x); }  // wraps
};
template <>
struct Elem<bool_t> {
  using C = std::uint8_t;  // 0 or 1
  static EINEXPR_HD std::uint8_t load(bool_t x) { return x.bits != 0; }
  static EINEXPR_HD bool_t store(std::uint8_t x) { return bool_t{static_cast<std::uint8_t>(x != 0)}; }
};

template <class S>
using compute_t = typename Elem<S>::C;

// ---- one element, any dtype to any dtype (einexpr::convert's rules) ----
EINEXPR_HD bool is_int_dtype(DType d) { return d == DType::i64 || d == DType::i32; }

/// Floats to integers truncate toward zero, saturate, and NaN gives 0.
template <class I>
EINEXPR_HD I float_to_int(double v, double max, double min, I imax, I imin) {
  if (is_nan(v)) return 0;
  if (v >= max) return imax;
  if (v <= min) return imin;
  return static_cast<I>(v);
}

/// The value of a float-typed element, exactly, as a double.
EINEXPR_HD double load_float(const void* p, DType d) {
  switch (d) {
    case DType::f64: return *static_cast<const double*>(p);
    case DType::f32: return *static_cast<const float*>(p);
    case DType::f16: return decode(*static_cast<const std::uint16_t*>(p), f16_format());
    case DType::bf16: return decode(*static_cast<const std::uint16_t*>(p), bf16_format());
    case DType::f8_e4m3: return decode(*static_cast<const std::uint8_t*>(p), e4m3_format());
    case DType::f8_e5m2: return decode(*static_cast<const std::uint8_t*>(p), e5m2_format());
    default: return 0;
  }
}

/// Writes `v` (any double) as dtype d, as convert.cpp's store<D>.
EINEXPR_HD void store_double(double v, void* p, DType d) {
  switch (d) {
    case DType::f64: *static_cast<double*>(p) = v; return;
    case DType::f32: *static_cast<float*>(p) = static_cast<float>(v); return;
    case DType::f16: *static_cast<std::uint16_t*>(p) = static_cast<std::uint16_t>(encode(v, f16_format())); return;
    case DType::bf16: *static_cast<std::uint16_t*>(p) = static_cast<std::uint16_t>(encode(v, bf16_format())); return;
    case DType::f8_e4m3: *static_cast<std::uint8_t*>(p) = static_cast<std::uint8_t>(encode(v, e4m3_format())); return;
    case DType::f8_e5m2: *static_cast<std::uint8_t*>(p) = static_cast<std::uint8_t>(encode(v, e5m2_format())); return;
    case DType::i64:
      *static_cast<std::int64_t*>(p) = float_to_int<std::int64_t>(v, 9223372036854775807.0, -9223372036854775808.0,
                                                                  INT64_MAX, INT64_MIN);
      return;
    case DType::i32:
      *static_cast<std::int32_t*>(p) = float_to_int<std::int32_t>(v, 2147483647.0, -2147483648.0, INT32_MAX, INT32_MIN);
      return;
    case DType::boolean: *static_cast<std::uint8_t*>(p) = v != 0.0 ? 1 : 0; return;  // NaN != 0: true
  }
}

/// An integer or bool source (as int64) written as dtype d.
EINEXPR_HD void store_integer(std::int64_t v, bool from_i64, void* p, DType d) {
  switch (d) {
    case DType::i64: *static_cast<std::int64_t*>(p) = v; return;
    case DType::i32: *static_cast<std::int32_t*>(p) = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN
                                                                                                 : static_cast<std::int32_t>(v);
      return;
    case DType::boolean: *static_cast<std::uint8_t*>(p) = v != 0 ? 1 : 0; return;
    case DType::f32:  // i64 -> f32 rounds once, in hardware; i32 and bool are exact in double first
      *static_cast<float*>(p) = from_i64 ? static_cast<float>(v) : static_cast<float>(static_cast<double>(v));
      return;
    default: store_double(static_cast<double>(v), p, d); return;  // i64 -> f16 rounds twice, as the CPU
  }
}

/// dst = convert(src): einexpr::convert for one element of every dtype pair.
EINEXPR_HD void convert_element(const void* src, DType sd, void* dst, DType dd) {
  if (sd == dd) {
    switch (sd) {
      case DType::f64: case DType::i64: *static_cast<std::uint64_t*>(dst) = *static_cast<const std::uint64_t*>(src); return;
      case DType::f32: case DType::i32: *static_cast<std::uint32_t*>(dst) = *static_cast<const std::uint32_t*>(src); return;
      case DType::f16: case DType::bf16: *static_cast<std::uint16_t*>(dst) = *static_cast<const std::uint16_t*>(src); return;
      default: *static_cast<std::uint8_t*>(dst) = *static_cast<const std::uint8_t*>(src); return;
    }
  }
  if (is_int_dtype(sd) || sd == DType::boolean) {
    const std::int64_t v = sd == DType::i64   ? *static_cast<const std::int64_t*>(src)
                           : sd == DType::i32 ? *static_cast<const std::int32_t*>(src)
                                              : (*static_cast<const std::uint8_t*>(src) != 0 ? 1 : 0);
    store_integer(v, sd == DType::i64, dst, dd);
    return;
  }
  if (sd == DType::f32 && dd == DType::bf16) {  // the CPU's bit trick (keeps NaN payloads)
    *static_cast<std::uint16_t*>(dst) = float_to_bf16(*static_cast<const float*>(src));
    return;
  }
  store_double(load_float(src, sd), dst, dd);
}

}  // namespace einexpr::gpu
