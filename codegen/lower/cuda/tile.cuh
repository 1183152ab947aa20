#pragma once
// Private, CUDA builds only (nvcc): the shared-memory tile of copy_cuda.cu's permutation
// kernel, as host-and-device functions so CPU tests check the mapping (tests/cuda/host).
//
// A tile is TILE x TILE elements: rows r along the destination's contiguous dim, columns
// j along the source's. With V elements per 16-byte vector, TILE = 8V, so a row is 8
// vectors (chunks); chunk c of row r is stored at chunk c ^ ((r / V) % 8). Reading rows
// (16-byte stores, 8 per quarter-warp, one row) touches each chunk once; reading columns
// (V elements of V consecutive rows, one per thread, 8 threads per column chunk) puts the
// 8 row groups of a warp in 8 different chunks. Without vectors (V = 1) the tile is
// 32 x 32 with the classic XOR swizzle j ^ (r % 32).
#include "../../../runtime/cuda/element.cuh"  // EINEXPR_HD

namespace einexpr::gpu {

template <int V>
inline constexpr int tile_of = V == 1 ? 32 : 8 * V;

/// Index in the tile's shared array of element (r, j).
template <int V>
EINEXPR_HD int tile_slot(int r, int j) {
  constexpr int TILE = tile_of<V>;
  constexpr int CH = TILE / V;  // chunks per row
  const int chunk = (j / V) ^ ((r / V) % CH);
  return r * TILE + chunk * V + j % V;
}

}  // namespace einexpr::gpu
