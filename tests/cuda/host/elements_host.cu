#include "elements_host.hpp"

#include "element.cuh"
#include "indexing.cuh"

namespace einexpr::test {

void host_convert_element(const void* src, DType src_dtype, void* dst, DType dst_dtype) {
  gpu::convert_element(src, src_dtype, dst, dst_dtype);
}
std::uint16_t host_float_to_f16(float x) { return gpu::float_to_f16(x); }
float host_f16_to_float(std::uint16_t bits) { return gpu::f16_to_float(bits); }
std::uint16_t host_float_to_bf16(float x) { return gpu::float_to_bf16(x); }
std::uint32_t host_int_divide(std::uint32_t n, std::uint32_t d) { return gpu::IntDivider(d).div(n); }

}  // namespace einexpr::test
