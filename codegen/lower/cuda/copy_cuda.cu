// CopyStep on the GPU (and the staging copies of the other steps).
//
// A permutation whose destination is contiguous along one dim (i) and whose source is
// contiguous along another (j) goes through shared memory: a block reads a tile row by row
// along j and writes it row by row along i, so both sides are coalesced. Where lengths,
// strides and addresses allow, each thread moves 16-byte vectors (V elements) on both
// sides; the tile is then 8V x 8V elements (64 x 64 for bf16, 32 x 32 for f32), swizzled
// as tile.cuh explains so neither the vector stores into shared memory nor the column
// reads out of it conflict on a bank. Without vectors the tile is 32 x 32 elements with
// the classic XOR swizzle. Other dims are a batch of tiles. Every
// other copy (contiguous, broadcast with stride-0 sources, repeat, general strides) is the
// runtime's elementwise copy, which widens contiguous rows to 16-byte vectors.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../../../runtime/backend.hpp"
#include "../../../runtime/cuda/indexing.cuh"
#include "cuda_check.hpp"
#include "einexpr/runtime/strided.hpp"
#include "kernels.hpp"
#include "tile.cuh"

namespace einexpr::gpu {

namespace {

constexpr int kThreads = 128;

struct TileShape {
  std::int64_t li = 0, lj = 0;  // lengths of i (dst stride 1) and j (src stride 1)
  std::int64_t src_i_stride = 0;
  std::int64_t dst_j_stride = 0;
  std::int64_t tiles_i = 0, tiles_j = 0;
};


// V elements of unsigned T (V * sizeof(T) == 16) as one 16-byte vector, built from 32-bit
// words so the store stays one 16-byte instruction.
template <class T, int V>
__device__ __forceinline__ uint4 pack16(const T (&vals)[V]) {
  std::uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int byte = v * static_cast<int>(sizeof(T));
    if constexpr (sizeof(T) == 8) {
      w[byte / 4] = static_cast<std::uint32_t>(vals[v]);
      w[byte / 4 + 1] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(vals[v]) >> 32);
    } else {
      w[byte / 4] |= static_cast<std::uint32_t>(vals[v]) << (8 * (byte % 4));
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

template <class T, int V>
__global__ void __launch_bounds__(kThreads) transpose_kernel(T* __restrict__ dst, const T* __restrict__ src,
                                                             TileShape s, OffsetCalc<2> batch, std::uint32_t batches) {
  constexpr int TILE = tile_of<V>;
  constexpr int CH = TILE / V;  // vectors per tile row
  constexpr int PER = TILE * CH / kThreads;
  static_assert(PER >= 1 && TILE * CH % kThreads == 0, "tile and block do not fit");
  using Vec = std::conditional_t<V == 1, T, uint4>;
  __shared__ __align__(16) T tile[TILE * TILE];
  const std::int64_t tiles = s.tiles_i * s.tiles_j * batches;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t ti = t % s.tiles_i, rest = t / s.tiles_i;
    const std::int64_t tj = rest % s.tiles_j;
    std::int64_t off[2];
    batch.offsets(static_cast<std::uint32_t>(rest / s.tiles_j), off);
    const std::int64_t i0 = ti * TILE, j0 = tj * TILE;
    const std::int64_t ni = s.li - i0 < TILE ? s.li - i0 : TILE;
    const std::int64_t nj = s.lj - j0 < TILE ? s.lj - j0 : TILE;
    const T* sp = src + off[1] + i0 * s.src_i_stride + j0;
    T* dp = dst + off[0] + j0 * s.dst_j_stride + i0;
#pragma unroll
    for (int k = 0; k < PER; ++k) {  // read rows along j
      const int idx = static_cast<int>(threadIdx.x) + k * kThreads;
      const int r = idx / CH, c = idx % CH;
      if (r < ni && c * V < nj)
        *reinterpret_cast<Vec*>(&tile[tile_slot<V>(r, c * V)]) = *reinterpret_cast<const Vec*>(sp + r * s.src_i_stride + c * V);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < PER; ++k) {  // write rows along i
      const int idx = static_cast<int>(threadIdx.x) + k * kThreads;
      const int jj = idx / CH, ci = idx % CH;
      if (jj < nj && ci * V < ni) {
        T vals[V];
#pragma unroll
        for (int v = 0; v < V; ++v) vals[v] = tile[tile_slot<V>(ci * V + v, jj)];
        if constexpr (V == 1) {
          dp[jj * s.dst_j_stride + ci] = vals[0];
        } else {
          // __stcg: a plain store of the packed uint4 was split into four 4-byte stores by
          // the compiler; a .cg store stays one 16-byte instruction and, since L1 does not
          // keep stores, behaves as the default one.
          __stcg(reinterpret_cast<uint4*>(dp + jj * s.dst_j_stride + ci * V), pack16<T, V>(vals));
        }
      }
    }
    __syncthreads();
  }
}

bool aligned(const void* p, std::size_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

template <class T, int V>
void launch_transpose(int device, T* dst, const T* src, TileShape s, const StridedPart<2>& batch) {
  constexpr int TILE = tile_of<V>;
  s.tiles_i = (s.li + TILE - 1) / TILE;
  s.tiles_j = (s.lj + TILE - 1) / TILE;
  const cudaStream_t st = stream(device);
  const std::int64_t max_blocks = static_cast<std::int64_t>(properties(device).multiProcessorCount) * 32;
  for_each_part<2>(batch, [&](const StridedPart<2>& part) {
    const auto batches = static_cast<std::uint32_t>(part.numel());
    const std::int64_t tiles = s.tiles_i * s.tiles_j * batches;
    const auto blocks = static_cast<unsigned>(tiles < max_blocks ? tiles : max_blocks);
    transpose_kernel<T, V><<<blocks, kThreads, 0, st>>>(dst + part.base[0], src + part.base[1], s,
                                                        make_offset_calc(part), batches);
    EINEXPR_CUDA_CHECK_LAUNCH("transpose_kernel");
  });
}

template <class T>
void dispatch_transpose(int device, std::byte* dst, const std::byte* src, const TileShape& s,
                        const StridedPart<2>& batch) {
  constexpr auto V = static_cast<std::int64_t>(16 / sizeof(T));
  bool vec = s.li % V == 0 && s.lj % V == 0 && s.src_i_stride % V == 0 && s.dst_j_stride % V == 0 &&
             aligned(dst + batch.base[0] * static_cast<std::int64_t>(sizeof(T)), 16) &&
             aligned(src + batch.base[1] * static_cast<std::int64_t>(sizeof(T)), 16);
  for (const Strides& st : batch.strides)
    for (std::int64_t x : st) vec = vec && x % V == 0;
  auto* d = reinterpret_cast<T*>(dst);
  const auto* sp = reinterpret_cast<const T*>(src);
  if (vec)
    launch_transpose<T, static_cast<int>(V)>(device, d, sp, s, batch);
  else
    launch_transpose<T, 1>(device, d, sp, s, batch);
}

// The tiled path, if `part` is a permutation with a dst-contiguous dim i and a different
// src-contiguous dim j, both at least 8 long (shorter ones waste most of a tile).
bool try_transpose(int device, std::byte* dst, const std::byte* src, const StridedPart<2>& part, std::size_t es) {
  const int rank = static_cast<int>(part.shape.size());
  int i = -1, j = -1;
  for (int d = 0; d < rank; ++d) {
    if (part.strides[0][static_cast<std::size_t>(d)] == 1) i = d;
    if (part.strides[1][static_cast<std::size_t>(d)] == 1) j = d;
  }
  if (i < 0 || j < 0 || i == j || part.shape[static_cast<std::size_t>(i)] < 8 || part.shape[static_cast<std::size_t>(j)] < 8)
    return false;
  TileShape s;
  s.li = part.shape[static_cast<std::size_t>(i)];
  s.lj = part.shape[static_cast<std::size_t>(j)];
  s.src_i_stride = part.strides[1][static_cast<std::size_t>(i)];
  s.dst_j_stride = part.strides[0][static_cast<std::size_t>(j)];
  StridedPart<2> batch;
  batch.base = part.base;
  for (int d = 0; d < rank; ++d) {
    if (d == i || d == j) continue;
    const auto ud = static_cast<std::size_t>(d);
    batch.shape.push_back(part.shape[ud]);
    for (std::size_t v = 0; v < 2; ++v) batch.strides[v].push_back(part.strides[v][ud]);
  }
  switch (es) {
    case 1: dispatch_transpose<std::uint8_t>(device, dst, src, s, batch); return true;
    case 2: dispatch_transpose<std::uint16_t>(device, dst, src, s, batch); return true;
    case 4: dispatch_transpose<std::uint32_t>(device, dst, src, s, batch); return true;
    case 8: dispatch_transpose<std::uint64_t>(device, dst, src, s, batch); return true;
    default: return false;
  }
}

}  // namespace

void copy_values(int device, std::byte* dst, const Layout& dst_layout, const std::byte* src, const Layout& src_layout,
                 std::size_t element_size) {
  EINEXPR_ASSERT(dst_layout.shape == src_layout.shape, "copy_values: shapes differ");
  if (checked_numel(dst_layout.shape) == 0) return;
  const CollapsedDims c = collapse_dims(dst_layout.shape, {&dst_layout.strides, &src_layout.strides});
  StridedPart<2> part;
  part.shape = c.shape;
  part.strides = {c.strides[0], c.strides[1]};
  part.base = {dst_layout.offset, src_layout.offset};
  DeviceGuard guard(device);
  if (try_transpose(device, dst, src, part, element_size)) return;
  backend::cuda_copy_strided(device, dst, dst_layout, src, src_layout, element_size);
}

void convert_values(int device, std::byte* dst, const Layout& dst_layout, DType dst_dtype, const std::byte* src,
                    const Layout& src_layout, DType src_dtype) {
  backend::cuda_convert_strided(device, dst, dst_layout, dst_dtype, src, src_layout, src_dtype);
}

void zero_bytes(int device, std::byte* dst, std::size_t bytes) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  EINEXPR_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream(device)));
}

}  // namespace einexpr::gpu
