// MapStep on the GPU: every UnaryOp and BinaryOp of plan.hpp, elementwise over strided
// views whose sources may broadcast (stride 0). One kernel per dtype and arity; the
// function is a warp-uniform switch inside it (16 + 6 functions x 8 dtypes would be 176
// kernels for a memory-bound loop). Arithmetic follows plan.hpp: f64 in double, f32 and
// the reduced floats in float, integers in int64 wrapping like numpy (integer division
// truncates toward zero; division by zero gives 0). maximum / minimum propagate NaN, as
// numpy's and torch's do. sigmoid, silu, gelu and gelu_erf use the CPU's formulas
// (codegen/lower/cpu/vec_math_kernels.hpp): exp(-|x|) never overflows, erfc does not cancel,
// and -inf gives the limit -0.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "../../../runtime/cuda/element.cuh"
#include "../../../runtime/cuda/indexing.cuh"
#include "cuda_check.hpp"
#include "einexpr/runtime/strided.hpp"
#include "kernels.hpp"

namespace einexpr::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 4;

/// 1 / (1 + exp(-x)) from e = exp(-|x|): 1/(1+e) for x >= 0, e/(1+e) for x < 0.
template <class C>
__device__ __forceinline__ C sigmoid_of(C x) {
  constexpr bool f = std::is_same_v<C, float>;
  const C e = f ? expf(-fabsf(x)) : exp(-fabs(x));
  const C r = C(1) / (C(1) + e);
  return x < C(0) ? e * r : r;
}

/// y, or -0 where x is -inf (the limit of gelu, gelu_erf and silu).
template <class C>
__device__ __forceinline__ C limit_at_minus_inf(C x, C y) {
  return x == -C(INFINITY) ? C(-0.0) : y;
}

template <class C>
__device__ __forceinline__ C unary(UnaryOp op, C x) {
  if constexpr (std::is_floating_point_v<C>) {
    constexpr bool f = std::is_same_v<C, float>;
    switch (op) {
      case UnaryOp::relu: return x < C(0) ? C(0) : x;  // NaN stays NaN
      case UnaryOp::gelu: {  // 0.5x(1 + tanh(z)) = x·sigmoid(2z)
        const C t = x * (C(1.5957691216057308) + C(1.5957691216057308 * 0.044715) * x * x);
        return limit_at_minus_inf(x, x * sigmoid_of(t));
      }
      case UnaryOp::exp: return f ? expf(x) : exp(x);
      case UnaryOp::log: return f ? logf(x) : log(x);
      case UnaryOp::square: return x * x;
      case UnaryOp::sqrt: return f ? sqrtf(x) : sqrt(x);
      case UnaryOp::rsqrt: return C(1) / (f ? sqrtf(x) : sqrt(x));
      case UnaryOp::neg: return -x;
      case UnaryOp::abs: return f ? fabsf(x) : fabs(x);
      case UnaryOp::sigmoid: return sigmoid_of(x);
      case UnaryOp::tanh: return f ? tanhf(x) : tanh(x);
      case UnaryOp::silu: return limit_at_minus_inf(x, x * sigmoid_of(x));
      case UnaryOp::reciprocal: return C(1) / x;
      case UnaryOp::gelu_erf: {  // 0.5x(1 + erf(x/sqrt 2)) = 0.5x·erfc(-x/sqrt 2)
        const C t = x * C(-0.70710678118654752440);
        return limit_at_minus_inf(x, C(0.5) * x * (f ? erfcf(t) : erfc(t)));
      }
      case UnaryOp::erf: return f ? erff(x) : erf(x);
      case UnaryOp::softplus: return x > C(20) ? x : (f ? log1pf(expf(x)) : log1p(exp(x)));
    }
    return x;
  } else {  // int64: the planner lets only these through
    const auto u = static_cast<std::uint64_t>(x);
    switch (op) {
      case UnaryOp::relu: return x < 0 ? 0 : x;
      case UnaryOp::square: return static_cast<C>(u * u);
      case UnaryOp::neg: return static_cast<C>(std::uint64_t{0} - u);
      case UnaryOp::abs: return x < 0 ? static_cast<C>(std::uint64_t{0} - u) : x;
      default: return x;
    }
  }
}

