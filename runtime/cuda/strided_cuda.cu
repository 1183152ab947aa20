// The runtime's strided kernels: cuda_copy_strided, cuda_convert_strided and cuda_fill,
// used by Tensor (contiguous, clone, to(DType), copy_from, fill) on a GPU, and by the CUDA
// lowering as its general copy.
//
// Copies collapse dims first (runtime/strided.hpp); a contiguous run becomes one
// cudaMemcpyAsync; otherwise, where both views are contiguous along the innermost dim and
// every address and stride allows, elements are widened to 16 (or 8, 4) byte vectors, and
// one elementwise kernel moves them: each thread handles 4 elements a block-width apart
// (consecutive threads, consecutive destination elements: coalesced writes; every load of
// a thread is issued before its first store).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../backend.hpp"
#include "cuda_check.hpp"
#include "device_context.hpp"
#include "einexpr/runtime/strided.hpp"
#include "element.cuh"
#include "indexing.cuh"

namespace einexpr::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 4;

template <class T>
__global__ void __launch_bounds__(kThreads) copy_kernel(T* __restrict__ dst, const T* __restrict__ src,
                                                        OffsetCalc<2> calc, std::uint32_t n) {
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
  std::int64_t dst_off[kPerThread];
  T v[kPerThread];
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[2];
      calc.offsets(i, off);
      dst_off[u] = off[0];
      v[u] = src[off[1]];
    }
  }
#pragma unroll
  for (int u = 0; u < kPerThread; ++u)
    if (base + u * kThreads < n) dst[dst_off[u]] = v[u];
}

__global__ void __launch_bounds__(kThreads) convert_kernel(std::byte* dst, DType dst_dtype, int dst_size,
                                                           const std::byte* src, DType src_dtype, int src_size,
                                                           OffsetCalc<2> calc, std::uint32_t n) {
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[2];
      calc.offsets(i, off);
      convert_element(src + off[1] * src_size, src_dtype, dst + off[0] * dst_size, dst_dtype);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) fill_kernel(T* __restrict__ dst, T value, std::uint64_t n) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * kThreads;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride)
    dst[i] = value;
}

template <class T>
void launch_copy(cudaStream_t stream, std::byte* dst, const std::byte* src, const StridedPart<2>& whole) {
  for_each_part<2>(whole, [&](const StridedPart<2>& part) {
    const auto n = static_cast<std::uint32_t>(part.numel());
    copy_kernel<T><<<blocks_for(n, kThreads, kPerThread), kThreads, 0, stream>>>(
        reinterpret_cast<T*>(dst) + part.base[0], reinterpret_cast<const T*>(src) + part.base[1],
        make_offset_calc(part), n);
    EINEXPR_CUDA_CHECK_LAUNCH("copy_kernel");
  });
}

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

// Where both views are contiguous along the innermost dim, views `part` (elements of
// `element_size` bytes) as one of `width`-byte vectors, if lengths, strides and addresses allow.
bool widen(StridedPart<2>& part, std::size_t& element_size, std::size_t width, const void* dst, const void* src) {
  if (part.shape.empty() || width <= element_size || width % element_size != 0) return false;
  const auto v = static_cast<std::int64_t>(width / element_size);
  if (part.strides[0].back() != 1 || part.strides[1].back() != 1 || part.shape.back() % v != 0) return false;
  if (!aligned(dst, width) || !aligned(src, width)) return false;
  for (const Strides& s : part.strides)
    for (std::size_t d = 0; d + 1 < s.size(); ++d)
      if (s[d] % v != 0) return false;
  part.shape.back() /= v;
  for (Strides& s : part.strides)
    for (std::size_t d = 0; d + 1 < s.size(); ++d) s[d] /= v;
  element_size = width;
  return true;
}

StridedPart<2> collapsed_part(const Layout& dst, const Layout& src) {
  const CollapsedDims c = collapse_dims(dst.shape, {&dst.strides, &src.strides});
  StridedPart<2> part;
  part.shape = c.shape;
  part.strides = {c.strides[0], c.strides[1]};
  return part;
}

}  // namespace

}  // namespace einexpr::gpu

