// Conversions of convert.cpp against the independent model in support/float_reference.hpp:
// every code of every small float, random doubles and floats (with exact halfway cases),
// the edge values of each format, integers and bool, and every pair of dtypes.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "einexpr/runtime/dtype.hpp"
#include "float_reference.hpp"

using namespace einexpr;
namespace ref = einexpr::testref;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
const double nan_value = std::numeric_limits<double>::quiet_NaN();

struct FormatCase {
  const ref::Format* format;
  DType dtype;
  float (*to_f32)(std::uint32_t);
  std::uint32_t (*from_f32)(float);
};

const FormatCase format_cases[] = {
    {&ref::f16, DType::f16, [](std::uint32_t c) { return f16_to_f32(static_cast<std::uint16_t>(c)); },
     [](float v) -> std::uint32_t { return f32_to_f16(v); }},
    {&ref::bf16, DType::bf16, [](std::uint32_t c) { return bf16_to_f32(static_cast<std::uint16_t>(c)); },
     [](float v) -> std::uint32_t { return f32_to_bf16(v); }},
    {&ref::e4m3, DType::f8_e4m3, [](std::uint32_t c) { return e4m3_to_f32(static_cast<std::uint8_t>(c)); },
     [](float v) -> std::uint32_t { return f32_to_e4m3(v); }},
    {&ref::e5m2, DType::f8_e5m2, [](std::uint32_t c) { return e5m2_to_f32(static_cast<std::uint8_t>(c)); },
     [](float v) -> std::uint32_t { return f32_to_e5m2(v); }},
};

// The code convert() produces for one double.
std::uint32_t convert_code(double x, DType dtype) {
  std::uint32_t code = 0;  // little-endian host: the low bytes hold the code
  convert(&x, DType::f64, &code, dtype, 1);
  return code;
}

// Codes agree: equal, or both nan with the same sign.
bool same_code(std::uint32_t got, std::uint32_t want, const ref::Format& f) {
  if (ref::is_nan_code(want, f))
    return ref::is_nan_code(got, f) && (got & f.sign_bit()) == (want & f.sign_bit());
  return got == want;
}

// Random doubles spread over the format's whole range (and a little beyond), plus the
// exact halfway point between random neighbours and the doubles just beside it.
std::vector<double> sample_doubles(const ref::Format& f, const std::vector<double>& table, int n,
                                   std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  std::uniform_int_distribution<int> exponent(-bias - f.mantissa_bits - 3, bias + 3);
  std::uniform_int_distribution<std::size_t> code(0, table.size() - 2);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const double mantissa = 1.0 + static_cast<double>(rng() >> 12) * 0x1p-52;
    const double sign = (rng() & 1) ? -1.0 : 1.0;
    out.push_back(sign * std::ldexp(mantissa, exponent(rng)));
    const std::size_t c = code(rng);
    const double mid = (table[c] + table[c + 1]) / 2;  // exact: few significant bits
    for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, inf)}) out.push_back(sign * x);
  }
  return out;
}

}  // namespace

TEST_CASE("every code of each small float decodes to its defined value", "[dtype][convert]") {
  for (const FormatCase& fc : format_cases) {
    const ref::Format& f = *fc.format;
    for (std::uint32_t code = 0; code < (1u << f.bits()); ++code) {
      const double want = ref::value_of(code, f);
      const double got = fc.to_f32(code);
      CAPTURE(f.name, code, want, got);
      if (std::isnan(want)) {
        CHECK(std::isnan(got));
        CHECK(std::signbit(got) == ((code & f.sign_bit()) != 0));
      } else {
        CHECK(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want));  // -0 too
      }
    }
  }
}

