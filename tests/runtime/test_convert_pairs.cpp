// Integer and bool conversions, i64 beyond 2^53, and every (source, destination) pair of
// dtypes on random values against a reference computed from the exact source value.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "einexpr/runtime/dtype.hpp"
#include "float_reference.hpp"

using namespace einexpr;
namespace ref = einexpr::testref;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
const double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int32_t i32_max = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t i32_min = std::numeric_limits<std::int32_t>::min();

const ref::Format* format_of(DType d) {
  switch (d) {
    case DType::f16: return &ref::f16;
    case DType::bf16: return &ref::bf16;
    case DType::f8_e4m3: return &ref::e4m3;
    case DType::f8_e5m2: return &ref::e5m2;
    default: return nullptr;
  }
}

// Truncation toward zero, saturating, nan -> 0: written from the definition.
std::int64_t ref_to_int(double v, std::int64_t lo, std::int64_t hi) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(lo)) return lo;
  if (v >= std::ldexp(1.0, 63) || (hi < i64_max && v >= static_cast<double>(hi))) return hi;
  return static_cast<std::int64_t>(std::trunc(v));
}

// The bytes `dtype` should hold for the exact value v.
std::vector<unsigned char> ref_bytes(double v, DType dtype) {
  std::vector<unsigned char> out(element_size(dtype));
  auto put = [&](auto x) { std::memcpy(out.data(), &x, sizeof x); };
  if (const ref::Format* f = format_of(dtype)) {
    static std::vector<double> tables[4];
    std::vector<double>& table = tables[static_cast<int>(dtype) - static_cast<int>(DType::f16)];
    if (table.empty()) table = ref::positive_values(*f);
    const std::uint32_t code = ref::nearest_code(v, *f, table);
    std::memcpy(out.data(), &code, out.size());  // little-endian host
    return out;
  }
  switch (dtype) {
    case DType::f64: put(v); break;
    case DType::f32: put(static_cast<float>(v)); break;
    case DType::i64: put(ref_to_int(v, i64_min, i64_max)); break;
    case DType::i32: put(static_cast<std::int32_t>(ref_to_int(v, i32_min, i32_max))); break;
    case DType::boolean: put(static_cast<unsigned char>(v != 0.0)); break;  // nan is true
    default: break;
  }
  return out;
}

bool is_nan_bytes(const std::vector<unsigned char>& b, DType dtype) {
  if (!is_floating(dtype)) return false;
  return std::isnan(load_as_double(b.data(), dtype));
}

// Random values typical of `dtype` (representable in it), with its special values.
std::vector<double> sample_values(DType dtype, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 1e-3};
  if (is_floating(dtype)) {
    const FInfo fi = finfo(dtype);
    for (double x : {nan_value, -nan_value, fi.max, -fi.max, fi.smallest_normal, fi.smallest_subnormal})
      v.push_back(x);
    if (fi.has_inf) v.insert(v.end(), {inf, -inf});
  } else if (dtype == DType::i64) {
    v.insert(v.end(), {-9007199254740992.0, 9007199254740992.0, 3e9, -3e9});
  } else if (dtype == DType::i32) {
    v.insert(v.end(), {2147483647.0, -2147483648.0});
  }
  for (int i = 0; i < 300; ++i) {
    const double scale = std::ldexp(1.0, static_cast<int>(rng() % 40) - 20);
    v.push_back(normal(rng) * scale);
  }
  // Store each in the source dtype, so the values are exactly representable there.
  for (double& x : v) {
    std::uint64_t bytes = 0;
    store_from_double(x, &bytes, dtype);
    x = load_as_double(&bytes, dtype);
  }
  return v;
}

}  // namespace

TEST_CASE("floats to integers truncate toward zero and saturate, nan gives 0", "[dtype][convert]") {
  struct Row { double in; std::int32_t i32; std::int64_t i64; };
  const Row rows[] = {
      {2.9, 2, 2},
      {-2.9, -2, -2},
      {-0.5, 0, 0},
      {0.999999, 0, 0},
      {nan_value, 0, 0},
      {-nan_value, 0, 0},
      {1e10, i32_max, 10000000000},
      {-1e10, i32_min, -10000000000},
      {2147483647.9, i32_max, 2147483647},
      {-2147483648.9, i32_min, -2147483648},
      {1e19, i32_max, i64_max},
      {-1e19, i32_min, i64_min},
      {inf, i32_max, i64_max},
      {-inf, i32_min, i64_min},
      {9.2233720368547748e18, i32_max, 9223372036854774784},  // largest double below 2^63
  };
  for (const Row& r : rows) {
    CAPTURE(r.in);
    std::int32_t a = 7;
    std::int64_t b = 7;
    convert(&r.in, DType::f64, &a, DType::i32, 1);
    convert(&r.in, DType::f64, &b, DType::i64, 1);
    CHECK(a == r.i32);
    CHECK(b == r.i64);
    const float f = static_cast<float>(r.in);  // the f32 path too
    CAPTURE(f);
    convert(&f, DType::f32, &b, DType::i64, 1);
    CHECK(b == ref_to_int(f, i64_min, i64_max));
  }
}