template <class C>
__device__ __forceinline__ C binary(BinaryOp op, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case BinaryOp::add: return a + b;
      case BinaryOp::sub: return a - b;
      case BinaryOp::mul: return a * b;
      case BinaryOp::div: return a / b;
      case BinaryOp::maximum: return (a > b || is_nan(a)) ? a : b;
      case BinaryOp::minimum: return (a < b || is_nan(a)) ? a : b;
    }
    return a;
  } else {
    const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
    switch (op) {
      case BinaryOp::add: return static_cast<C>(ua + ub);
      case BinaryOp::sub: return static_cast<C>(ua - ub);
      case BinaryOp::mul: return static_cast<C>(ua * ub);
      case BinaryOp::div: return b == 0 ? 0 : b == -1 ? static_cast<C>(std::uint64_t{0} - ua) : a / b;
      case BinaryOp::maximum: return a > b ? a : b;
      case BinaryOp::minimum: return a < b ? a : b;
    }
    return a;
  }
}

template <class S>
__global__ void __launch_bounds__(kThreads) unary_kernel(UnaryOp op, S* __restrict__ dst, const S* __restrict__ src,
                                                         OffsetCalc<2> calc, std::uint32_t n) {
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[2];
      calc.offsets(i, off);
      dst[off[0]] = Elem<S>::store(unary(op, Elem<S>::load(src[off[1]])));
    }
  }
}

template <class S>
__global__ void __launch_bounds__(kThreads) binary_kernel(BinaryOp op, S* __restrict__ dst, const S* a, const S* b,
                                                          OffsetCalc<3> calc, std::uint32_t n) {
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[3];
      calc.offsets(i, off);
      dst[off[0]] = Elem<S>::store(binary(op, Elem<S>::load(a[off[1]]), Elem<S>::load(b[off[2]])));
    }
  }
}

template <int N>
StridedPart<N> collapsed(const std::array<const Layout*, N>& layouts) {
  std::vector<const Strides*> strides;
  for (const Layout* l : layouts) strides.push_back(&l->strides);
  const CollapsedDims c = collapse_dims(layouts[0]->shape, strides);
  StridedPart<N> part;
  part.shape = c.shape;
  for (int v = 0; v < N; ++v) {
    part.strides[static_cast<std::size_t>(v)] = c.strides[static_cast<std::size_t>(v)];
    part.base[static_cast<std::size_t>(v)] = layouts[static_cast<std::size_t>(v)]->offset;
  }
  return part;
}

void check_map_dtype(DType dtype) {
  EINEXPR_ASSERT(dtype != DType::boolean, "map on bool should have been rejected by the planner");
}

}  // namespace

void map_unary(int device, UnaryOp op, DType dtype, std::byte* dst, const Layout& dst_layout, const std::byte* src,
               const Layout& src_layout) {
  check_map_dtype(dtype);
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const StridedPart<2> whole = collapsed<2>({&dst_layout, &src_layout});
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<S, bool_t>) {
      for_each_part<2>(whole, [&](const StridedPart<2>& part) {
        const auto n = static_cast<std::uint32_t>(part.numel());
        unary_kernel<S><<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(
            op, reinterpret_cast<S*>(dst) + part.base[0], reinterpret_cast<const S*>(src) + part.base[1],
            make_offset_calc(part), n);
        EINEXPR_CUDA_CHECK_LAUNCH("unary_kernel");
      });
    }
  });
}

void map_binary(int device, BinaryOp op, DType dtype, std::byte* dst, const Layout& dst_layout, const std::byte* a,
                const Layout& a_layout, const std::byte* b, const Layout& b_layout) {
  check_map_dtype(dtype);
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  const StridedPart<3> whole = collapsed<3>({&dst_layout, &a_layout, &b_layout});
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<S, bool_t>) {
      for_each_part<3>(whole, [&](const StridedPart<3>& part) {
        const auto n = static_cast<std::uint32_t>(part.numel());
        binary_kernel<S><<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(
            op, reinterpret_cast<S*>(dst) + part.base[0], reinterpret_cast<const S*>(a) + part.base[1],
            reinterpret_cast<const S*>(b) + part.base[2], make_offset_calc(part), n);
        EINEXPR_CUDA_CHECK_LAUNCH("binary_kernel");
      });
    }
  });
}

}  // namespace einexpr::gpu
