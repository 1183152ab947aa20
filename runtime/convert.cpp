// Conversions between every pair of dtypes. Reduced floats are encoded from double bits
// with one rounding (round to nearest, ties to even), so f64 -> f16 never rounds twice.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

// A small binary float format: E exponent bits, M mantissa bits.
struct Format {
  int exponent_bits;
  int mantissa_bits;
  bool ieee;  // true: all-ones exponent is inf/nan (f16, bf16, e5m2); false: e4m3fn
};
constexpr Format kF16{5, 10, true};
constexpr Format kBF16{8, 7, true};
constexpr Format kE4M3{4, 3, false};
constexpr Format kE5M2{5, 2, true};

// Rounds m / 2^shift to the nearest integer, ties to even.
std::uint64_t round_shift(std::uint64_t m, int shift) {
  if (shift <= 0) return m << -shift;
  if (shift > 63) return 0;
  const std::uint64_t q = m >> shift;
  const std::uint64_t r = m & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  return (r > half || (r == half && (q & 1))) ? q + 1 : q;
}

// The nan of format f with sign bit `sign` (already in place) for a source nan whose
// fraction is `fraction` (of `fraction_bits` bits). IEEE formats keep the top bits of the
// payload, as numpy does, so every nan code round-trips through f32; where those bits are
// all zero the quiet bit is set, so a nan never becomes inf. e4m3fn has one nan per sign.
std::uint32_t nan_code(std::uint32_t sign, std::uint64_t fraction, int fraction_bits, Format f) {
  const int E = f.exponent_bits, M = f.mantissa_bits;
  const std::uint32_t exp_all = (1u << E) - 1;
  if (!f.ieee) return sign | (exp_all << M) | ((1u << M) - 1);
  auto payload = static_cast<std::uint32_t>(fraction >> (fraction_bits - M));
  if (payload == 0) payload = 1u << (M - 1);
  return sign | (exp_all << M) | payload;
}

// The nan of format f for the f32 nan with bits `bits`.
std::uint32_t nan_from_f32(std::uint32_t bits, Format f) {
  const std::uint32_t sign = (bits >> 31) << (f.exponent_bits + f.mantissa_bits);
  return nan_code(sign, bits & 0x7FFFFFu, 23, f);
}

// Encodes `x` in format f. Overflow: inf for IEEE formats; e4m3fn saturates to +-448.
std::uint32_t encode(double x, Format f) {
  const int E = f.exponent_bits, M = f.mantissa_bits;
  const std::uint32_t sign = std::signbit(x) ? (1u << (E + M)) : 0u;
  const std::uint32_t exp_all = (1u << E) - 1;
  const std::uint32_t inf_code = exp_all << M;
  const std::uint32_t max_code = f.ieee ? inf_code - 1 : (exp_all << M) | ((1u << M) - 2);
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  if (std::isnan(x)) return nan_code(sign, bits & ((std::uint64_t{1} << 52) - 1), 52, f);
  if (std::isinf(x)) return sign | (f.ieee ? inf_code : max_code);
  const int e64 = static_cast<int>((bits >> 52) & 0x7FF);
  if (e64 == 0) return sign;  // f64 subnormals are far below every format's subnormals
  const std::uint64_t m = (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
  const int bias = (1 << (E - 1)) - 1;
  const int et = e64 - 1023 + bias;  // target biased exponent
  std::uint64_t code;
  if (et >= 1) {
    const std::uint64_t mr = round_shift(m, 52 - M);  // M+1 bits, or M+2 after carry
    code = (static_cast<std::uint64_t>(et) << M) + mr - (std::uint64_t{1} << M);
  } else {
    code = round_shift(m, 52 - M + (1 - et));  // subnormal (may round up to the first normal)
  }
  if (code > max_code) return sign | (f.ieee ? inf_code : max_code);
  return sign | static_cast<std::uint32_t>(code);
}

double decode(std::uint32_t code, Format f) {
  const int E = f.exponent_bits, M = f.mantissa_bits;
  const bool neg = (code >> (E + M)) & 1u;
  const std::uint32_t e = (code >> M) & ((1u << E) - 1);
  const std::uint32_t m = code & ((1u << M) - 1);
  const int bias = (1 << (E - 1)) - 1;
  double v;
  if (f.ieee && e == (1u << E) - 1) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (!f.ieee && e == (1u << E) - 1 && m == (1u << M) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), 1 - bias - M);
  } else {
    v = std::ldexp(static_cast<double>(m | (1u << M)), static_cast<int>(e) - bias - M);
  }
  return neg ? -v : v;
}

