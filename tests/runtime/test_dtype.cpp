// dtype.cpp: sizes, names, spellings, classes and the finfo table, checked against the
// values torch.finfo prints in the seeds (shared/seeds/002) and against ml_dtypes' fp8 finfo.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/error.hpp"

using namespace einexpr;

namespace {
std::string g(double v) {  // as torch prints finfo fields
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

TEST_CASE("element sizes, names and classes of every dtype", "[dtype]") {
  struct Row { DType dtype; std::size_t size; const char* name; bool floating, integer, reduced; };
  const Row rows[] = {
      {DType::f64, 8, "f64", true, false, false},         {DType::f32, 4, "f32", true, false, false},
      {DType::f16, 2, "f16", true, false, true},          {DType::bf16, 2, "bf16", true, false, true},
      {DType::f8_e4m3, 1, "f8_e4m3", true, false, true},  {DType::f8_e5m2, 1, "f8_e5m2", true, false, true},
      {DType::i64, 8, "i64", false, true, false},         {DType::i32, 4, "i32", false, true, false},
      {DType::boolean, 1, "bool", false, false, false},
  };
  REQUIRE(std::size(rows) == all_dtypes.size());
  for (std::size_t i = 0; i < std::size(rows); ++i) {
    const Row& r = rows[i];
    CAPTURE(r.name);
    CHECK(all_dtypes[i] == r.dtype);
    CHECK(element_size(r.dtype) == r.size);
    CHECK(name(r.dtype) == r.name);
    CHECK(is_floating(r.dtype) == r.floating);
    CHECK(is_integer(r.dtype) == r.integer);
    CHECK(is_reduced_float(r.dtype) == r.reduced);
    CHECK(dtype_from_name(name(r.dtype)) == r.dtype);
  }
}

TEST_CASE("dtype_from_name accepts the short, torch and numpy spellings", "[dtype]") {
  struct Row { const char* text; DType dtype; };
  const Row rows[] = {
      {"f64", DType::f64},          {"float64", DType::f64},        {"double", DType::f64},
      {"f32", DType::f32},          {"float32", DType::f32},        {"float", DType::f32},
      {"f16", DType::f16},          {"float16", DType::f16},        {"half", DType::f16},
      {"bf16", DType::bf16},        {"bfloat16", DType::bf16},      {"f8_e4m3", DType::f8_e4m3},
      {"fp8_e4m3", DType::f8_e4m3}, {"e4m3", DType::f8_e4m3},       {"float8_e4m3fn", DType::f8_e4m3},
      {"f8_e5m2", DType::f8_e5m2},  {"fp8_e5m2", DType::f8_e5m2},   {"e5m2", DType::f8_e5m2},
      {"float8_e5m2", DType::f8_e5m2}, {"i64", DType::i64},         {"int64", DType::i64},
      {"long", DType::i64},         {"i32", DType::i32},            {"int32", DType::i32},
      {"int", DType::i32},          {"bool", DType::boolean},       {"boolean", DType::boolean},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    CHECK(dtype_from_name(r.text) == r.dtype);
  }
}

TEST_CASE("dtype_from_name rejects other text and lists the valid names", "[dtype][errors]") {
  for (const char* text : {"float128", "", "F32", "float32 ", "uint8", "fp8"}) {
    CAPTURE(text);
    CHECK_THROWS_AS(dtype_from_name(text), DTypeError);
    CHECK_THROWS_WITH(dtype_from_name(text),
                      "unknown dtype '" + std::string(text) +
                          "' (expected f64, f32, f16, bf16, f8_e4m3, f8_e5m2, i64, i32 or bool)");
  }
}

TEST_CASE("finfo matches torch.finfo as the seeds print it", "[dtype][seeds]") {
  struct Row { DType dtype; const char* repr; };
  const Row rows[] = {
      {DType::f32, "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
                   "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)"},
      {DType::f16, "finfo(resolution=0.001, min=-65504, max=65504, eps=0.000976562, "
                   "smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float16)"},
      {DType::bf16, "finfo(resolution=0.01, min=-3.38953e+38, max=3.38953e+38, eps=0.0078125, "
                    "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=bfloat16)"},
      {DType::f64, "finfo(resolution=1e-15, min=-1.79769e+308, max=1.79769e+308, eps=2.22045e-16, "
                   "smallest_normal=2.22507e-308, tiny=2.22507e-308, dtype=float64)"},
      {DType::f8_e4m3, "finfo(resolution=1, min=-448, max=448, eps=0.125, "
                       "smallest_normal=0.015625, tiny=0.015625, dtype=float8_e4m3fn)"},
      {DType::f8_e5m2, "finfo(resolution=1, min=-57344, max=57344, eps=0.25, "
                       "smallest_normal=6.10352e-05, tiny=6.10352e-05, dtype=float8_e5m2)"},
  };
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype));
    CHECK(to_string(finfo(r.dtype)) == r.repr);
  }
}