TEST_CASE("integer narrowing saturates, and anything nonzero is true", "[dtype][convert]") {
  const std::vector<std::int64_t> wide = {0, 1, -1, 1LL << 40, -(1LL << 40), i64_max, i64_min, 2147483648LL};
  const std::vector<std::int32_t> narrow = {0, 1, -1, i32_max, i32_min, i32_max, i32_min, i32_max};
  std::vector<std::int32_t> got(wide.size());
  convert(wide.data(), DType::i64, got.data(), DType::i32, wide.size());
  CHECK(got == narrow);
  std::vector<unsigned char> flags(wide.size());
  convert(wide.data(), DType::i64, flags.data(), DType::boolean, wide.size());
  CHECK(flags == std::vector<unsigned char>{0, 1, 1, 1, 1, 1, 1, 1});
  const std::vector<double> floats = {0.0, -0.0, 1e-300, -3.5, nan_value, inf};
  flags.resize(floats.size());
  convert(floats.data(), DType::f64, flags.data(), DType::boolean, floats.size());
  CHECK(flags == std::vector<unsigned char>{0, 0, 1, 1, 1, 1});
  const unsigned char raw[] = {0, 1, 2, 255};  // a bool byte other than 0/1 still reads as true
  std::vector<float> back(4);
  convert(raw, DType::boolean, back.data(), DType::f32, 4);
  CHECK(back == std::vector<float>{0, 1, 1, 1});
}

TEST_CASE("i64 beyond 2^53 rounds once to every float dtype", "[dtype][convert]") {
  // 2^62 + 3*2^54 - 1 lies just below the halfway point between two bf16 neighbours
  // 2^62 + 2^55 and 2^62 + 2^56. Rounding it to a double first lands on the tie.
  struct Row { std::int64_t in; DType dtype; double want; };
  const Row rows[] = {
      {(1LL << 62) + 3 * (1LL << 54) - 1, DType::bf16, 0x1.02p62},
      {(1LL << 62) + 3 * (1LL << 54) + 1, DType::bf16, 0x1.04p62},
      {-((1LL << 62) + 3 * (1LL << 54) - 1), DType::bf16, -0x1.02p62},
      {(1LL << 62) + 3 * (1LL << 38) - 1, DType::f32, 0x1.000002p62},
      {(1LL << 62) + (1LL << 9) + 1, DType::f64, 0x1.0000000000001p62},
      {i64_max, DType::bf16, 0x1p63},
      {i64_min, DType::f16, -inf},
      {i64_max, DType::f8_e4m3, 448},
  };
  for (const Row& r : rows) {
    CAPTURE(r.in, name(r.dtype), r.want);
    std::uint64_t out = 0;
    convert(&r.in, DType::i64, &out, r.dtype, 1);
    CHECK(load_as_double(&out, r.dtype) == r.want);
  }
}

TEST_CASE("every pair of dtypes converts random values like the reference", "[dtype][convert]") {
  std::mt19937_64 rng(2024);
  for (DType src : all_dtypes) {
    const std::vector<double> values = sample_values(src, rng);
    std::vector<unsigned char> src_bytes(values.size() * element_size(src));
    for (std::size_t i = 0; i < values.size(); ++i)
      store_from_double(values[i], src_bytes.data() + i * element_size(src), src);
    for (DType dst : all_dtypes) {
      const std::size_t es = element_size(dst);
      std::vector<unsigned char> out(values.size() * es);
      convert(src_bytes.data(), src, out.data(), dst, values.size());
      int failures = 0;
      for (std::size_t i = 0; i < values.size() && failures < 3; ++i) {
        const std::vector<unsigned char> want = ref_bytes(values[i], dst);
        const std::vector<unsigned char> got(out.begin() + static_cast<std::ptrdiff_t>(i * es),
                                             out.begin() + static_cast<std::ptrdiff_t>((i + 1) * es));
        const bool ok = got == want || (is_nan_bytes(want, dst) && is_nan_bytes(got, dst));
        if (!ok) {
          ++failures;
          CAPTURE(name(src), name(dst), values[i], load_as_double(got.data(), dst));
          CHECK(ok);
        }
      }
      CAPTURE(name(src), name(dst));
      CHECK(failures == 0);
    }
  }
}
