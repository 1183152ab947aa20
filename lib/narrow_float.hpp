#pragma once
// bf16 and f16 as 16-bit words in f32 arithmetic (private to lib): the trainer's mixed
// precision and the mesh run's 16-bit collectives read and round them the same way.
#include <cstdint>

#include "einexpr/runtime/dtype.hpp"

namespace einexpr::program_detail {

inline bool narrow(DType d) { return d == DType::bf16 || d == DType::f16; }
inline float narrow_to_f32(std::uint16_t bits, DType d) { return d == DType::bf16 ? bf16_to_f32(bits) : f16_to_f32(bits); }
/// Rounded to nearest even (overflow: inf).
inline std::uint16_t f32_to_narrow(float v, DType d) { return d == DType::bf16 ? f32_to_bf16(v) : f32_to_f16(v); }

}  // namespace einexpr::program_detail
