#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda_check.hpp"
#include "device_context.hpp"
#include "einexpr/runtime/error.hpp"
#include "random_fill.hpp"

namespace einexpr::bench {

namespace {

__device__ std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Two 24-bit uniforms in (0, 1) from one 64-bit hash, then Box-Muller. u1 >= 2^-25, so
// |x| <= sqrt(50 ln 2) < 5.9: finite always.
__device__ float normal_at(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t z = splitmix64(splitmix64(seed) ^ i);
  const float u1 = (static_cast<float>(z >> 40) + 0.5f) * (1.0f / 16777216.0f);
  const float u2 = (static_cast<float>(z & 0xFFFFFFull) + 0.5f) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__device__ void store(float* p, float v) { *p = v; }
__device__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ void store(__half* p, float v) { *p = __float2half_rn(v); }

template <class T>
__global__ void fill_normal_kernel(T* out, std::int64_t n, std::uint64_t seed) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    store(out + i, normal_at(seed, static_cast<std::uint64_t>(i)));
}

template <class T>
void launch(void* out, std::int64_t n, std::uint64_t seed, cudaStream_t stream) {
  constexpr int threads = 256;
  const std::int64_t blocks = (n + threads - 1) / threads;
  const unsigned grid = static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
  fill_normal_kernel<T><<<grid, threads, 0, stream>>>(static_cast<T*>(out), n, seed);
  EINEXPR_CUDA_CHECK_LAUNCH("fill_normal_kernel");
}

}  // namespace

void fill_normal(Tensor& t, std::uint64_t seed) {
  if (!t.device().is_cuda()) throw DeviceError("fill_normal: the tensor is not on a GPU");
  if (!t.is_contiguous()) throw ShapeError("fill_normal: the tensor is not contiguous");
  const std::int64_t n = t.numel();
  if (n == 0) return;
  const int device = t.device().index;
  gpu::DeviceGuard guard(device);
  const cudaStream_t stream = gpu::stream(device);
  switch (t.dtype()) {
    case DType::f32:
      return launch<float>(t.data_ptr(), n, seed, stream);
    case DType::bf16:
      return launch<__nv_bfloat16>(t.data_ptr(), n, seed, stream);
    case DType::f16:
      return launch<__half>(t.data_ptr(), n, seed, stream);
    default:
      throw DTypeError("fill_normal: f32, bf16 or f16 only, not " + std::string(name(t.dtype())));
  }
}

Tensor random_gpu(const Shape& shape, DType dtype, std::uint64_t seed, int device) {
  Tensor t = Tensor::empty(shape, dtype, Device::cuda(device));
  fill_normal(t, seed);
  return t;
}

}  // namespace einexpr::bench
