// MapStep on the CPU: unary and binary elementwise functions (plan.hpp defines each).
// Dims are ordered by dst's strides and collapsed, so the inner loop runs over dst's unit
// stride. Unary functions on floats run vec_math.hpp's kernels (Sleef's vector functions,
// the CPU's best instruction set): in place on contiguous f32 / f64 rows, else on a block
// gathered into the compute type (f32 for the reduced floats) and scattered back; outputs
// of 8 MiB and more are written with streaming stores. Integers compute in int64
// (wrapping; division truncates and x / 0 is 0), binary functions in plain loops the
// compiler vectorizes (omp simd). Large maps split their rows among threads.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cpu_kernels.hpp"
#include "element.hpp"
#include "strided_loop.hpp"
#include "vec_math_ops.hpp"

namespace einexpr::cpu {

namespace {

constexpr std::int64_t map_block = 2048;

/// Arithmetic in the compute type; integers wrap (computed in uint64) and x / 0 is 0.
template <class C>
struct Arith {
  static constexpr bool integral = std::is_integral_v<C>;
  using U = std::uint64_t;
  static C add(C a, C b) { if constexpr (integral) return C(U(a) + U(b)); else return a + b; }
  static C sub(C a, C b) { if constexpr (integral) return C(U(a) - U(b)); else return a - b; }
  static C mul(C a, C b) { if constexpr (integral) return C(U(a) * U(b)); else return a * b; }
  static C div(C a, C b) {
    if constexpr (integral) {
      if (b == 0) return 0;
      if (b == -1) return sub(0, a);  // INT64_MIN / -1 wraps instead of trapping
      return a / b;
    } else {
      return a / b;
    }
  }
  static C neg(C x) { if constexpr (integral) return sub(0, x); else return -x; }
  static C abs(C x) { if constexpr (integral) return x < 0 ? neg(x) : x; else return std::abs(x); }
  // maximum / minimum propagate NaN, as numpy and torch do.
  static C max(C a, C b) { return (b > a || is_nan(b)) ? b : a; }
  static C min(C a, C b) { return (b < a || is_nan(b)) ? b : a; }
};

/// Outputs from this size on are written with streaming stores (runtime/copy_strided.cpp
/// uses the same threshold, and says why it is a constant).
constexpr std::int64_t stream_bytes = std::int64_t{8} << 20;

/// The integer functions (the planner lets only these through for integers).
template <class C, class Run>
void with_integer_unary(UnaryOp op, Run&& run) {
  using A = Arith<C>;
  switch (op) {
    case UnaryOp::relu: return run([](C x) { return x < C(0) ? C(0) : x; });
    case UnaryOp::neg: return run([](C x) { return A::neg(x); });
    case UnaryOp::abs: return run([](C x) { return A::abs(x); });
    case UnaryOp::square: return run([](C x) { return A::mul(x, x); });
    default: break;
  }
  throw DTypeError(std::string("the function '") + name(op) + "' is not defined on integers");
}

template <class C, class Run>
void with_binary(BinaryOp op, Run&& run) {
  using A = Arith<C>;
  switch (op) {
    case BinaryOp::add: return run([](C a, C b) { return A::add(a, b); });
    case BinaryOp::sub: return run([](C a, C b) { return A::sub(a, b); });
    case BinaryOp::mul: return run([](C a, C b) { return A::mul(a, b); });
    case BinaryOp::div: return run([](C a, C b) { return A::div(a, b); });
    case BinaryOp::maximum: return run([](C a, C b) { return A::max(a, b); });
    case BinaryOp::minimum: return run([](C a, C b) { return A::min(a, b); });
  }
  throw InternalError("map: unknown binary function", __FILE__, __LINE__);
}

/// f (a compute-type function) on the integers of a nest.
template <class S, class F>
void run_unary_scalar(const Nest<2>& nest, S* __restrict dst, const S* __restrict src, F f) {
  using E = Element<S>;
  const std::int64_t ds = nest.row_stride(0), ss = nest.row_stride(1);
  parallel_pieces(nest, map_block, [&](const std::array<std::int64_t, 2>& off, std::int64_t n) {
    S* d = dst + off[0];
    const S* s = src + off[1];
    for (std::int64_t i = 0; i < n; ++i) d[i * ds] = E::store(f(E::load(s[i * ss])));
  });
}

/// A vec_math kernel on the floats of a nest: in place on contiguous rows of its own type,
/// else through a block of the compute type C.
template <class S, class C>
void run_unary_vec(const Nest<2>& nest, S* dst, const S* src, vec::Kernel<C> f, bool stream) {
  using E = Element<S>;
  const std::int64_t ds = nest.row_stride(0), ss = nest.row_stride(1);
  parallel_pieces(nest, map_block, [&](const std::array<std::int64_t, 2>& off, std::int64_t n) {
    S* d = dst + off[0];
    const S* s = src + off[1];
    if constexpr (std::is_same_v<S, C>) {
      if (ds == 1 && ss == 1) return f(s, d, n, stream);
    }
    C buf[map_block];
    const std::int64_t m = ss == 0 ? 1 : n;  // a broadcast row: one value
    buf[0] = E::load(*s);  // (n >= 1; this also tells the compiler buf is written)
    for (std::int64_t i = 1; i < m; ++i) buf[i] = E::load(s[i * ss]);
    f(buf, buf, m, false);
    if (ss == 0) {
      const S v = E::store(buf[0]);
      for (std::int64_t i = 0; i < n; ++i) d[i * ds] = v;
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) d[i * ds] = E::store(buf[i]);
  });
}

template <class S, class F>
void run_binary(const Nest<3>& nest, S* __restrict dst, const S* a, const S* b, F f) {
  using E = Element<S>;
  const std::int64_t ds = nest.row_stride(0), as = nest.row_stride(1), bs = nest.row_stride(2);
  parallel_pieces(nest, map_block, [&](const std::array<std::int64_t, 3>& off, std::int64_t n) {
    S* d = dst + off[0];
    const S* x = a + off[1];
    const S* y = b + off[2];
    if (ds == 1 && as == 1 && bs == 1) {
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) d[i] = E::store(f(E::load(x[i]), E::load(y[i])));
    } else if (ds == 1 && as == 1 && bs == 0) {
      const auto yv = E::load(*y);
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) d[i] = E::store(f(E::load(x[i]), yv));
    } else if (ds == 1 && as == 0 && bs == 1) {
      const auto xv = E::load(*x);
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) d[i] = E::store(f(xv, E::load(y[i])));
    } else {
      for (std::int64_t i = 0; i < n; ++i) d[i * ds] = E::store(f(E::load(x[i * as]), E::load(y[i * bs])));
    }
  });
}

