// MapStep with a GradOp on the GPU: a backward pass's elementwise derivative
// (lower/grad_math.hpp, shared with the CPU) over up to three sources broadcast to dst's
// shape. One kernel per dtype; the derivative is a warp-uniform switch inside it.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../../../runtime/cuda/element.cuh"
#include "../../../runtime/cuda/indexing.cuh"
#include "cuda_check.hpp"
#include "einexpr/runtime/strided.hpp"
#include "kernels.hpp"
#include "lower/grad_math.hpp"

namespace einexpr::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 4;

template <class S>
__global__ void __launch_bounds__(kThreads) grad_kernel(GradOp op, int arity, S* __restrict__ dst, const S* dy,
                                                        const S* v1, const S* v2, OffsetCalc<4> calc,
                                                        std::uint32_t n) {
  using C = typename Elem<S>::C;
  const std::uint32_t base = blockIdx.x * (kThreads * kPerThread) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const std::uint32_t i = base + u * kThreads;
    if (i < n) {
      std::int64_t off[4];
      calc.offsets(i, off);
      const C a = Elem<S>::load(dy[off[1]]);
      const C b = arity > 1 ? C(Elem<S>::load(v1[off[2]])) : C(0);
      const C c = arity > 2 ? C(Elem<S>::load(v2[off[3]])) : C(0);
      dst[off[0]] = Elem<S>::store(grad::apply<C>(op, a, b, c));
    }
  }
}

}  // namespace

void map_grad(int device, const GradOp& op, DType dtype, std::byte* dst, const Layout& dst_layout,
              const std::vector<const std::byte*>& srcs, const std::vector<Layout>& src_layouts) {
  EINEXPR_ASSERT(dtype != DType::boolean, "gradients on bool should have been rejected by the planner");
  const int arity = static_cast<int>(srcs.size());
  EINEXPR_ASSERT(arity >= 1 && arity <= 3 && src_layouts.size() == srcs.size(), "map_grad: 1 to 3 sources");
  // Unused sources: dy's pointer with stride 0 (never read).
  const Layout unused{dst_layout.shape, Strides(dst_layout.shape.size(), 0), 0};
  std::vector<const Strides*> strides = {&dst_layout.strides};
  for (int k = 0; k < 3; ++k) strides.push_back(k < arity ? &src_layouts[static_cast<std::size_t>(k)].strides : &unused.strides);
  const CollapsedDims c = collapse_dims(dst_layout.shape, strides);
  StridedPart<4> whole;
  whole.shape = c.shape;
  for (int v = 0; v < 4; ++v) {
    whole.strides[static_cast<std::size_t>(v)] = c.strides[static_cast<std::size_t>(v)];
    whole.base[static_cast<std::size_t>(v)] =
        v == 0 ? dst_layout.offset : v <= arity ? src_layouts[static_cast<std::size_t>(v - 1)].offset : 0;
  }
  DeviceGuard guard(device);
  const cudaStream_t s = stream(device);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<S, bool_t>) {
      auto src = [&](int k) { return reinterpret_cast<const S*>(srcs[static_cast<std::size_t>(k < arity ? k : 0)]); };
      for_each_part<4>(whole, [&](const StridedPart<4>& part) {
        const auto n = static_cast<std::uint32_t>(part.numel());
        grad_kernel<S><<<blocks_for(n, kThreads, kPerThread), kThreads, 0, s>>>(
            op, arity, reinterpret_cast<S*>(dst) + part.base[0], src(0) + part.base[1], src(1) + part.base[2],
            src(2) + part.base[3], make_offset_calc(part), n);
        EINEXPR_CUDA_CHECK_LAUNCH("grad_kernel");
      });
    }
  });
}

}  // namespace einexpr::gpu
