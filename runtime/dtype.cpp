#include "einexpr/runtime/dtype.hpp"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

#include "einexpr/runtime/error.hpp"

namespace einexpr {

std::size_t element_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::f8_e4m3: case DType::f8_e5m2: case DType::boolean: return 1;
  }
  return 0;
}

std::string_view name(DType dtype) noexcept {
  switch (dtype) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f8_e4m3: return "f8_e4m3";
    case DType::f8_e5m2: return "f8_e5m2";
    case DType::i64: return "i64";
    case DType::i32: return "i32";
    case DType::boolean: return "bool";
  }
  return "?";
}

DType dtype_from_name(std::string_view text) {
  struct Alias { std::string_view name; DType dtype; };
  static constexpr Alias aliases[] = {
      {"f64", DType::f64},         {"float64", DType::f64},     {"double", DType::f64},
      {"f32", DType::f32},         {"float32", DType::f32},     {"float", DType::f32},
      {"f16", DType::f16},         {"float16", DType::f16},     {"half", DType::f16},
      {"bf16", DType::bf16},       {"bfloat16", DType::bf16},
      {"f8_e4m3", DType::f8_e4m3}, {"fp8_e4m3", DType::f8_e4m3}, {"e4m3", DType::f8_e4m3},
      {"float8_e4m3fn", DType::f8_e4m3},
      {"f8_e5m2", DType::f8_e5m2}, {"fp8_e5m2", DType::f8_e5m2}, {"e5m2", DType::f8_e5m2},
      {"float8_e5m2", DType::f8_e5m2},
      {"i64", DType::i64},         {"int64", DType::i64},       {"long", DType::i64},
      {"i32", DType::i32},         {"int32", DType::i32},       {"int", DType::i32},
      {"bool", DType::boolean},    {"boolean", DType::boolean},
  };
  for (const Alias& a : aliases)
    if (a.name == text) return a.dtype;
  throw DTypeError("unknown dtype '" + std::string(text) +
                   "' (expected f64, f32, f16, bf16, f8_e4m3, f8_e5m2, i64, i32 or bool)");
}

bool is_floating(DType d) noexcept {
  return d == DType::f64 || d == DType::f32 || is_reduced_float(d);
}
bool is_integer(DType d) noexcept { return d == DType::i64 || d == DType::i32; }
bool is_reduced_float(DType d) noexcept {
  return d == DType::f16 || d == DType::bf16 || d == DType::f8_e4m3 || d == DType::f8_e5m2;
}

FInfo finfo(DType dtype) {
  // resolution = 10^-floor(mantissa_bits * log10(2)), as numpy and torch define it.
  auto make = [dtype](int bits, int e, int m, double max, double normal, double subnormal, bool inf) {
    const int digits = static_cast<int>(std::floor(m * std::log10(2.0)));
    return FInfo{dtype, bits, 1, e, m, max, -max, normal, normal, subnormal, std::ldexp(1.0, -m),
                 std::pow(10.0, -digits), inf, true};
  };
  switch (dtype) {
    case DType::f64: return make(64, 11, 52, DBL_MAX, DBL_MIN, std::ldexp(1.0, -1074), true);
    case DType::f32: return make(32, 8, 23, FLT_MAX, FLT_MIN, std::ldexp(1.0, -149), true);
    case DType::f16: return make(16, 5, 10, 65504.0, std::ldexp(1.0, -14), std::ldexp(1.0, -24), true);
    case DType::bf16:
      return make(16, 8, 7, std::ldexp(255.0, 120), std::ldexp(1.0, -126), std::ldexp(1.0, -133), true);
    case DType::f8_e4m3: return make(8, 4, 3, 448.0, std::ldexp(1.0, -6), std::ldexp(1.0, -9), false);
    case DType::f8_e5m2: return make(8, 5, 2, 57344.0, std::ldexp(1.0, -14), std::ldexp(1.0, -16), true);
    default:
      throw DTypeError("finfo is defined for floating dtypes only, not " + std::string(name(dtype)));
  }
}

std::string to_string(const FInfo& info) {
  auto g = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  const char* torch_name = "";
  switch (info.dtype) {
    case DType::f64: torch_name = "float64"; break;
    case DType::f32: torch_name = "float32"; break;
    case DType::f16: torch_name = "float16"; break;
    case DType::bf16: torch_name = "bfloat16"; break;
    case DType::f8_e4m3: torch_name = "float8_e4m3fn"; break;
    case DType::f8_e5m2: torch_name = "float8_e5m2"; break;
    default: torch_name = name(info.dtype).data(); break;
  }
  return "finfo(resolution=" + g(info.resolution) + ", min=" + g(info.min) + ", max=" + g(info.max) +
         ", eps=" + g(info.eps) + ", smallest_normal=" + g(info.smallest_normal) + ", tiny=" + g(info.tiny) +
         ", dtype=" + torch_name + ")";
}

}  // namespace einexpr