struct Fp8Tables {
  float e4m3[256];
  float e5m2[256];
  Fp8Tables() {
    for (std::uint32_t i = 0; i < 256; ++i) {
      e4m3[i] = static_cast<float>(decode(i, kE4M3));
      e5m2[i] = f16_to_f32(static_cast<std::uint16_t>(i << 8));  // e5m2 is f16's top byte, nans included
    }
  }
};
const Fp8Tables& fp8_tables() {
  static const Fp8Tables t;
  return t;
}

}  // namespace

float f16_to_f32(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t e = (bits >> 10) & 0x1Fu, m = bits & 0x3FFu;
  if (e == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (m << 13));
  if (e != 0) return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
  const float v = static_cast<float>(m) * 5.9604644775390625e-08f;  // m * 2^-24
  return sign ? -v : v;
}
std::uint16_t f32_to_f16(float value) noexcept {
  if (std::isnan(value)) return static_cast<std::uint16_t>(nan_from_f32(std::bit_cast<std::uint32_t>(value), kF16));
  return static_cast<std::uint16_t>(encode(value, kF16));
}

float bf16_to_f32(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}
std::uint16_t f32_to_bf16(float value) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>(nan_from_f32(bits, kBF16));
  const std::uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float e4m3_to_f32(std::uint8_t bits) noexcept { return fp8_tables().e4m3[bits]; }
std::uint8_t f32_to_e4m3(float value) noexcept { return static_cast<std::uint8_t>(encode(value, kE4M3)); }
float e5m2_to_f32(std::uint8_t bits) noexcept { return fp8_tables().e5m2[bits]; }
std::uint8_t f32_to_e5m2(float value) noexcept {
  if (std::isnan(value)) return static_cast<std::uint8_t>(nan_from_f32(std::bit_cast<std::uint32_t>(value), kE5M2));
  return static_cast<std::uint8_t>(encode(value, kE5M2));
}

namespace {

// ---- one element of each dtype, as double (floats, bool) or int64 (integers) ----

template <DType D> struct Elem;
template <> struct Elem<DType::f64> { using T = double; };
template <> struct Elem<DType::f32> { using T = float; };
template <> struct Elem<DType::f16> { using T = std::uint16_t; };
template <> struct Elem<DType::bf16> { using T = std::uint16_t; };
template <> struct Elem<DType::f8_e4m3> { using T = std::uint8_t; };
template <> struct Elem<DType::f8_e5m2> { using T = std::uint8_t; };
template <> struct Elem<DType::i64> { using T = std::int64_t; };
template <> struct Elem<DType::i32> { using T = std::int32_t; };
template <> struct Elem<DType::boolean> { using T = std::uint8_t; };

// v as a double rounded to odd: the last kept bit is set when any dropped bit was. A second
// rounding, to any format of at most 51 bits, then gives the correctly rounded result, so
// i64 -> bf16 (and f16, fp8) rounds once even beyond 2^53.
double i64_round_to_odd(std::int64_t v) {
  const std::uint64_t mag = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const int width = std::bit_width(mag);
  if (width <= 53) return static_cast<double>(v);
  const int drop = width - 53;
  std::uint64_t kept = mag >> drop;
  if ((mag & ((std::uint64_t{1} << drop) - 1)) != 0) kept |= 1;
  const double d = std::ldexp(static_cast<double>(kept), drop);
  return v < 0 ? -d : d;
}

template <DType D>
double load(typename Elem<D>::T v) {
  if constexpr (D == DType::f16) return f16_to_f32(v);
  else if constexpr (D == DType::bf16) return bf16_to_f32(v);
  else if constexpr (D == DType::f8_e4m3) return e4m3_to_f32(v);
  else if constexpr (D == DType::f8_e5m2) return e5m2_to_f32(v);
  else if constexpr (D == DType::boolean) return v ? 1.0 : 0.0;
  else if constexpr (D == DType::i64) return i64_round_to_odd(v);  // only ever rounded again
  else return static_cast<double>(v);
}

template <class I>
I float_to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(v);  // truncates toward zero
}

template <DType D>
typename Elem<D>::T store(double v) {
  if constexpr (D == DType::f64) return v;
  else if constexpr (D == DType::f32) return static_cast<float>(v);
  else if constexpr (D == DType::f16) return static_cast<std::uint16_t>(encode(v, kF16));
  else if constexpr (D == DType::bf16) return static_cast<std::uint16_t>(encode(v, kBF16));
  else if constexpr (D == DType::f8_e4m3) return static_cast<std::uint8_t>(encode(v, kE4M3));
  else if constexpr (D == DType::f8_e5m2) return static_cast<std::uint8_t>(encode(v, kE5M2));
  else if constexpr (D == DType::boolean) return v != 0.0 ? 1 : 0;  // nan != 0: true
  else return float_to_int<typename Elem<D>::T>(v);
}

