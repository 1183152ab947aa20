// NormStep on the GPU: softmax, log_softmax, layer_norm and rms_norm along some dims, and
// their backward passes, by the CPU's formulas (codegen/lower/cpu/vec_math_rows.hpp forward,
// norm_cpu.cpp backward):
//   softmax      exp(x - m) · (1 / sum exp(x - m)), m the row's maximum
//   log_softmax  (x - m) - log(sum exp(x - m))
//   layer_norm   ((x - p) - d) / sqrt(var + eps), p = the row's first element, d = mean(x - p),
//                var = mean(((x - p) - d)²): two passes, centered so rows far from 0 keep digits
//   rms_norm     x / sqrt(mean(x²) + eps)
// and the backward rows with double sums (gradients are accounted and checked, not a hot
// path). The dims split into rows (one per index of the kept dims) of n elements (the
// normalized dims). A row of at most 1024 elements is one warp's (eight rows a block), a
// longer one a whole block's; each pass over the row reads it from global memory (the L2
// holds it between passes). Forward arithmetic is in the dtype's compute type (Elem<S>::C),
// as on the CPU, and the row sums add in double (a thread adds n / 32 or n / 256 values
// before the tree: in f32 its error would grow with the row); NaN or +inf in a row, or a row of -inf, gives NaN everywhere.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../../../runtime/cuda/element.cuh"
#include "../../../runtime/cuda/indexing.cuh"
#include "cuda_check.hpp"
#include "einexpr/runtime/strided.hpp"
#include "kernels.hpp"

namespace einexpr::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr std::int64_t kWarpRow = 1024;  // rows up to this many elements: one warp each

/// What every thread of a launch needs: the row's element offsets (dst, src 0, src 1) and
/// the rows' (one part of the kept dims, from for_each_part).
struct NormArgs {
  OffsetCalc<3> inner;             // when inner_rank > 1
  std::int64_t inner_stride[3] = {0, 0, 0};  // when inner_rank == 1
  int inner_rank = 0;
  OffsetCalc<3> outer;
  std::uint32_t rows = 0, n = 0;
  Normalization kind = Normalization::softmax;
  double eps = 0;

  __device__ __forceinline__ std::int64_t at(std::uint32_t k, int view) const {
    if (inner_rank == 1) return static_cast<std::int64_t>(k) * inner_stride[view];
    if (inner_rank == 0) return 0;
    std::int64_t off[3];
    inner.offsets(k, off);
    return off[view];
  }
};

template <class C>
__device__ __forceinline__ C exp_of(C x) {
  if constexpr (std::is_same_v<C, float>) return expf(x);
  else return exp(x);
}
template <class C>
__device__ __forceinline__ C log_of(C x) {
  if constexpr (std::is_same_v<C, float>) return logf(x);
  else return log(x);
}
template <class C>
__device__ __forceinline__ C sqrt_of(C x) {
  if constexpr (std::is_same_v<C, float>) return sqrtf(x);
  else return sqrt(x);
}

struct Add {
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct Max {  // NaN in a row reaches every output through the sum, whatever max keeps
  template <class T>
  __device__ __forceinline__ T operator()(T a, T b) const { return b > a ? b : a; }
};

/// Combines v over the TPR threads of a row (a warp, or the whole block); every thread of the
/// row gets the same result, combined in the same order.
template <int TPR, class T, class F>
__device__ __forceinline__ T row_reduce(T v, F combine, T* shared) {
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) v = combine(v, __shfl_xor_sync(0xFFFFFFFFu, v, m));
  if constexpr (TPR == 32) {
    return v;
  } else {
    const int warp = static_cast<int>(threadIdx.x) / 32;
    __syncthreads();  // the previous reduction's readers are done with `shared`
    if (threadIdx.x % 32 == 0) shared[warp] = v;
    __syncthreads();
    v = shared[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) v = combine(v, shared[w]);
    return v;
  }
}