TEST_CASE("every code round-trips code to f32 to code, nan payloads included", "[dtype][convert]") {
  for (const FormatCase& fc : format_cases) {
    int mismatches = 0;
    for (std::uint32_t code = 0; code < (1u << fc.format->bits()); ++code) {
      const std::uint32_t back = fc.from_f32(fc.to_f32(code));
      if (back != code) {
        CAPTURE(fc.format->name, code, back);
        CHECK(back == code);
        if (++mismatches > 5) break;
      }
    }
    CAPTURE(fc.format->name);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("random doubles round to the nearest value, ties to even (exhaustive reference)", "[dtype][convert]") {
  for (const FormatCase& fc : format_cases) {
    const ref::Format& f = *fc.format;
    const std::vector<double> table = ref::positive_values(f);
    const int n = f.bits() == 8 ? 4000 : 500;
    int failures = 0;
    for (double x : sample_doubles(f, table, n, 42 + static_cast<std::uint64_t>(f.bits()))) {
      const std::uint32_t want = ref::nearest_code(x, f, table);
      const std::uint32_t got = convert_code(x, fc.dtype);
      if (!same_code(got, want, f) && ++failures <= 5) {
        CAPTURE(f.name, x, want, got);
        CHECK(got == want);
      }
    }
    CAPTURE(f.name);
    CHECK(failures == 0);
  }
}

TEST_CASE("random floats through the f32 entry points round like the reference", "[dtype][convert]") {
  for (const FormatCase& fc : format_cases) {
    const ref::Format& f = *fc.format;
    const std::vector<double> table = ref::positive_values(f);
    int failures = 0;
    for (double d : sample_doubles(f, table, f.bits() == 8 ? 4000 : 500, 7)) {
      const float x = static_cast<float>(d);  // halfway cases of every format fit in a float
      const std::uint32_t want = ref::nearest_code(x, f, table);
      const std::uint32_t got = fc.from_f32(x);
      if (!same_code(got, want, f) && ++failures <= 5) {
        CAPTURE(f.name, x, want, got);
        CHECK(got == want);
      }
    }
    CAPTURE(f.name);
    CHECK(failures == 0);
  }
}

TEST_CASE("f64 to f16 rounds once, not through f32", "[dtype][convert]") {
  // Just above the halfway point between 1 and 1 + 2^-10: f32 would round it to the tie
  // (then to 1 by ties-to-even); one rounding from the double gives 1 + 2^-10.
  const double x = 1.0 + 0x1p-11 + 0x1p-40;
  CHECK(convert_code(x, DType::f16) == 0x3C01u);
  CHECK(f32_to_f16(static_cast<float>(x)) == 0x3C00u);
}

TEST_CASE("edge values of each format", "[dtype][convert]") {
  struct Row { DType dtype; double in; std::uint32_t code; };
  const Row rows[] = {
      {DType::f16, 1e-8, 0x0000},          {DType::f16, -1e-8, 0x8000},        // underflow (the seeds)
      {DType::f16, 65504, 0x7BFF},         {DType::f16, 65519, 0x7BFF},        // f16 max
      {DType::f16, 65520, 0x7C00},         {DType::f16, -65520, 0xFC00},       // overflow -> inf
      {DType::f16, inf, 0x7C00},           {DType::f16, -0.0, 0x8000},
      {DType::f16, 0x1p-24, 0x0001},       {DType::f16, 0x1p-25, 0x0000},      // smallest subnormal, tie to 0
      {DType::f16, 0x1.8p-25, 0x0001},     {DType::f16, 0x1.8p-24, 0x0002},    // tie 1.5 ulp -> 2
      {DType::f16, 0x1p-14, 0x0400},       {DType::f16, 0x1.ff8p-15, 0x03FF},  // smallest normal, largest subnormal
      {DType::f16, 0x1.ffcp-15, 0x0400},   // halfway from the largest subnormal: up into the normals
      {DType::f16, 1 + 0x1p-11, 0x3C00},   {DType::f16, 1 + 0x1.8p-10, 0x3C02},  // ties to even
      {DType::bf16, 1e-8, 0x322C},         {DType::bf16, 0x1.fep127, 0x7F7F},  // 1.0012e-08, max
      {DType::bf16, 0x1.ffp127, 0x7F80},   {DType::bf16, 0x1p-133, 0x0001},    // overflow, smallest subnormal
      {DType::bf16, 0x1p-134, 0x0000},     {DType::bf16, 1 + 0x1p-8, 0x3F80},  // ties to even
      {DType::bf16, 1 + 0x1.8p-7, 0x3F82}, {DType::bf16, -0.0, 0x8000},
      {DType::f8_e4m3, 448, 0x7E},         {DType::f8_e4m3, 464, 0x7E},        // max, saturates
      {DType::f8_e4m3, 1e6, 0x7E},         {DType::f8_e4m3, -1e6, 0xFE},
      {DType::f8_e4m3, inf, 0x7E},         {DType::f8_e4m3, -inf, 0xFE},       // no inf: saturates
      {DType::f8_e4m3, 0x1p-9, 0x01},      {DType::f8_e4m3, 0x1p-10, 0x00},    // smallest subnormal, tie to 0
      {DType::f8_e4m3, 0x1.8p-9, 0x02},    {DType::f8_e4m3, 0x1p-6, 0x08},     // tie to even, smallest normal
      {DType::f8_e4m3, -0.0, 0x80},        {DType::f8_e4m3, 1.0625, 0x38},     // 1 + half ulp -> 1
      {DType::f8_e5m2, 57344, 0x7B},       {DType::f8_e5m2, 61439, 0x7B},      // max
      {DType::f8_e5m2, 61440, 0x7C},       {DType::f8_e5m2, -inf, 0xFC},       // overflow -> inf
      {DType::f8_e5m2, 0x1p-16, 0x01},     {DType::f8_e5m2, 0x1p-17, 0x00},
      {DType::f8_e5m2, 0x1p-14, 0x04},     {DType::f8_e5m2, -0.0, 0x80},
      {DType::f8_e5m2, 1.125, 0x3C},       {DType::f8_e5m2, 1.375, 0x3E},      // ties to even
  };
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype), r.in, r.code);
    CHECK(convert_code(r.in, r.dtype) == r.code);
  }
  CHECK(bf16_to_f32(0x322C) == Approx(1.0012e-08).epsilon(1e-4));  // what torch prints for 1e-8
}

TEST_CASE("nan stays nan in every float format, with its sign", "[dtype][convert]") {
  for (const FormatCase& fc : format_cases) {
    for (double x : {nan_value, -nan_value}) {
      const std::uint32_t code = convert_code(x, fc.dtype);
      CAPTURE(fc.format->name, code);
      CHECK(ref::is_nan_code(code, *fc.format));
      CHECK(((code & fc.format->sign_bit()) != 0) == std::signbit(x));
    }
  }
  CHECK(convert_code(nan_value, DType::f8_e4m3) == 0x7Fu);  // e4m3fn has one nan code per sign
  CHECK(convert_code(-nan_value, DType::f8_e4m3) == 0xFFu);
}
