// Our own contraction kernels, for what cuBLAS does not do:
//   contract_integer  i64 / i32 batched GEMM, exact: 16 x 16 output tiles through shared
//                     memory, int64 accumulation in uint64 (wraps like numpy), any strides
//   contract_loop     ContractStep::generic (the planner's Hadamard-like products, with no
//                     contracted dim and a missing m or n): one thread per output element,
//                     any dtype but bool, accumulating as sums do (reduce_ops.cuh: f32 in
//                     double, int64 in uint64)
#include <cstdint>
#include <type_traits>

#include "../../../runtime/cuda/element.cuh"
#include "../../../runtime/cuda/indexing.cuh"
#include "cuda_check.hpp"
#include "reduce_ops.cuh"
#include "kernels.hpp"

namespace einexpr::gpu {

namespace {

constexpr int kTile = 16;
constexpr int kGemmThreads = kTile * kTile;
constexpr int kLoopThreads = 256;

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0, c_m = 0, c_n = 0;  // strides
  std::int64_t tiles_m = 0, tiles_n = 0;
};

template <class S>
__global__ void __launch_bounds__(kGemmThreads) integer_gemm(S* __restrict__ c, const S* __restrict__ a,
                                                             const S* __restrict__ b, GemmShape g,
                                                             OffsetCalc<3> batch, std::uint32_t batches) {
  __shared__ std::uint64_t as[kTile][kTile + 1];
  __shared__ std::uint64_t bs[kTile][kTile + 1];
  const int tx = static_cast<int>(threadIdx.x) % kTile, ty = static_cast<int>(threadIdx.x) / kTile;
  const std::int64_t tiles = g.tiles_m * g.tiles_n * batches;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t tn = t % g.tiles_n, rest = t / g.tiles_n;
    const std::int64_t tm = rest % g.tiles_m;
    std::int64_t off[3];  // c, a, b
    batch.offsets(static_cast<std::uint32_t>(rest / g.tiles_m), off);
    const std::int64_t row = tm * kTile + ty, col = tn * kTile + tx;
    std::uint64_t acc = 0;
    for (std::int64_t k0 = 0; k0 < g.k; k0 += kTile) {
      as[ty][tx] = row < g.m && k0 + tx < g.k
                       ? static_cast<std::uint64_t>(Elem<S>::load(a[off[1] + row * g.a_m + (k0 + tx) * g.a_k]))
                       : 0;
      bs[ty][tx] = k0 + ty < g.k && col < g.n
                       ? static_cast<std::uint64_t>(Elem<S>::load(b[off[2] + (k0 + ty) * g.b_k + col * g.b_n]))
                       : 0;
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
      __syncthreads();
    }
    if (row < g.m && col < g.n) c[off[0] + row * g.c_m + col * g.c_n] = Elem<S>::store(static_cast<std::int64_t>(acc));
  }
}

template <class S>
__global__ void __launch_bounds__(kLoopThreads) loop_gemm(S* __restrict__ c, const S* __restrict__ a,
                                                          const S* __restrict__ b, OffsetCalc<3> calc, std::uint32_t n,
                                                          std::int64_t k, std::int64_t a_k, std::int64_t b_k) {
  using C = compute_t<S>;
  using Acc = wide_t<C>;  // f32 dot products add in double, as reductions (reduce_ops.cuh)
  for (std::uint32_t i = blockIdx.x * kLoopThreads + threadIdx.x; i < n; i += gridDim.x * kLoopThreads) {
    std::int64_t off[3];  // c, a, b
    calc.offsets(i, off);
    Acc acc = 0;
    for (std::int64_t kk = 0; kk < k; ++kk)
      acc += static_cast<Acc>(Elem<S>::load(a[off[1] + kk * a_k])) * static_cast<Acc>(Elem<S>::load(b[off[2] + kk * b_k]));
    c[off[0]] = Elem<S>::store(static_cast<C>(acc));
  }
}

struct Operands {
  int nb;
  std::int64_t m, n, k;
};

Operands sizes(int batch_dims, const Layout& dst, const Layout& a) {
  const auto nb = static_cast<std::size_t>(batch_dims);
  return {batch_dims, dst.shape[nb], dst.shape[nb + 1], a.shape[nb + 1]};
}

