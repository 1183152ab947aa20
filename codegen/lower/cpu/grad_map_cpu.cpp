// MapStep with a GradOp on the CPU: a backward pass's elementwise derivative (plan.hpp,
// lower/grad_math.hpp) over up to three sources broadcast to dst's shape: one strided loop,
// rows shared among threads; GELU's over contiguous rows through the vector tanh.
#include <array>
#include <type_traits>
#include <string>

#include "cpu_kernels.hpp"
#include "element.hpp"
#include "lower/grad_math.hpp"
#include "strided_loop.hpp"
#include "vec_math.hpp"

namespace einexpr::cpu {

namespace {

constexpr std::int64_t grad_block = 2048;

// GELU's derivative (grad_math.hpp's formula) over contiguous f32 / f64 rows: u = k·(x + c·x³)
// a block at a time, tanh(u) by the vector table's kernel (vec_math.hpp, its stated ULPs),
// then the rest in plain arithmetic the compiler vectorizes. The scalar loop's std::tanh per
// element was 15% of a GPT-2 block's training step (bench/RESULTS.md).
template <class T>
void gelu_grad_rows(const Nest<4>& nest, T* dst, const T* dy, const T* x) {
  const vec::Table& table = vec::best_table();
  const vec::Kernel<T> tanh_kernel = [&] {
    if constexpr (std::is_same_v<T, float>) return table.f32.tanh;
    else return table.f64.tanh;
  }();
  parallel_pieces(nest, grad_block, [&](const std::array<std::int64_t, 4>& off, std::int64_t n) {
    alignas(64) T u[grad_block], t[grad_block];
    const T k = T(0.7978845608028654), c = T(0.044715), c3 = T(3 * 0.044715);
    const T* xs = x + off[2];
    for (std::int64_t i = 0; i < n; ++i) u[i] = k * (xs[i] + c * xs[i] * xs[i] * xs[i]);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // u[0, n) is written just above
#endif
    tanh_kernel(u, t, n, false);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    const T* dys = dy + off[1];
    T* out = dst + off[0];
    for (std::int64_t i = 0; i < n; ++i)
      out[i] = dys[i] * (T(0.5) * (T(1) + t[i]) + T(0.5) * xs[i] * (T(1) - t[i] * t[i]) * k * (T(1) + c3 * xs[i] * xs[i]));
  });
}

template <class S>
void run_grad(const GradOp& op, const Nest<4>& nest, S* dst, const S* dy, const S* v1, const S* v2) {
  using E = Element<S>;
  using C = compute_t<S>;
  const std::array<std::int64_t, 4> rs = {nest.row_stride(0), nest.row_stride(1), nest.row_stride(2), nest.row_stride(3)};
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    if (op.kind == GradOp::Kind::unary && op.fn == UnaryOp::gelu && rs[0] == 1 && rs[1] == 1 && rs[2] == 1 &&
        nest.row_length() > 0) {
      gelu_grad_rows<S>(nest, dst, dy, v1);
      return;
    }
  }
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
