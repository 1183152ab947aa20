#pragma once
// Private, CUDA builds only (nvcc): strided indexing for elementwise kernels.
//
// An OffsetCalc<N> turns a linear index (row-major over a shape) into N element offsets,
// one per view (destination, sources). Division by each length uses a precomputed magic
// number (Granlund-Montgomery, as in PyTorch's IntDivider): a multiply-high, an add and a
// shift instead of a 30-instruction integer division. That needs 32-bit linear indices:
// for_each_part() cuts bigger problems (more than 2^31 - 1 elements, or more than
// kMaxRank dims after collapsing) into parts that fit, each with its own base offsets.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/layout.hpp"
#include "element.cuh"

namespace einexpr::gpu {

inline constexpr int kMaxRank = 12;
inline constexpr std::int64_t kMaxIndex = 0x7FFFFFFF;  // linear indices stay below 2^31

/// n / d for 0 <= n < 2^31 and 1 <= d <= 2^31.
struct IntDivider {
  std::uint32_t divisor = 1;
  std::uint32_t magic = 1;
  std::uint32_t shift = 0;

  IntDivider() = default;
  explicit IntDivider(std::uint32_t d) : divisor(d) {
    EINEXPR_ASSERT(d >= 1 && d <= 0x80000000u, "IntDivider: divisor out of range");
    while (shift < 32 && (std::uint64_t{1} << shift) < d) ++shift;
    const std::uint64_t m = ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - d)) / d + 1;
    EINEXPR_ASSERT(m <= 0xFFFFFFFFull, "IntDivider: magic number overflows");
    magic = static_cast<std::uint32_t>(m);
  }
  EINEXPR_HD std::uint32_t div(std::uint32_t n) const {
    const std::uint32_t t = static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * magic) >> 32);
    return (t + n) >> shift;
  }
};

/// Linear index -> N offsets (in elements). Dims are stored innermost first.
template <int N>
struct OffsetCalc {
  int rank = 0;
  IntDivider sizes[kMaxRank];
  std::int64_t strides[kMaxRank][N];

  __device__ __forceinline__ void offsets(std::uint32_t linear, std::int64_t (&out)[N]) const {
#pragma unroll
    for (int v = 0; v < N; ++v) out[v] = 0;
#pragma unroll
    for (int d = 0; d < kMaxRank; ++d) {
      if (d == rank) break;
      const std::uint32_t q = sizes[d].div(linear);
      const std::uint32_t r = linear - q * sizes[d].divisor;
#pragma unroll
      for (int v = 0; v < N; ++v) out[v] += static_cast<std::int64_t>(r) * strides[d][v];
      linear = q;
    }
  }
};

/// A shape (outermost first, every length >= 1) with N views' strides and base offsets.
template <int N>
struct StridedPart {
  Shape shape;
  std::array<Strides, N> strides;
  std::array<std::int64_t, N> base{};

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (std::int64_t len : shape) n *= len;
    return n;
  }
};

/// The OffsetCalc of a part with rank <= kMaxRank and fewer than 2^31 elements.
template <int N>
OffsetCalc<N> make_offset_calc(const StridedPart<N>& part) {
  EINEXPR_ASSERT(part.shape.size() <= static_cast<std::size_t>(kMaxRank), "make_offset_calc: rank too large");
  OffsetCalc<N> calc;
  calc.rank = static_cast<int>(part.shape.size());
  for (int d = 0; d < calc.rank; ++d) {
    const std::size_t src = part.shape.size() - 1 - static_cast<std::size_t>(d);
    calc.sizes[d] = IntDivider(static_cast<std::uint32_t>(part.shape[src]));
    for (int v = 0; v < N; ++v) calc.strides[d][v] = part.strides[static_cast<std::size_t>(v)][src];
  }
  return calc;
}

/// Calls fn(part) for pieces of `whole` that each have rank <= kMaxRank and at most
/// kMaxIndex elements, together covering every index once. Empty shapes give no calls.
template <int N, class Fn>
void for_each_part(const StridedPart<N>& whole, Fn&& fn) {
  for (std::int64_t len : whole.shape)
    if (len == 0) return;
  if (whole.shape.size() <= static_cast<std::size_t>(kMaxRank) && whole.numel() <= kMaxIndex) {
    fn(whole);
    return;
  }
  StridedPart<N> rest = whole;  // without dim 0
  rest.shape.erase(rest.shape.begin());
  for (auto& s : rest.strides) s.erase(s.begin());
  const std::int64_t inner = rest.numel();
  const std::int64_t len0 = whole.shape[0];
  if (whole.shape.size() <= static_cast<std::size_t>(kMaxRank) && inner <= kMaxIndex) {
    const std::int64_t chunk = kMaxIndex / inner;  // rows of dim 0 per part
    for (std::int64_t i = 0; i < len0; i += chunk) {
      StridedPart<N> part = whole;
      part.shape[0] = std::min(chunk, len0 - i);
      for (int v = 0; v < N; ++v) part.base[v] += i * whole.strides[v][0];
      fn(part);
    }
    return;
  }
  for (std::int64_t i = 0; i < len0; ++i) {
    StridedPart<N> part = rest;
    for (int v = 0; v < N; ++v) part.base[v] = whole.base[v] + i * whole.strides[v][0];
    for_each_part<N>(part, fn);
  }
}

/// Blocks of `threads` threads, each doing `per_thread` of n elements.
inline unsigned blocks_for(std::int64_t n, int threads, int per_thread) {
  const std::int64_t per_block = static_cast<std::int64_t>(threads) * per_thread;
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

}  // namespace einexpr::gpu