/// The row this thread works on (or rows when past the last) and its lane in the row.
template <int TPR>
__device__ __forceinline__ std::uint32_t row_of() {
  return TPR == 32 ? blockIdx.x * kWarps + threadIdx.x / 32 : blockIdx.x;
}

template <class S, int TPR>
__global__ void __launch_bounds__(kThreads) norm_forward(NormArgs a, S* __restrict__ dst, const S* __restrict__ src) {
  using C = typename Elem<S>::C;
  __shared__ C shared[kWarps];
  __shared__ double shared_sum[kWarps];  // the row sums add in double (reduce_ops.cuh's reason)
  const std::uint32_t row = row_of<TPR>();
  if (row >= a.rows) return;  // whole warps (TPR 32); never for a block's row
  const auto lane = static_cast<std::uint32_t>(threadIdx.x % TPR);
  std::int64_t base[3];
  a.outer.offsets(row, base);
  S* y = dst + base[0];
  const S* x = src + base[1];
  const std::uint32_t n = a.n;
  auto X = [&](std::uint32_t k) { return Elem<S>::load(x[a.at(k, 1)]); };
  auto store = [&](std::uint32_t k, C v) { y[a.at(k, 0)] = Elem<S>::store(v); };
  switch (a.kind) {
    case Normalization::softmax:
    case Normalization::log_softmax: {
      C m = -C(INFINITY);
      for (std::uint32_t k = lane; k < n; k += TPR) m = Max{}(m, X(k));
      m = row_reduce<TPR>(m, Max{}, shared);
      double s = 0;
      for (std::uint32_t k = lane; k < n; k += TPR) s += exp_of(X(k) - m);
      s = row_reduce<TPR>(s, Add{}, shared_sum);
      if (a.kind == Normalization::softmax) {
        const C r = C(1.0 / s);
        for (std::uint32_t k = lane; k < n; k += TPR) store(k, exp_of(X(k) - m) * r);
      } else {
        const C ls = C(log(s));  // (x - m) - log s: m + log s would round away x's low digits
        for (std::uint32_t k = lane; k < n; k += TPR) store(k, (X(k) - m) - ls);
      }
      return;
    }
    case Normalization::layer_norm: {
      const C p = X(0);
      double sum = 0;
      for (std::uint32_t k = lane; k < n; k += TPR) sum += X(k) - p;
      const C d = C(row_reduce<TPR>(sum, Add{}, shared_sum) / double(n));
      double var = 0;
      for (std::uint32_t k = lane; k < n; k += TPR) {
        const C c = (X(k) - p) - d;
        var += c * c;
      }
      var = row_reduce<TPR>(var, Add{}, shared_sum) / double(n);
      const C r = C(1) / sqrt_of(C(var) + static_cast<C>(a.eps));
      for (std::uint32_t k = lane; k < n; k += TPR) store(k, ((X(k) - p) - d) * r);
      return;
    }
    case Normalization::rms_norm: {
      double ms = 0;
      for (std::uint32_t k = lane; k < n; k += TPR) {
        const C v = X(k);
        ms += v * v;
      }
      ms = row_reduce<TPR>(ms, Add{}, shared_sum) / double(n);
      const C r = C(1) / sqrt_of(C(ms) + static_cast<C>(a.eps));
      for (std::uint32_t k = lane; k < n; k += TPR) store(k, X(k) * r);
      return;
    }
  }
}

