#pragma once
// Element types, their sizes, a torch.finfo-like table, and conversions between them
// with round-to-nearest-even (saturating or inf/nan exactly as each format defines).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace einexpr {

enum class DType : std::uint8_t { f64, f32, f16, bf16, f8_e4m3, f8_e5m2, i64, i32, boolean };

inline constexpr std::array<DType, 9> all_dtypes = {
    DType::f64,     DType::f32,     DType::f16, DType::bf16,   DType::f8_e4m3,
    DType::f8_e5m2, DType::i64,     DType::i32, DType::boolean};

/// Bytes per element: 8, 4, 2, 2, 1, 1, 8, 4, 1.
std::size_t element_size(DType dtype) noexcept;
/// Short name: "f64", "f32", "f16", "bf16", "f8_e4m3", "f8_e5m2", "i64", "i32", "bool".
std::string_view name(DType dtype) noexcept;
/// Accepts the short names and the torch / numpy spellings ("float32", "bfloat16",
/// "half", "float8_e4m3fn", "int64", "bool", ...). Throws DTypeError listing the valid names.
DType dtype_from_name(std::string_view text);

bool is_floating(DType dtype) noexcept;  // f64 f32 f16 bf16 f8_e4m3 f8_e5m2
bool is_integer(DType dtype) noexcept;   // i64 i32
/// f16, bf16 and the fp8 formats: computed in f32 on the CPU and rounded back.
bool is_reduced_float(DType dtype) noexcept;

/// The torch.finfo of a floating dtype (bits of each field, max, smallest normal, ...).
struct FInfo {
  DType dtype;
  int bits;
  int sign_bits;
  int exponent_bits;
  int mantissa_bits;  // stored fraction bits
  double max;         // largest finite value
  double min;         // -max
  double smallest_normal;
  double tiny;        // = smallest_normal (torch's alias)
  double smallest_subnormal;
  double eps;         // 2^-mantissa_bits: distance from 1 to the next value
  double resolution;  // 10^-floor(decimal digits of precision)
  bool has_inf;
  bool has_nan;
};
/// Throws DTypeError for integer and bool dtypes.
FInfo finfo(DType dtype);
/// torch's repr of finfo, each value as %g prints it: "finfo(resolution=1e-06,
/// min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, smallest_normal=1.17549e-38,
/// tiny=1.17549e-38, dtype=float32)". The dtype is named as torch names it.
std::string to_string(const FInfo& info);

// ---- storage types of the reduced floats (bit patterns, no arithmetic) ----
struct half_t { std::uint16_t bits; };
struct bfloat16_t { std::uint16_t bits; };
struct float8_e4m3_t { std::uint8_t bits; };
struct float8_e5m2_t { std::uint8_t bits; };
/// How the CPU and GPU kernels read DType::boolean: one byte, anything nonzero is true (a
/// C++ bool must hold 0 or 1, which .npy files and raw views do not promise).
struct bool_t { std::uint8_t bits; };

// ---- scalar conversions, round to nearest even ----
float f16_to_f32(std::uint16_t bits) noexcept;
std::uint16_t f32_to_f16(float value) noexcept;    // overflow -> inf
float bf16_to_f32(std::uint16_t bits) noexcept;
std::uint16_t f32_to_bf16(float value) noexcept;   // overflow -> inf
float e4m3_to_f32(std::uint8_t bits) noexcept;
std::uint8_t f32_to_e4m3(float value) noexcept;    // saturates to +-448; nan -> nan (no inf)
float e5m2_to_f32(std::uint8_t bits) noexcept;
std::uint8_t f32_to_e5m2(float value) noexcept;    // overflow -> inf, as IEEE

/// Converts n elements, each read at `src` as src_type and written at `dst` as dst_type.
/// Float to integer truncates toward zero (nan -> 0, saturating); anything to bool is != 0.
void convert(const void* src, DType src_type, void* dst, DType dst_type, std::size_t n);

/// One element to double / from double (exact for every type but i64 beyond 2^53).
double load_as_double(const void* element, DType dtype) noexcept;
void store_from_double(double value, void* element, DType dtype) noexcept;

/// The DType of a C++ element type: double f64, float f32, half_t f16, bfloat16_t bf16,
/// float8_e4m3_t, float8_e5m2_t, std::int64_t i64, std::int32_t i32, bool boolean.
template <class T>
struct dtype_of;
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<half_t> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<bfloat16_t> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<float8_e4m3_t> { static constexpr DType value = DType::f8_e4m3; };
template <> struct dtype_of<float8_e5m2_t> { static constexpr DType value = DType::f8_e5m2; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::boolean; };
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace einexpr
