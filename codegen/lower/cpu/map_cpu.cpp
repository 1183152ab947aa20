// MapStep on the CPU: unary and binary elementwise functions (plan.hpp defines each).
// Dims are ordered by dst's strides and collapsed, so the inner loop runs over dst's unit
// stride; rows whose strides are all 1 (or a broadcast scalar) get a loop the compiler can
// vectorize. f64 and f32 compute natively, the reduced floats in f32, integers in int64
// (wrapping; division truncates and x / 0 is 0). Large maps split their rows among threads.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "cpu_kernels.hpp"
#include "element.hpp"
#include "strided_loop.hpp"

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

/// Calls run(f) with f the compute-type function of `op`.
template <class C, class Run>
void with_unary(UnaryOp op, Run&& run) {
  using A = Arith<C>;
  switch (op) {
    case UnaryOp::relu: return run([](C x) { return x < C(0) ? C(0) : x; });
    case UnaryOp::neg: return run([](C x) { return A::neg(x); });
    case UnaryOp::abs: return run([](C x) { return A::abs(x); });
    case UnaryOp::square: return run([](C x) { return A::mul(x, x); });
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case UnaryOp::gelu:
        return run([](C x) {
          const C inner = C(0.7978845608028654) * (x + C(0.044715) * x * x * x);  // sqrt(2/pi)
          return C(0.5) * x * (C(1) + std::tanh(inner));
        });
      case UnaryOp::exp: return run([](C x) { return std::exp(x); });
      case UnaryOp::log: return run([](C x) { return std::log(x); });
      case UnaryOp::sqrt: return run([](C x) { return std::sqrt(x); });
      case UnaryOp::rsqrt: return run([](C x) { return C(1) / std::sqrt(x); });
      case UnaryOp::sigmoid: return run([](C x) { return C(1) / (C(1) + std::exp(-x)); });
      case UnaryOp::tanh: return run([](C x) { return std::tanh(x); });
      case UnaryOp::silu: return run([](C x) { return x * (C(1) / (C(1) + std::exp(-x))); });
      case UnaryOp::reciprocal: return run([](C x) { return C(1) / x; });
      default: break;
    }
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

template <class S, class F>
void run_unary(const Nest<2>& nest, S* dst, const S* src, F f) {
  using E = Element<S>;
  const std::int64_t ds = nest.row_stride(0), ss = nest.row_stride(1);
  parallel_pieces(nest, map_block, [&](const std::array<std::int64_t, 2>& off, std::int64_t n) {
    S* d = dst + off[0];
    const S* s = src + off[1];
    if (ds == 1 && ss == 1) {
      for (std::int64_t i = 0; i < n; ++i) d[i] = E::store(f(E::load(s[i])));
    } else if (ss == 0) {
      const S v = E::store(f(E::load(*s)));
      for (std::int64_t i = 0; i < n; ++i) d[i * ds] = v;
    } else {
      for (std::int64_t i = 0; i < n; ++i) d[i * ds] = E::store(f(E::load(s[i * ss])));
    }
  });
}

template <class S, class F>
void run_binary(const Nest<3>& nest, S* dst, const S* a, const S* b, F f) {
  using E = Element<S>;
  const std::int64_t ds = nest.row_stride(0), as = nest.row_stride(1), bs = nest.row_stride(2);
  parallel_pieces(nest, map_block, [&](const std::array<std::int64_t, 3>& off, std::int64_t n) {
    S* d = dst + off[0];
    const S* x = a + off[1];
    const S* y = b + off[2];
    if (ds == 1 && as == 1 && bs == 1) {
      for (std::int64_t i = 0; i < n; ++i) d[i] = E::store(f(E::load(x[i]), E::load(y[i])));
    } else if (ds == 1 && as == 1 && bs == 0) {
      const auto yv = E::load(*y);
      for (std::int64_t i = 0; i < n; ++i) d[i] = E::store(f(E::load(x[i]), yv));
    } else if (ds == 1 && as == 0 && bs == 1) {
      const auto xv = E::load(*x);
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
  std::function<void(const Workspace&)> run;
  with_unary<compute_t<S>>(op, [&](auto f) {
    run = [nest, src, dst, f](const Workspace& ws) { run_unary<S>(nest, at_mut<S>(ws, dst), at<S>(ws, src), f); };
  });
  return run;
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