/// dX from dY (src 0) and v (src 1: Y for softmax and log_softmax, X for the norms), as
/// norm_cpu.cpp's backward_row: sums in double, dX rounded once to S.
template <class S, int TPR>
__global__ void __launch_bounds__(kThreads) norm_backward(NormArgs a, S* __restrict__ dst, const S* __restrict__ dy_base,
                                                          const S* __restrict__ v_base) {
  __shared__ double shared[kWarps];
  const std::uint32_t row = row_of<TPR>();
  if (row >= a.rows) return;
  const auto lane = static_cast<std::uint32_t>(threadIdx.x % TPR);
  std::int64_t base[3];
  a.outer.offsets(row, base);
  S* dx = dst + base[0];
  const S* dy = dy_base + base[1];
  const S* v = v_base + base[2];
  const std::uint32_t n = a.n;
  auto DY = [&](std::uint32_t k) { return static_cast<double>(Elem<S>::load(dy[a.at(k, 1)])); };
  auto V = [&](std::uint32_t k) { return static_cast<double>(Elem<S>::load(v[a.at(k, 2)])); };
  auto store = [&](std::uint32_t k, double g) { dx[a.at(k, 0)] = Elem<S>::store(static_cast<typename Elem<S>::C>(g)); };
  const double inv_n = 1.0 / static_cast<double>(n);
  switch (a.kind) {
    case Normalization::softmax: {  // y · (dY - sum(dY · y))
      double s = 0;
      for (std::uint32_t k = lane; k < n; k += TPR) s += DY(k) * V(k);
      s = row_reduce<TPR>(s, Add{}, shared);
      for (std::uint32_t k = lane; k < n; k += TPR) store(k, V(k) * (DY(k) - s));
      return;
    }
    case Normalization::log_softmax: {  // dY - exp(y) · sum(dY)
      double s = 0;
      for (std::uint32_t k = lane; k < n; k += TPR) s += DY(k);
      s = row_reduce<TPR>(s, Add{}, shared);
      for (std::uint32_t k = lane; k < n; k += TPR) store(k, DY(k) - exp(V(k)) * s);
      return;
    }
    case Normalization::layer_norm:
    case Normalization::rms_norm: {
      // x̂ = (x - mean)·r (rms: x·r), r = 1/sqrt(var + eps) (rms: mean(x²) + eps);
      // dX = r·(dY - mean(dY) - x̂·mean(dY·x̂)) (rms: without mean(dY)).
      const bool centered = a.kind == Normalization::layer_norm;
      double mean = 0;
      if (centered) {
        for (std::uint32_t k = lane; k < n; k += TPR) mean += V(k);
        mean = row_reduce<TPR>(mean, Add{}, shared) * inv_n;
      }
      double m2 = 0;
      for (std::uint32_t k = lane; k < n; k += TPR) m2 += (V(k) - mean) * (V(k) - mean);
      m2 = row_reduce<TPR>(m2, Add{}, shared);
      const double r = 1.0 / sqrt(m2 * inv_n + a.eps);
      double mdy = 0, mdyx = 0;
      for (std::uint32_t k = lane; k < n; k += TPR) {
        mdy += DY(k);
        mdyx += DY(k) * (V(k) - mean) * r;
      }
      mdy = centered ? row_reduce<TPR>(mdy, Add{}, shared) * inv_n : 0.0;
      mdyx = row_reduce<TPR>(mdyx, Add{}, shared) * inv_n;
      for (std::uint32_t k = lane; k < n; k += TPR) store(k, r * (DY(k) - mdy - (V(k) - mean) * r * mdyx));
      return;
    }
  }
}

template <class S, int TPR>
void launch(const NormPlan& plan, const NormArgs& a, cudaStream_t s, std::byte* dst, const std::byte* src0,
            const std::byte* src1, const std::array<std::int64_t, 3>& base) {
  const unsigned blocks = TPR == 32 ? static_cast<unsigned>((a.rows + kWarps - 1) / kWarps) : a.rows;
  S* d = reinterpret_cast<S*>(dst) + base[0];
  const S* x0 = reinterpret_cast<const S*>(src0) + base[1];
  if (!plan.backward) {
    norm_forward<S, TPR><<<blocks, kThreads, 0, s>>>(a, d, x0);
    EINEXPR_CUDA_CHECK_LAUNCH("norm_forward");
  } else {
    norm_backward<S, TPR><<<blocks, kThreads, 0, s>>>(a, d, x0, reinterpret_cast<const S*>(src1) + base[2]);
    EINEXPR_CUDA_CHECK_LAUNCH("norm_backward");
  }
}

}  // namespace