template <class S>
const S* at(const Workspace& ws, const Operand& v) {
  return buffer_ptr<const S>(ws, v.buffer) + v.layout.offset;
}
template <class S>
S* at_mut(const Workspace& ws, const Operand& v) {
  return buffer_ptr<S>(ws, v.buffer) + v.layout.offset;
}

template <class S>
std::function<void(const Workspace&)> unary_run(UnaryOp op, const Operand& src, const Operand& dst) {
  const auto nest = Nest<2>::make_ordered(dst.layout.shape, {dst.layout.strides, src.layout.strides}, 0);
  using C = compute_t<S>;
  if constexpr (std::is_floating_point_v<C>) {
    const vec::Table& table = vec::best_table();
    vec::Kernel<C> f = nullptr;
    if constexpr (std::is_same_v<C, float>) f = vec::kernel_for(table.f32, op);
    else f = vec::kernel_for(table.f64, op);
    const bool stream = nest.row_stride(0) == 1 &&
                        nest.numel() * static_cast<std::int64_t>(sizeof(S)) >= stream_bytes;
    return [nest, src, dst, f, stream](const Workspace& ws) {
      run_unary_vec<S, C>(nest, at_mut<S>(ws, dst), at<S>(ws, src), f, stream);
    };
  } else {
    std::function<void(const Workspace&)> run;
    with_integer_unary<C>(op, [&](auto f) {
      run = [nest, src, dst, f](const Workspace& ws) {
        run_unary_scalar<S>(nest, at_mut<S>(ws, dst), at<S>(ws, src), f);
      };
    });
    return run;
  }
}

template <class S>
std::function<void(const Workspace&)> binary_run(BinaryOp op, const Operand& a, const Operand& b, const Operand& dst) {
  const auto nest =
      Nest<3>::make_ordered(dst.layout.shape, {dst.layout.strides, a.layout.strides, b.layout.strides}, 0);
  std::function<void(const Workspace&)> run;
  with_binary<compute_t<S>>(op, [&](auto f) {
    run = [nest, a, b, dst, f](const Workspace& ws) {
      run_binary<S>(nest, at_mut<S>(ws, dst), at<S>(ws, a), at<S>(ws, b), f);
    };
  });
  return run;
}

}  // namespace

Kernel map_kernel(const MapStep& step, const std::vector<Operand>& srcs, const Operand& dst, DType dtype) {
  if (const auto* grad = std::get_if<GradOp>(&step.op)) return grad_map_kernel(*grad, srcs, dst, dtype);
  const auto* unary = std::get_if<UnaryOp>(&step.op);
  const auto* binary = std::get_if<BinaryOp>(&step.op);
  EINEXPR_ASSERT(srcs.size() == (unary ? 1u : 2u), "map: wrong number of operands");
  for (const Operand& s : srcs) EINEXPR_ASSERT(s.layout.shape == dst.layout.shape, "map: operand shapes differ");
  Kernel kernel;
  kernel.name = std::string("map ") + (unary ? name(*unary) : name(*binary)) + " " +
                std::string(name(dtype)) + " " + layout_str(dst.layout);
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<S, bool_t>) {
      throw DTypeError("elementwise functions are not defined on bool");
    } else {
      kernel.run = unary ? unary_run<S>(*unary, srcs[0], dst) : binary_run<S>(*binary, srcs[0], srcs[1], dst);
    }
  });
  return kernel;
}

}  // namespace einexpr::cpu
