// ReduceStep on the GPU: sum, mean, max, min, prod, any, all over any set of axes of a
// strided source.
//
// Planned once (plan_reduction): kept and reduced dims are each sorted by source stride
// and collapsed, so the reduced elements of one output are a short loop nest. Then:
//   inner  the source's unit-stride dim is reduced: one warp per output, lanes walk the
//          reduced elements 32 apart (coalesced), then combine with warp shuffles;
//   outer  otherwise: one thread per output, adjacent threads on adjacent outputs (the
//          source's unit-stride dim is kept, so each step of the walk is coalesced).
// When outputs are too few to fill the GPU, the reduced range is split: each (output,
// split) writes a partial accumulator to a workspace and a second kernel combines them.
// Accumulators (reduce_ops.cuh): sums and products of f32 and the reduced floats in f64, of
// f64 in f64, of integers in int64 (they wrap like numpy), 0/1 for bool; max / min in the
// compute type (they propagate NaN); rounded to the dtype once, at the end. var / std fold
// (count, mean, m2) and logsumexp (max, sum of exp(x - max)) in double, which
// reduce_plan.cpp never splits.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>

#include "../../../runtime/cuda/element.cuh"
#include "../../../runtime/cuda/indexing.cuh"
#include "cuda_check.hpp"
#include "einexpr/runtime/strided.hpp"
#include "kernels.hpp"
#include "reduce_ops.cuh"

namespace einexpr::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct ReduceArgs {
  OffsetCalc<2> kept;              // output index -> (src offset, dst offset)
  OffsetCalc<1> reduced;           // reduced index -> src offset, when reduced_rank > 1
  std::int64_t reduced_stride = 0; // when reduced_rank == 1
  int reduced_rank = 0;
  std::uint32_t outputs = 0;
  std::int64_t count = 0, splits = 1, chunk = 0;
  std::int64_t correction = 1;
  bool mean = false;

  __device__ __forceinline__ std::int64_t reduced_offset(std::int64_t r) const {
    if (reduced_rank == 1) return r * reduced_stride;
    if (reduced_rank == 0) return 0;
    std::int64_t off[1];
    reduced.offsets(static_cast<std::uint32_t>(r), off);
    return off[0];
  }
};

template <class T>
__device__ __forceinline__ T shuffle_xor(T v, int mask) {
  if constexpr (sizeof(T) < 4) return static_cast<T>(__shfl_xor_sync(0xFFFFFFFFu, static_cast<unsigned>(v), mask));
  else return __shfl_xor_sync(0xFFFFFFFFu, v, mask);
}
__device__ __forceinline__ Moments shuffle_xor(Moments v, int mask) {
  return Moments(shuffle_xor(v.mean, mask), shuffle_xor(v.m2, mask), shuffle_xor(v.n, mask));
}
template <class C>
__device__ __forceinline__ MaxSum<C> shuffle_xor(MaxSum<C> v, int mask) {
  return MaxSum<C>(shuffle_xor(v.max, mask), shuffle_xor(v.sum, mask));
}

// Writes one output: the accumulator, finished (mean divides, in the accumulator's type) and
// rounded to S.
template <class S, class Op>
__device__ __forceinline__ void store_output(const ReduceArgs& a, S* dst, std::uint32_t o, typename Op::Acc acc) {
  using C = compute_t<S>;
  const C value = finish_value<Op, typename Op::Acc, C>(acc, a.mean, a.count, a.correction);
  std::int64_t off[2];
  a.kept.offsets(o, off);
  dst[off[1]] = Elem<S>::store(value);
}

// One warp per (output, split); partials[o * splits + s] when split.
template <class S, class Op>
__global__ void __launch_bounds__(kThreads) reduce_inner(const S* __restrict__ src, S* __restrict__ dst,
                                                         typename Op::Acc* partials, ReduceArgs a) {
  using Acc = typename Op::Acc;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t units = static_cast<std::int64_t>(a.outputs) * a.splits;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kWarps;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; w < units; w += step) {
    const auto o = static_cast<std::uint32_t>(w / a.splits);
    const std::int64_t s = w % a.splits;
    std::int64_t off[2];
    a.kept.offsets(o, off);
    const S* p = src + off[0];
    const std::int64_t begin = s * a.chunk, end = min(a.count, begin + a.chunk);
    const auto load = [&](std::int64_t r) { return static_cast<Acc>(Elem<S>::load(p[a.reduced_offset(r)])); };
    Acc acc = lane_fold<Op>(load, begin, end, lane);
#pragma unroll
    for (int m = 16; m >= 1; m /= 2) acc = Op::combine(acc, shuffle_xor(acc, m));
    if (lane == 0) {
      if (partials != nullptr) partials[w] = acc;
      else store_output<S, Op>(a, dst, o, acc);
    }
  }
}

// One thread per (output, split), adjacent threads on adjacent outputs; partials[s * outputs + o].
template <class S, class Op>
__global__ void __launch_bounds__(kThreads) reduce_outer(const S* __restrict__ src, S* __restrict__ dst,
                                                         typename Op::Acc* partials, ReduceArgs a) {
  using Acc = typename Op::Acc;
  const std::int64_t units = static_cast<std::int64_t>(a.outputs) * a.splits;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; t < units; t += step) {
    const auto o = static_cast<std::uint32_t>(t % a.outputs);
    const std::int64_t s = t / a.outputs;
    std::int64_t off[2];
    a.kept.offsets(o, off);
    const S* p = src + off[0];
    const std::int64_t begin = s * a.chunk, end = min(a.count, begin + a.chunk);
    const auto load = [&](std::int64_t r) { return static_cast<Acc>(Elem<S>::load(p[a.reduced_offset(r)])); };
    const Acc acc = thread_fold<Op>(load, begin, end);
    if (partials != nullptr) partials[t] = acc;
    else store_output<S, Op>(a, dst, o, acc);
  }
}

