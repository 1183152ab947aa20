#include "elements_host.hpp"

#include "element.cuh"
#include "indexing.cuh"
#include "tile.cuh"

namespace einexpr::test {

void host_convert_element(const void* src, DType src_dtype, void* dst, DType dst_dtype) {
  gpu::convert_element(src, src_dtype, dst, dst_dtype);
}
std::uint16_t host_float_to_f16(float x) { return gpu::float_to_f16(x); }
float host_f16_to_float(std::uint16_t bits) { return gpu::f16_to_float(bits); }
std::uint16_t host_float_to_bf16(float x) { return gpu::float_to_bf16(x); }
int host_tile_slot(int v, int r, int j) {
  switch (v) {
    case 1: return gpu::tile_slot<1>(r, j);
    case 2: return gpu::tile_slot<2>(r, j);
    case 4: return gpu::tile_slot<4>(r, j);
    case 8: return gpu::tile_slot<8>(r, j);
    default: return gpu::tile_slot<16>(r, j);
  }
}
int host_tile_size(int v) {
  switch (v) {
    case 1: return gpu::tile_of<1>;
    case 2: return gpu::tile_of<2>;
    case 4: return gpu::tile_of<4>;
    case 8: return gpu::tile_of<8>;
    default: return gpu::tile_of<16>;
  }
}
std::uint32_t host_int_divide(std::uint32_t n, std::uint32_t d) { return gpu::IntDivider(d).div(n); }

}  // namespace einexpr::test