TEST_CASE("finfo fields of every float dtype", "[dtype]") {
  struct Row {
    DType dtype; int bits, e, m; double max, normal, subnormal, eps, resolution; bool inf;
  };
  const Row rows[] = {
      {DType::f64, 64, 11, 52, 1.7976931348623157e308, 0x1p-1022, 0x1p-1074, 0x1p-52, 1e-15, true},
      {DType::f32, 32, 8, 23, 0x1.fffffep127, 0x1p-126, 0x1p-149, 0x1p-23, 1e-6, true},
      {DType::f16, 16, 5, 10, 65504, 0x1p-14, 0x1p-24, 0x1p-10, 1e-3, true},
      {DType::bf16, 16, 8, 7, 0x1.fep127, 0x1p-126, 0x1p-133, 0x1p-7, 1e-2, true},
      {DType::f8_e4m3, 8, 4, 3, 448, 0x1p-6, 0x1p-9, 0x1p-3, 1, false},
      {DType::f8_e5m2, 8, 5, 2, 57344, 0x1p-14, 0x1p-16, 0x1p-2, 1, true},
  };
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype));
    const FInfo fi = finfo(r.dtype);
    CHECK(fi.dtype == r.dtype);
    CHECK(fi.bits == r.bits);
    CHECK(fi.bits == static_cast<int>(8 * element_size(r.dtype)));
    CHECK(fi.sign_bits + fi.exponent_bits + fi.mantissa_bits == fi.bits);
    CHECK(fi.exponent_bits == r.e);
    CHECK(fi.mantissa_bits == r.m);
    CHECK(fi.max == r.max);
    CHECK(fi.min == -r.max);
    CHECK(fi.smallest_normal == r.normal);
    CHECK(fi.tiny == r.normal);
    CHECK(fi.smallest_subnormal == r.subnormal);
    CHECK(fi.eps == r.eps);
    CHECK(g(fi.resolution) == g(r.resolution));
    CHECK(fi.has_inf == r.inf);
    CHECK(fi.has_nan);
    // The table agrees with the conversions: max, smallest normal and subnormal are exact
    // values of the dtype, and 1 + eps is the next value after 1.
    for (double v : {fi.max, fi.smallest_normal, fi.smallest_subnormal, 1 + fi.eps}) {
      std::uint64_t bits = 0;
      store_from_double(v, &bits, r.dtype);
      CHECK(load_as_double(&bits, r.dtype) == v);
    }
    std::uint64_t bits = 0;
    store_from_double(1 + fi.eps / 2, &bits, r.dtype);  // halfway: ties to even, back to 1
    CHECK(load_as_double(&bits, r.dtype) == 1.0);
  }
}

TEST_CASE("finfo of an integer or bool dtype is a DTypeError", "[dtype][errors]") {
  struct Row { DType dtype; const char* message; };
  const Row rows[] = {
      {DType::i64, "finfo is defined for floating dtypes only, not i64"},
      {DType::i32, "finfo is defined for floating dtypes only, not i32"},
      {DType::boolean, "finfo is defined for floating dtypes only, not bool"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.message);
    CHECK_THROWS_AS(finfo(r.dtype), DTypeError);
    CHECK_THROWS_WITH(finfo(r.dtype), r.message);
  }
}

TEST_CASE("dtype_of maps each C++ element type to its dtype", "[dtype]") {
  STATIC_REQUIRE(dtype_of_v<double> == DType::f64);
  STATIC_REQUIRE(dtype_of_v<float> == DType::f32);
  STATIC_REQUIRE(dtype_of_v<half_t> == DType::f16);
  STATIC_REQUIRE(dtype_of_v<bfloat16_t> == DType::bf16);
  STATIC_REQUIRE(dtype_of_v<float8_e4m3_t> == DType::f8_e4m3);
  STATIC_REQUIRE(dtype_of_v<float8_e5m2_t> == DType::f8_e5m2);
  STATIC_REQUIRE(dtype_of_v<std::int64_t> == DType::i64);
  STATIC_REQUIRE(dtype_of_v<std::int32_t> == DType::i32);
  STATIC_REQUIRE(dtype_of_v<bool> == DType::boolean);
  STATIC_REQUIRE(sizeof(half_t) == 2);
  STATIC_REQUIRE(sizeof(float8_e4m3_t) == 1);
}
