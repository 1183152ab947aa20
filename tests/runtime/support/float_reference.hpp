#pragma once
// An independent model of the small float formats, for checking convert.cpp: values are
// computed from the definition (sign, biased exponent, fraction) with std::pow, and
// encoding is an exhaustive search for the nearest finite value, ties to the even code.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace einexpr::testref {

struct Format {
  std::string name;
  int exponent_bits;
  int mantissa_bits;
  bool ieee;  // all-ones exponent = inf / nan; false: e4m3fn (nan = all ones, no inf)
  int bits() const { return 1 + exponent_bits + mantissa_bits; }
  std::uint32_t sign_bit() const { return std::uint32_t{1} << (exponent_bits + mantissa_bits); }
};

inline const Format f16{"f16", 5, 10, true};
inline const Format bf16{"bf16", 8, 7, true};
inline const Format e4m3{"e4m3", 4, 3, false};
inline const Format e5m2{"e5m2", 5, 2, true};

/// The value of `code` in `f`, from the definition.
inline double value_of(std::uint32_t code, const Format& f) {
  const int E = f.exponent_bits, M = f.mantissa_bits;
  const bool negative = (code & f.sign_bit()) != 0;
  const std::uint32_t biased = (code >> M) & ((1u << E) - 1);
  const std::uint32_t fraction = code & ((1u << M) - 1);
  const int bias = (1 << (E - 1)) - 1;
  double v;
  if (f.ieee && biased == (1u << E) - 1) {
    v = fraction == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.ieee && biased == (1u << E) - 1 && fraction == (1u << M) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (biased == 0) {
    v = std::pow(2.0, 1 - bias) * (static_cast<double>(fraction) / std::pow(2.0, M));
  } else {
    v = std::pow(2.0, static_cast<int>(biased) - bias) * (1.0 + static_cast<double>(fraction) / std::pow(2.0, M));
  }
  return negative ? -v : v;
}

/// Every positive finite value of `f`, indexed by code (codes of positive values are
/// 0 .. size()-1, increasing in value).
inline std::vector<double> positive_values(const Format& f) {
  std::vector<double> values;
  for (std::uint32_t code = 0; code < f.sign_bit(); ++code) {
    const double v = value_of(code, f);
    if (!std::isfinite(v)) break;
    values.push_back(v);
  }
  return values;
}

/// Round to nearest, ties to even, by searching every code. Overflow: inf for the IEEE
/// formats, the largest value for e4m3fn. Returns the code (a nan code for nan input).
inline std::uint32_t nearest_code(double x, const Format& f, const std::vector<double>& table) {
  const std::uint32_t sign = std::signbit(x) ? f.sign_bit() : 0;
  const std::uint32_t exp_all = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
  if (std::isnan(x)) return sign | (f.ieee ? exp_all | (1u << (f.mantissa_bits - 1)) : exp_all | ((1u << f.mantissa_bits) - 1));
  const double a = std::fabs(x);
  const auto max_code = static_cast<std::uint32_t>(table.size() - 1);
  const double max = table.back();
  if (f.ieee) {
    const double half_ulp = (max - table[max_code - 1]) / 2;
    if (a >= max + half_ulp) return sign | exp_all;  // inf
  } else if (a >= max) {
    return sign | max_code;  // saturates (inf included)
  }
  std::uint32_t best = 0;
  double best_diff = std::numeric_limits<double>::infinity();
  for (std::uint32_t code = 0; code <= max_code; ++code) {
    const double d = std::fabs(a - table[code]);
    if (d < best_diff || (d == best_diff && (code & 1u) == 0)) {
      best = code;
      best_diff = d;
    }
  }
  return sign | best;
}

inline bool is_nan_code(std::uint32_t code, const Format& f) { return std::isnan(value_of(code, f)); }

}  // namespace einexpr::testref
