// The public ops: each a Request to the engine (engine.cpp) with the planner that fits it.
// Errors get the op, pattern, shapes and lengths appended at this boundary and rethrown.
#include "einexpr/ops.hpp"

#include "engine.hpp"

namespace einexpr {

namespace {

using Planner = engine::Planner;

/// Runs f; an einexpr::Error gains the call's context on its way out.
template <class F>
auto guarded(std::string_view op_name, std::string_view pattern, std::span<const Tensor> inputs,
             const AxisLengths* lengths, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (Error& e) {
    e.add_context(engine::context(op_name, pattern, inputs, lengths));
    throw;
  }
}

/// Plans (cached) and runs; writes into *out when given.
Tensor execute(const engine::Request& r, const Planner& planner, Tensor* out) {
  engine::common_dtype_device(r.op_name, r.inputs);
  const auto e = engine::entry(r, planner);
  if (out == nullptr) return e->program.run(r.inputs);
  e->program.run_into(r.inputs, *out);
  return *out;
}

std::uint32_t code(Copy c) { return static_cast<std::uint32_t>(c); }
std::uint32_t code(Reduction r) { return static_cast<std::uint32_t>(r); }

Tensor do_rearrange(const Tensor& x, std::string_view pattern, const AxisLengths& lengths, Copy copy, Tensor* out) {
  const std::span<const Tensor> in(&x, 1);
  return guarded("rearrange", pattern, in, &lengths, [&] {
    return execute({Op::rearrange, "rearrange", pattern, in, &lengths, code(copy)},
                   [&](const ast::Pattern* p, std::span<const Layout> l, DType dt) {
                     return plan_rearrange(*p, l[0], dt, lengths, copy);
                   },
                   out);
  });
}

Tensor do_reduce(const Tensor& x, std::string_view pattern, Reduction reduction, const AxisLengths& lengths,
                 std::int64_t correction, Tensor* out) {
  const std::span<const Tensor> in(&x, 1);
  return guarded("reduce", pattern, in, &lengths, [&] {
    return execute({Op::reduce, "reduce", pattern, in, &lengths, code(reduction), correction},
                   [&](const ast::Pattern* p, std::span<const Layout> l, DType dt) {
                     return plan_reduce(*p, l[0], dt, reduction, lengths, correction);
                   },
                   out);
  });
}

Tensor do_repeat(const Tensor& x, std::string_view pattern, const AxisLengths& lengths, Copy copy, Tensor* out) {
  const std::span<const Tensor> in(&x, 1);
  return guarded("repeat", pattern, in, &lengths, [&] {
    return execute({Op::repeat, "repeat", pattern, in, &lengths, code(copy)},
                   [&](const ast::Pattern* p, std::span<const Layout> l, DType dt) {
                     return plan_repeat(*p, l[0], dt, lengths, copy);
                   },
                   out);
  });
}

Tensor do_einsum(std::span<const Tensor> in, std::string_view pattern, const AxisLengths& lengths, Tensor* out) {
  return guarded("einsum", pattern, in, &lengths, [&] {
    return execute({Op::einsum, "einsum", pattern, in, &lengths, 0},
                   [&](const ast::Pattern* p, std::span<const Layout> l, DType dt) {
                     return plan_einsum(*p, l, dt, lengths);
                   },
                   out);
  });
}

Tensor do_unary(const Tensor& x, UnaryOp fn, Tensor* out) {
  const std::span<const Tensor> in(&x, 1);
  const std::string op_name = std::string("map.") + name(fn);
  return guarded(op_name, "", in, nullptr, [&] {
    return execute({Op::map, op_name, "", in, nullptr, static_cast<std::uint32_t>(fn)},
                   [&](const ast::Pattern*, std::span<const Layout> l, DType dt) { return plan_unary(fn, l[0], dt); },
                   out);
  });
}

Tensor do_unary_pattern(const Tensor& x, std::string_view pattern, UnaryOp fn, const AxisLengths& lengths,
                        Tensor* out) {
  const std::span<const Tensor> in(&x, 1);
  const std::string op_name = std::string("map.") + name(fn);
  return guarded(op_name, pattern, in, &lengths, [&] {
    return execute({Op::map, op_name, pattern, in, &lengths, static_cast<std::uint32_t>(fn)},
                   [&](const ast::Pattern* p, std::span<const Layout> l, DType dt) {
                     return plan_unary(*p, fn, l[0], dt, lengths);
                   },
                   out);
  });
}

Tensor do_binary(const Tensor& x, const Tensor& y, std::string_view pattern, BinaryOp function, Tensor* out) {
  const std::array<Tensor, 2> in{x, y};
  const std::string op_name = std::string("map.") + name(function);
  return guarded(op_name, pattern, in, nullptr, [&] {
    return execute({Op::map, op_name, pattern, in, nullptr, static_cast<std::uint32_t>(function)},
                   [&](const ast::Pattern* p, std::span<const Layout> l, DType dt) {
                     return plan_binary(*p, function, l, dt);
                   },
                   out);
  });
}

}  // namespace

Tensor rearrange(const Tensor& x, std::string_view pattern, const AxisLengths& lengths, Copy copy) {
  return do_rearrange(x, pattern, lengths, copy, nullptr);
}

Tensor reduce(const Tensor& x, std::string_view pattern, Reduction reduction, const AxisLengths& lengths,
              std::int64_t correction) {
  return do_reduce(x, pattern, reduction, lengths, correction, nullptr);
}

Tensor reduce(const Tensor& x, std::string_view pattern, std::string_view reduction, const AxisLengths& lengths,
              std::int64_t correction) {
  const std::span<const Tensor> in(&x, 1);
  const Reduction r = guarded("reduce", pattern, in, &lengths, [&] { return parse_reduction(reduction); });
  return do_reduce(x, pattern, r, lengths, correction, nullptr);
}

Tensor repeat(const Tensor& x, std::string_view pattern, const AxisLengths& lengths, Copy copy) {
  return do_repeat(x, pattern, lengths, copy, nullptr);
}

Tensor einsum(std::span<const Tensor> operands, std::string_view pattern, const AxisLengths& lengths) {
  return do_einsum(operands, pattern, lengths, nullptr);
}

Tensor map(const Tensor& x, UnaryOp function) { return do_unary(x, function, nullptr); }

Tensor map(const Tensor& x, std::string_view function) {
  const std::span<const Tensor> in(&x, 1);
  const UnaryOp fn = guarded("map", "", in, nullptr, [&] { return parse_unary_op(function); });
  return do_unary(x, fn, nullptr);
}

Tensor map(const Tensor& x, std::string_view pattern, UnaryOp function, const AxisLengths& lengths) {
  return do_unary_pattern(x, pattern, function, lengths, nullptr);
}

Tensor map(const Tensor& x, std::string_view pattern, std::string_view function, const AxisLengths& lengths) {
  const std::span<const Tensor> in(&x, 1);
  const UnaryOp fn = guarded("map", pattern, in, &lengths, [&] { return parse_unary_op(function); });
  return do_unary_pattern(x, pattern, fn, lengths, nullptr);
}

Tensor map(const Tensor& x, const Tensor& y, std::string_view pattern, BinaryOp function) {
  return do_binary(x, y, pattern, function, nullptr);
}

Tensor map(const Tensor& x, const Tensor& y, std::string_view pattern, std::string_view function) {
  const std::array<Tensor, 2> in{x, y};
  const BinaryOp fn = guarded("map", pattern, in, nullptr, [&] { return parse_binary_op(function); });
  return map(x, y, pattern, fn);
}

// ---- out-parameter forms: planned to materialize, so the last step writes into `out` ----

void rearrange_into(Tensor& out, const Tensor& x, std::string_view pattern, const AxisLengths& lengths) {
  do_rearrange(x, pattern, lengths, Copy::always, &out);
}
void reduce_into(Tensor& out, const Tensor& x, std::string_view pattern, Reduction reduction,
                 const AxisLengths& lengths, std::int64_t correction) {
  do_reduce(x, pattern, reduction, lengths, correction, &out);
}
void repeat_into(Tensor& out, const Tensor& x, std::string_view pattern, const AxisLengths& lengths) {
  do_repeat(x, pattern, lengths, Copy::always, &out);
}
void einsum_into(Tensor& out, std::span<const Tensor> operands, std::string_view pattern,
                 const AxisLengths& lengths) {
  do_einsum(operands, pattern, lengths, &out);
}
void map_into(Tensor& out, const Tensor& x, UnaryOp function) { do_unary(x, function, &out); }
void map_into(Tensor& out, const Tensor& x, std::string_view pattern, UnaryOp function, const AxisLengths& lengths) {
  do_unary_pattern(x, pattern, function, lengths, &out);
}
void map_into(Tensor& out, const Tensor& x, const Tensor& y, std::string_view pattern, BinaryOp function) {
  do_binary(x, y, pattern, function, &out);
}

}  // namespace einexpr