namespace einexpr::backend {

using namespace einexpr::gpu;

void cuda_copy_strided(int index, void* dst, const Layout& dst_layout, const void* src, const Layout& src_layout,
                       std::size_t element_size) {
  EINEXPR_ASSERT(dst_layout.shape == src_layout.shape, "cuda_copy_strided: shapes differ");
  const std::int64_t n = checked_numel(dst_layout.shape);
  if (n == 0) return;
  DeviceGuard guard(index);
  const cudaStream_t s = stream(index);
  const auto es = static_cast<std::int64_t>(element_size);
  auto* d = static_cast<std::byte*>(dst) + dst_layout.offset * es;
  const auto* sp = static_cast<const std::byte*>(src) + src_layout.offset * es;
  StridedPart<2> part = collapsed_part(dst_layout, src_layout);
  if (part.shape.empty() || (part.shape.size() == 1 && part.strides[0][0] == 1 && part.strides[1][0] == 1)) {
    EINEXPR_CUDA_CHECK(cudaMemcpyAsync(d, sp, static_cast<std::size_t>(n * es), cudaMemcpyDeviceToDevice, s));
    return;
  }
  std::size_t size = element_size;
  if (!widen(part, size, 16, d, sp) && !widen(part, size, 8, d, sp)) widen(part, size, 4, d, sp);
  switch (size) {
    case 1: return launch_copy<std::uint8_t>(s, d, sp, part);
    case 2: return launch_copy<std::uint16_t>(s, d, sp, part);
    case 4: return launch_copy<std::uint32_t>(s, d, sp, part);
    case 8: return launch_copy<std::uint64_t>(s, d, sp, part);
    case 16: return launch_copy<uint4>(s, d, sp, part);
    default: EINEXPR_ASSERT(false, "cuda_copy_strided: unsupported element size");
  }
}

void cuda_convert_strided(int index, void* dst, const Layout& dst_layout, DType dst_dtype, const void* src,
                          const Layout& src_layout, DType src_dtype) {
  EINEXPR_ASSERT(dst_layout.shape == src_layout.shape, "cuda_convert_strided: shapes differ");
  if (checked_numel(dst_layout.shape) == 0) return;
  DeviceGuard guard(index);
  const cudaStream_t s = stream(index);
  const auto des = static_cast<int>(element_size(dst_dtype));
  const auto ses = static_cast<int>(element_size(src_dtype));
  auto* d = static_cast<std::byte*>(dst) + dst_layout.offset * des;
  const auto* sp = static_cast<const std::byte*>(src) + src_layout.offset * ses;
  for_each_part<2>(collapsed_part(dst_layout, src_layout), [&](const StridedPart<2>& part) {
    const auto n = static_cast<std::uint32_t>(part.numel());
    convert_kernel<<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(
        d + part.base[0] * des, dst_dtype, des, sp + part.base[1] * ses, src_dtype, ses, make_offset_calc(part), n);
    EINEXPR_CUDA_CHECK_LAUNCH("convert_kernel");
  });
}

namespace {

template <class T>
void launch_fill(cudaStream_t s, void* dst, const void* element, std::size_t n) {
  T value;
  std::memcpy(&value, element, sizeof value);
  const std::uint64_t blocks = std::min<std::uint64_t>((n + kThreads - 1) / kThreads, 65536);
  fill_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(static_cast<T*>(dst), value, n);
  EINEXPR_CUDA_CHECK_LAUNCH("fill_kernel");
}

}  // namespace

void cuda_fill(int index, void* dst, const void* element, std::size_t element_size, std::size_t n) {
  if (n == 0) return;
  DeviceGuard guard(index);
  const cudaStream_t s = stream(index);
  const auto* bytes = static_cast<const unsigned char*>(element);
  bool same_bytes = true;
  for (std::size_t i = 1; i < element_size; ++i) same_bytes = same_bytes && bytes[i] == bytes[0];
  if (same_bytes) {  // zeros, and every other one-byte pattern
    EINEXPR_CUDA_CHECK(cudaMemsetAsync(dst, bytes[0], n * element_size, s));
    return;
  }
  if (aligned(dst, 16) && (n * element_size) % 16 == 0 && 16 % element_size == 0) {
    unsigned char pattern[16];
    for (std::size_t i = 0; i < 16; ++i) pattern[i] = bytes[i % element_size];
    return launch_fill<uint4>(s, dst, pattern, n * element_size / 16);
  }
  switch (element_size) {
    case 2: return launch_fill<std::uint16_t>(s, dst, element, n);
    case 4: return launch_fill<std::uint32_t>(s, dst, element, n);
    case 8: return launch_fill<std::uint64_t>(s, dst, element, n);
    default: EINEXPR_ASSERT(false, "cuda_fill: unsupported element size");
  }
}

}  // namespace einexpr::backend
