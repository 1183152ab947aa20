#pragma once
// The host-and-device element code of runtime/cuda (element.cuh, indexing.cuh), compiled
// by nvcc for the host so CPU tests can check it without a GPU.
#include <cstdint>

#include "einexpr/runtime/dtype.hpp"

namespace einexpr::test {

/// gpu::convert_element, run on the host.
void host_convert_element(const void* src, DType src_dtype, void* dst, DType dst_dtype);
/// gpu::float_to_f16 (the compute kernels' f32 -> f16), run on the host.
std::uint16_t host_float_to_f16(float x);
/// gpu::f16_to_float and gpu::float_to_bf16, run on the host.
float host_f16_to_float(std::uint16_t bits);
std::uint16_t host_float_to_bf16(float x);
/// gpu::tile_slot<V>(r, j) and tile_of<V> (codegen/lower/cuda/tile.cuh) for V in 1, 2, 4, 8, 16.
int host_tile_slot(int v, int r, int j);
int host_tile_size(int v);
/// n / d through gpu::IntDivider's magic numbers.
std::uint32_t host_int_divide(std::uint32_t n, std::uint32_t d);

}  // namespace einexpr::test