template <class S>
void launch_integer(int device, const Operands& o, S* c, const Layout& cl, const S* a, const Layout& al, const S* b,
                    const Layout& bl) {
  const auto nb = static_cast<std::size_t>(o.nb);
  GemmShape g{o.m, o.n, o.k, al.strides[nb], al.strides[nb + 1], bl.strides[nb], bl.strides[nb + 1],
              cl.strides[nb], cl.strides[nb + 1], (o.m + kTile - 1) / kTile, (o.n + kTile - 1) / kTile};
  StridedPart<3> batch;
  batch.shape.assign(cl.shape.begin(), cl.shape.begin() + o.nb);
  batch.strides = {Strides(cl.strides.begin(), cl.strides.begin() + o.nb), Strides(al.strides.begin(), al.strides.begin() + o.nb),
                   Strides(bl.strides.begin(), bl.strides.begin() + o.nb)};
  batch.base = {cl.offset, al.offset, bl.offset};
  const std::int64_t cap = static_cast<std::int64_t>(properties(device).multiProcessorCount) * 16;
  for_each_part<3>(batch, [&](const StridedPart<3>& part) {
    const auto batches = static_cast<std::uint32_t>(part.numel());
    const std::int64_t tiles = g.tiles_m * g.tiles_n * batches;
    integer_gemm<S><<<static_cast<unsigned>(tiles < cap ? tiles : cap), kGemmThreads, 0, stream(device)>>>(
        c + part.base[0], a + part.base[1], b + part.base[2], g, make_offset_calc(part), batches);
    EINEXPR_CUDA_CHECK_LAUNCH("integer_gemm");
  });
}

template <class S>
void launch_loop(int device, const Operands& o, S* c, const Layout& cl, const S* a, const Layout& al, const S* b,
                 const Layout& bl) {
  const auto nb = static_cast<std::size_t>(o.nb);
  StridedPart<3> whole;  // over dst's [B.., m, n]; a has stride 0 along n, b along m
  whole.shape = cl.shape;
  whole.strides = {cl.strides, Strides(al.strides.begin(), al.strides.begin() + o.nb),
                   Strides(bl.strides.begin(), bl.strides.begin() + o.nb)};
  whole.strides[1].push_back(al.strides[nb]);
  whole.strides[1].push_back(0);
  whole.strides[2].push_back(0);
  whole.strides[2].push_back(bl.strides[nb + 1]);
  whole.base = {cl.offset, al.offset, bl.offset};
  const std::int64_t cap = static_cast<std::int64_t>(properties(device).multiProcessorCount) * 32;
  for_each_part<3>(whole, [&](const StridedPart<3>& part) {
    const auto n = static_cast<std::uint32_t>(part.numel());
    const std::int64_t blocks = (n + kLoopThreads - 1) / kLoopThreads;
    loop_gemm<S><<<static_cast<unsigned>(blocks < cap ? blocks : cap), kLoopThreads, 0, stream(device)>>>(
        c + part.base[0], a + part.base[1], b + part.base[2], make_offset_calc(part), n, o.k, al.strides[nb + 1],
        bl.strides[nb]);
    EINEXPR_CUDA_CHECK_LAUNCH("loop_gemm");
  });
}

}  // namespace

void contract_integer(int device, DType dtype, int batch_dims, std::byte* dst, const Layout& dst_layout,
                      const std::byte* a, const Layout& a_layout, const std::byte* b, const Layout& b_layout) {
  const Operands o = sizes(batch_dims, dst_layout, a_layout);
  if (o.m == 0 || o.n == 0) return;
  DeviceGuard guard(device);
  if (dtype == DType::i64) {
    launch_integer(device, o, reinterpret_cast<std::int64_t*>(dst), dst_layout, reinterpret_cast<const std::int64_t*>(a),
                   a_layout, reinterpret_cast<const std::int64_t*>(b), b_layout);
  } else {
    EINEXPR_ASSERT(dtype == DType::i32, "contract_integer: not an integer dtype");
    launch_integer(device, o, reinterpret_cast<std::int32_t*>(dst), dst_layout, reinterpret_cast<const std::int32_t*>(a),
                   a_layout, reinterpret_cast<const std::int32_t*>(b), b_layout);
  }
}

void contract_loop(int device, DType dtype, int batch_dims, std::byte* dst, const Layout& dst_layout,
                   const std::byte* a, const Layout& a_layout, const std::byte* b, const Layout& b_layout) {
  const Operands o = sizes(batch_dims, dst_layout, a_layout);
  DeviceGuard guard(device);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<S, bool_t>) {
      EINEXPR_ASSERT(false, "einsum on bool should have been rejected by the planner");
    } else {
      launch_loop(device, o, reinterpret_cast<S*>(dst), dst_layout, reinterpret_cast<const S*>(a), a_layout,
                  reinterpret_cast<const S*>(b), b_layout);
    }
  });
}

}  // namespace einexpr::gpu