// Second pass: each output combines its splits' partials.
template <class S, class Op>
__global__ void __launch_bounds__(kThreads) reduce_partials(const typename Op::Acc* __restrict__ partials,
                                                            S* __restrict__ dst, ReduceArgs a, bool by_output) {
  using Acc = typename Op::Acc;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t o = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; o < a.outputs; o += step) {
    Acc acc = Op::identity();
    for (std::int64_t s = 0; s < a.splits; ++s)
      acc = Op::combine(acc, partials[by_output ? o * a.splits + s : s * a.outputs + o]);
    store_output<S, Op>(a, dst, static_cast<std::uint32_t>(o), acc);
  }
}

ReduceArgs make_args(const ReducePlan& plan) {
  ReduceArgs a;
  StridedPart<2> kept;
  kept.shape = plan.kept;
  kept.strides = {plan.kept_src, plan.kept_dst};
  a.kept = make_offset_calc(kept);
  a.reduced_rank = static_cast<int>(plan.reduced.size());
  if (a.reduced_rank == 1) a.reduced_stride = plan.reduced_src[0];
  if (a.reduced_rank > 1) {
    StridedPart<1> reduced;
    reduced.shape = plan.reduced;
    reduced.strides = {plan.reduced_src};
    a.reduced = make_offset_calc(reduced);
  }
  a.outputs = static_cast<std::uint32_t>(plan.outputs);
  a.count = plan.count;
  a.splits = plan.splits;
  a.chunk = plan.chunk;
  a.mean = plan.op == Reduction::mean;
  a.correction = plan.correction;
  return a;
}

unsigned grid_for(int device, std::int64_t units, int per_block) {
  const std::int64_t cap = static_cast<std::int64_t>(properties(device).multiProcessorCount) * 32;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(cap, (units + per_block - 1) / per_block)));
}

template <class S, class Op>
void launch(int device, const ReducePlan& plan, std::byte* dst, const std::byte* src, std::byte* partials) {
  using Acc = typename Op::Acc;
  const cudaStream_t st = stream(device);
  const ReduceArgs a = make_args(plan);
  const auto* s = reinterpret_cast<const S*>(src) + plan.src_offset;
  auto* d = reinterpret_cast<S*>(dst) + plan.dst_offset;
  auto* part = plan.splits > 1 ? reinterpret_cast<Acc*>(partials) : nullptr;
  const std::int64_t units = plan.outputs * plan.splits;
  if (plan.kind == ReducePlan::Kind::inner) {
    reduce_inner<S, Op><<<grid_for(device, units, kWarps), kThreads, 0, st>>>(s, d, part, a);
  } else {
    reduce_outer<S, Op><<<grid_for(device, units, kThreads), kThreads, 0, st>>>(s, d, part, a);
  }
  EINEXPR_CUDA_CHECK_LAUNCH("reduce kernel");
  if (part == nullptr) return;
  reduce_partials<S, Op><<<grid_for(device, plan.outputs, kThreads), kThreads, 0, st>>>(
      part, d, a, plan.partials_by_output());
  EINEXPR_CUDA_CHECK_LAUNCH("reduce_partials");
}

}  // namespace

void run_reduction(int device, const ReducePlan& plan, std::byte* dst, const std::byte* src, std::byte* partials) {
  if (plan.outputs == 0) return;
  DeviceGuard guard(device);
  visit_dtype(plan.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = compute_t<S>;
    if constexpr (std::is_same_v<S, bool_t>) {
      switch (plan.op) {
        case Reduction::any: case Reduction::max: return launch<S, AnyOp<C>>(device, plan, dst, src, partials);
        case Reduction::all: case Reduction::min: return launch<S, AllOp<C>>(device, plan, dst, src, partials);
        default: EINEXPR_ASSERT(false, "this reduction of bool should have been rejected by the planner");
      }
    } else {
      switch (plan.op) {
        case Reduction::sum: case Reduction::mean: return launch<S, SumOp<C>>(device, plan, dst, src, partials);
        case Reduction::prod: return launch<S, ProdOp<C>>(device, plan, dst, src, partials);
        case Reduction::max: return launch<S, MaxOp<C>>(device, plan, dst, src, partials);
        case Reduction::min: return launch<S, MinOp<C>>(device, plan, dst, src, partials);
        case Reduction::var:
        case Reduction::std:
        case Reduction::logsumexp:
          if constexpr (std::is_floating_point_v<C>) {
            if (plan.op == Reduction::var) return launch<S, MomentsOp<C, false>>(device, plan, dst, src, partials);
            if (plan.op == Reduction::std) return launch<S, MomentsOp<C, true>>(device, plan, dst, src, partials);
            return launch<S, LogSumExpOp<C>>(device, plan, dst, src, partials);
          } else {  // only instantiated for integers, so nvcc sees no unreachable code
            EINEXPR_ASSERT(false, "var / std / logsumexp of integers should have been rejected by the planner");
            return;
          }
        default: EINEXPR_ASSERT(false, "any / all of a non-bool dtype should have been rejected by the planner");
      }
    }
  });
}

}  // namespace einexpr::gpu