NormPlan plan_normalization(const NormStep& step, const Layout& dst, const std::vector<const Layout*>& srcs,
                            DType dtype) {
  EINEXPR_ASSERT(srcs.size() == (step.backward ? 2u : 1u), "NormStep: wrong number of sources");
  if (!is_floating(dtype))
    throw DTypeError(std::string(name(step.kind)) + " needs a floating dtype, not " + std::string(name(dtype)));
  NormPlan p;
  p.kind = step.kind;
  p.backward = step.backward;
  p.eps = step.eps;
  p.dtype = dtype;
  // Views: dst, src 0, src 1 (a forward step reads no src 1: src 0's layout stands in).
  const std::array<const Layout*, 3> views = {&dst, srcs[0], srcs.size() > 1 ? srcs[1] : srcs[0]};
  Shape inner_shape, outer_shape;
  std::array<Strides, 3> inner_strides, outer_strides;
  for (std::size_t d = 0; d < dst.shape.size(); ++d) {
    const bool normalized = std::find(step.axes.begin(), step.axes.end(), static_cast<int>(d)) != step.axes.end();
    (normalized ? inner_shape : outer_shape).push_back(dst.shape[d]);
    for (std::size_t v = 0; v < 3; ++v)
      (normalized ? inner_strides[v] : outer_strides[v]).push_back(views[v]->strides[d]);
  }
  std::int64_t n = 1;
  for (std::int64_t len : inner_shape) n *= len;
  p.n = n;
  const CollapsedDims inner = collapse_dims(inner_shape, {&inner_strides[0], &inner_strides[1], &inner_strides[2]});
  if (n > kMaxIndex || inner.shape.size() > static_cast<std::size_t>(kMaxRank))
    throw DeviceError(std::string(name(step.kind)) + " on the GPU does not support rows of " + std::to_string(n) +
                      " elements over " + std::to_string(inner.shape.size()) + " strided dims yet (at most " +
                      std::to_string(kMaxIndex) + " elements over " + std::to_string(kMaxRank) +
                      " dims): move the tensor with .to(Device::cpu())");
  p.inner = inner.shape;
  const CollapsedDims outer = collapse_dims(outer_shape, {&outer_strides[0], &outer_strides[1], &outer_strides[2]});
  p.outer = outer.shape;
  for (std::size_t v = 0; v < 3; ++v) {
    p.inner_strides[v] = inner.strides[v];
    p.outer_strides[v] = outer.strides[v];
    p.base[v] = views[v]->offset;
  }
  return p;
}

void run_normalization(int device, const NormPlan& plan, std::byte* dst, const std::byte* src0,
                       const std::byte* src1) {
  if (plan.n == 0) return;
  NormArgs a;
  a.kind = plan.kind;
  a.eps = plan.eps;
  a.n = static_cast<std::uint32_t>(plan.n);
  a.inner_rank = static_cast<int>(plan.inner.size());
  if (a.inner_rank == 1) {
    for (std::size_t v = 0; v < 3; ++v) a.inner_stride[v] = plan.inner_strides[v][0];
  } else if (a.inner_rank > 1) {
    StridedPart<3> row;
    row.shape = plan.inner;
    row.strides = plan.inner_strides;
    a.inner = make_offset_calc(row);
  }
  StridedPart<3> rows;
  rows.shape = plan.outer;
  rows.strides = plan.outer_strides;
  rows.base = plan.base;
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const bool warp_rows = plan.n <= kWarpRow;
  visit_dtype(plan.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<typename Elem<S>::C>) {
      for_each_part<3>(rows, [&](const StridedPart<3>& part) {
        NormArgs args = a;
        args.outer = make_offset_calc(part);
        args.rows = static_cast<std::uint32_t>(part.numel());
        if (warp_rows) launch<S, 32>(plan, args, s, dst, src0, src1, part.base);
        else launch<S, kThreads>(plan, args, s, dst, src0, src1, part.base);
      });
    }
  });
}

}  // namespace einexpr::gpu
