// dropout's steps on the GPU, by the CPU's rules (codegen/lower/cpu/dropout_cpu.cpp):
//   random  one thread an element of the contiguous mask: keep(seed, i) of codegen/random.hpp,
//           the seed read from device memory when the kernel runs (the same mask as the CPU's)
//   mask    one thread an element: dst = src · (mask ? scale : 0), in the dtype's compute type
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../../../runtime/cuda/element.cuh"
#include "../../../runtime/cuda/indexing.cuh"
#include "cuda_check.hpp"
#include "einexpr/codegen/random.hpp"
#include "einexpr/runtime/strided.hpp"
#include "kernels.hpp"

namespace einexpr::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 4;

__global__ void __launch_bounds__(kThreads)
    random_kernel(std::uint8_t* dst, const std::int64_t* seed, std::uint64_t first, std::uint32_t n,
                  std::uint64_t threshold) {
  const auto s = static_cast<std::uint64_t>(*seed);
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) dst[i] = random::keep(s, first + i, threshold) ? 1 : 0;
  }
}

template <class S>
__global__ void __launch_bounds__(kThreads)
    mask_kernel(S* dst, const S* src, const std::uint8_t* mask, compute_t<S> scale, OffsetCalc<3> calc,
                std::uint32_t n) {
  using C = compute_t<S>;
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[3];
      calc.offsets(i, off);
      dst[off[0]] = Elem<S>::store(Elem<S>::load(src[off[1]]) * (mask[off[2]] ? scale : C(0)));
    }
  }
}

}  // namespace

void random_mask(int device, std::uint8_t* dst, std::int64_t numel, const std::int64_t* seed, double p) {
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const std::uint64_t threshold = random::threshold(p);
  constexpr std::int64_t chunk = std::int64_t{1} << 30;  // 32-bit thread indices within a launch
  for (std::int64_t first = 0; first < numel; first += chunk) {
    const auto n = static_cast<std::uint32_t>(numel - first < chunk ? numel - first : chunk);
    random_kernel<<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(dst + first, seed,
                                                                          static_cast<std::uint64_t>(first), n, threshold);
    EINEXPR_CUDA_CHECK_LAUNCH("random_kernel");
  }
}

void mask_values(int device, DType dtype, std::byte* dst, const Layout& dst_layout, const std::byte* src,
                 const Layout& src_layout, const std::byte* mask, const Layout& mask_layout, double scale) {
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  std::vector<const Strides*> strides{&dst_layout.strides, &src_layout.strides, &mask_layout.strides};
  const CollapsedDims c = collapse_dims(dst_layout.shape, strides);
  StridedPart<3> whole;
  whole.shape = c.shape;
  for (int v = 0; v < 3; ++v) whole.strides[static_cast<std::size_t>(v)] = c.strides[static_cast<std::size_t>(v)];
  whole.base = {dst_layout.offset, src_layout.offset, mask_layout.offset};
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<compute_t<S>>) {
      throw DTypeError("dropout needs a floating dtype, not " + std::string(name(dtype)));
    } else {
      for_each_part<3>(whole, [&](const StridedPart<3>& part) {
        const auto n = static_cast<std::uint32_t>(part.numel());
        mask_kernel<S><<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(
            reinterpret_cast<S*>(dst) + part.base[0], reinterpret_cast<const S*>(src) + part.base[1],
            reinterpret_cast<const std::uint8_t*>(mask) + part.base[2], static_cast<compute_t<S>>(scale),
            make_offset_calc(part), n);
        EINEXPR_CUDA_CHECK_LAUNCH("mask_kernel");
      });
    }
  });
}

}  // namespace einexpr::gpu