template <DType S, DType D>
void convert_loop(const void* src, void* dst, std::size_t n) {
  using TS = typename Elem<S>::T;
  using TD = typename Elem<D>::T;
  const auto* s = static_cast<const TS*>(src);
  auto* d = static_cast<TD*>(dst);
  for (std::size_t i = 0; i < n; ++i) {
    TS v;
    std::memcpy(&v, s + i, sizeof v);
    TD out;
    if constexpr (S == D) {
      out = v;
    } else if constexpr ((S == DType::i64 || S == DType::i32) && (D == DType::i64 || D == DType::i32)) {
      const std::int64_t w = v;
      out = static_cast<TD>(std::clamp<std::int64_t>(w, std::numeric_limits<TD>::min(), std::numeric_limits<TD>::max()));
    } else if constexpr ((S == DType::i64 || S == DType::i32) && D == DType::boolean) {
      out = v != 0 ? 1 : 0;
    } else if constexpr (S == DType::f32 && D == DType::bf16) {
      out = f32_to_bf16(v);
    } else if constexpr (S == DType::bf16 && D == DType::f32) {
      out = bf16_to_f32(v);
    } else if constexpr (S == DType::f16 && D == DType::f32) {
      out = f16_to_f32(v);
    } else if constexpr (S == DType::f32 && (D == DType::f16 || D == DType::f8_e4m3 || D == DType::f8_e5m2)) {
      out = store<D>(static_cast<double>(v));
    } else if constexpr (S == DType::i64 && D == DType::f64) {
      out = static_cast<double>(v);
    } else if constexpr (S == DType::i64 && D == DType::f32) {
      out = static_cast<float>(v);  // one rounding, by the hardware
    } else {
      out = store<D>(load<S>(v));
    }
    std::memcpy(d + i, &out, sizeof out);
  }
}

template <DType S>
void convert_from(const void* src, void* dst, DType dst_type, std::size_t n) {
  switch (dst_type) {
    case DType::f64: return convert_loop<S, DType::f64>(src, dst, n);
    case DType::f32: return convert_loop<S, DType::f32>(src, dst, n);
    case DType::f16: return convert_loop<S, DType::f16>(src, dst, n);
    case DType::bf16: return convert_loop<S, DType::bf16>(src, dst, n);
    case DType::f8_e4m3: return convert_loop<S, DType::f8_e4m3>(src, dst, n);
    case DType::f8_e5m2: return convert_loop<S, DType::f8_e5m2>(src, dst, n);
    case DType::i64: return convert_loop<S, DType::i64>(src, dst, n);
    case DType::i32: return convert_loop<S, DType::i32>(src, dst, n);
    case DType::boolean: return convert_loop<S, DType::boolean>(src, dst, n);
  }
}

}  // namespace

void convert(const void* src, DType src_type, void* dst, DType dst_type, std::size_t n) {
  if (n == 0) return;
  if (src_type == dst_type) {
    std::memmove(dst, src, n * element_size(src_type));
    return;
  }
  switch (src_type) {
    case DType::f64: return convert_from<DType::f64>(src, dst, dst_type, n);
    case DType::f32: return convert_from<DType::f32>(src, dst, dst_type, n);
    case DType::f16: return convert_from<DType::f16>(src, dst, dst_type, n);
    case DType::bf16: return convert_from<DType::bf16>(src, dst, dst_type, n);
    case DType::f8_e4m3: return convert_from<DType::f8_e4m3>(src, dst, dst_type, n);
    case DType::f8_e5m2: return convert_from<DType::f8_e5m2>(src, dst, dst_type, n);
    case DType::i64: return convert_from<DType::i64>(src, dst, dst_type, n);
    case DType::i32: return convert_from<DType::i32>(src, dst, dst_type, n);
    case DType::boolean: return convert_from<DType::boolean>(src, dst, dst_type, n);
  }
}

double load_as_double(const void* element, DType dtype) noexcept {
  double v = 0;
  convert(element, dtype, &v, DType::f64, 1);
  return v;
}

void store_from_double(double value, void* element, DType dtype) noexcept {
  convert(&value, DType::f64, element, dtype, 1);
}

}  // namespace einexpr
