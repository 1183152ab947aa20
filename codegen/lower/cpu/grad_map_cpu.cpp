// MapStep with a GradOp on the CPU: a backward pass's elementwise derivative (plan.hpp,
// lower/grad_math.hpp) over up to three sources broadcast to dst's shape. Gradients are
// accounted and checked, not a hot path: one strided loop, rows shared among threads.
#include <array>
#include <string>

#include "cpu_kernels.hpp"
#include "element.hpp"
#include "lower/grad_math.hpp"
#include "strided_loop.hpp"

namespace einexpr::cpu {

namespace {

constexpr std::int64_t grad_block = 2048;

template <class S>
void run_grad(const GradOp& op, const Nest<4>& nest, S* dst, const S* dy, const S* v1, const S* v2) {
  using E = Element<S>;
  using C = compute_t<S>;
  const std::array<std::int64_t, 4> rs = {nest.row_stride(0), nest.row_stride(1), nest.row_stride(2), nest.row_stride(3)};
  parallel_pieces(nest, grad_block, [&](const std::array<std::int64_t, 4>& off, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      const C a = E::load(dy[off[1] + i * rs[1]]);
      const C b = v1 ? E::load(v1[off[2] + i * rs[2]]) : C(0);
      const C c = v2 ? E::load(v2[off[3] + i * rs[3]]) : C(0);
      dst[off[0] + i * rs[0]] = E::store(grad::apply<C>(op, a, b, c));
    }
  });
}

}  // namespace

Kernel grad_map_kernel(const GradOp& op, const std::vector<Operand>& srcs, const Operand& dst, DType dtype) {
  EINEXPR_ASSERT(srcs.size() == static_cast<std::size_t>(arity(op)), "grad map: wrong number of operands");
  std::array<Strides, 4> strides{dst.layout.strides, {}, {}, {}};
  for (std::size_t i = 0; i < 3; ++i)
    strides[i + 1] = i < srcs.size() ? srcs[i].layout.strides : Strides(dst.layout.shape.size(), 0);
  const auto nest = Nest<4>::make_ordered(dst.layout.shape, strides, 0);
  Kernel kernel;
  kernel.name = "map " + name(op) + " " + std::string(name(dtype)) + " " + layout_str(dst.layout);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<S, bool_t>) {
      throw DTypeError("gradients are not defined on bool");
    } else {
      kernel.run = [op, nest, srcs, dst](const Workspace& ws) {
        auto src = [&](std::size_t i) -> const S* {
          return i < srcs.size() ? buffer_ptr<const S>(ws, srcs[i].buffer) + srcs[i].layout.offset : nullptr;
        };
        run_grad<S>(op, nest, buffer_ptr<S>(ws, dst.buffer) + dst.layout.offset, src(0), src(1), src(2));
      };
    }
  });
  return kernel;
}

}  // namespace einexpr::cpu
