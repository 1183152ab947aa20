// The public ops: each an OpSpec and a Request to the engine (engine.cpp), which plans with
// plan() and caches the program. Errors get the op, pattern, shapes and lengths appended at
// this boundary and rethrown.
#include "einexpr/ops.hpp"

#include "einexpr/parser/ops.hpp"
#include "engine.hpp"

namespace einexpr {

namespace {

/// Runs f; an einexpr::Error gains the call's context on its way out.
template <class F>
auto guarded(std::string_view op_name, std::string_view pattern, TensorRefs inputs,
             const AxisLengths* lengths, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (Error& e) {
    e.add_context(engine::context(op_name, pattern, inputs, lengths));
    throw;
  }
}

/// Plans (cached) and runs `spec` on `inputs`; writes into *out when given.
Tensor execute(const OpSpec& spec, std::string_view pattern, TensorRefs inputs, Tensor* out) {
  try {
    engine::common_dtype_device(name(spec.op()), inputs, op_row(spec.op()).index_operand);
    const auto e = engine::entry({spec, pattern, inputs});
    if (out == nullptr) return e->program.run(inputs);
    e->program.run_into(inputs, *out);
    return *out;
  } catch (Error& e) {
    const AxisLengths* lengths = spec.op() == Op::map && pattern.empty() ? nullptr : &spec.lengths;
    e.add_context(engine::context(engine::op_name(spec), pattern, inputs, lengths));
    throw;
  }
}

/// The OpSpec of a call, one per thread and reused: assigning the lengths reuses their
/// buffers, so a call whose program is cached allocates nothing for its spec.
template <class Options>
OpSpec& spec_of(Options options, const AxisLengths& lengths) {
  thread_local OpSpec spec;
  spec.options = options;
  spec.lengths.assign(lengths.begin(), lengths.end());
  return spec;
}

const AxisLengths no_lengths;

Tensor one(const OpSpec& spec, const Tensor& x, std::string_view pattern, Tensor* out = nullptr) {
  return execute(spec, pattern, std::span<const Tensor>(&x, 1), out);
}

/// Parses a reduction or function name; an error gains the call's context.
template <class T, class Parse>
T parse_named(std::string_view what, std::string_view pattern, TensorRefs in, const AxisLengths* lengths,
              Parse parse) {
  return guarded(what, pattern, in, lengths, parse);
}

}  // namespace

Tensor apply(const OpSpec& spec, std::span<const Tensor> inputs, std::string_view pattern) {
  return execute(spec, pattern, inputs, nullptr);
}

Tensor rearrange(const Tensor& x, std::string_view pattern, const AxisLengths& lengths, Copy copy) {
  return one(spec_of(RearrangeOptions{copy, 0}, lengths), x, pattern);
}

Tensor rearrange(std::span<const Tensor> xs, std::string_view pattern, const AxisLengths& lengths) {
  return execute(spec_of(RearrangeOptions{Copy::if_needed, 0}, lengths), pattern, xs, nullptr);
}

std::vector<Tensor> split(const Tensor& x, std::string_view pattern, const AxisLengths& lengths, Copy copy) {
  const std::shared_ptr<const ast::Pattern> p = guarded("split", pattern, std::span<const Tensor>(&x, 1), &lengths,
                                                        [&] { return engine::pattern(Op::rearrange, pattern); });
  const int outputs = 1 + static_cast<int>(p->more_outputs.size());
  const std::span<const Tensor> in(&x, 1);
  std::vector<std::shared_ptr<const engine::Entry>> entries;
  for (int j = 0; j < outputs; ++j) {
    const OpSpec spec = OpSpec::rearrange(lengths, copy, j);
    guarded("rearrange", pattern, in, &lengths, [&] {
      engine::common_dtype_device("rearrange", in);
      entries.push_back(engine::entry({spec, pattern, in}));
    });
  }
  return guarded("rearrange", pattern, in, &lengths, [&] { return engine::run_outputs(entries, x); });
}

Tensor reduce(const Tensor& x, std::string_view pattern, Reduction reduction, const AxisLengths& lengths,
              std::int64_t correction) {
  return one(spec_of(ReduceOptions{reduction, correction}, lengths), x, pattern);
}

Tensor reduce(const Tensor& x, std::string_view pattern, std::string_view reduction, const AxisLengths& lengths,
              std::int64_t correction) {
  const Reduction r = parse_named<Reduction>("reduce", pattern, std::span<const Tensor>(&x, 1), &lengths,
                                             [&] { return parse_reduction(reduction); });
  return reduce(x, pattern, r, lengths, correction);
}

Tensor repeat(const Tensor& x, std::string_view pattern, const AxisLengths& lengths, Copy copy) {
  return one(spec_of(RepeatOptions{copy}, lengths), x, pattern);
}

Tensor einsum(std::span<const Tensor> operands, std::string_view pattern, const AxisLengths& lengths) {
  return execute(spec_of(EinsumOptions{}, lengths), pattern, operands, nullptr);
}

Tensor detail::einsum_refs(std::span<const Tensor* const> operands, std::string_view pattern,
                           const AxisLengths& lengths) {
  return execute(spec_of(EinsumOptions{}, lengths), pattern, operands, nullptr);
}

Tensor get_at(const Tensor& table, const Tensor& indices, std::string_view pattern, const AxisLengths& lengths) {
  const std::array<const Tensor*, 2> in{&table, &indices};
  return execute(spec_of(GetAtOptions{}, lengths), pattern, std::span<const Tensor* const>(in), nullptr);
}

Tensor add_at(const Tensor& table, const Tensor& indices, const Tensor& updates, std::string_view pattern,
              const AxisLengths& lengths) {
  const std::array<const Tensor*, 3> in{&table, &indices, &updates};
  return execute(spec_of(AddAtOptions{}, lengths), pattern, std::span<const Tensor* const>(in), nullptr);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, std::string_view pattern, std::int64_t ignore_index,
                     const AxisLengths& lengths) {
  const std::array<const Tensor*, 2> in{&logits, &targets};
  return execute(spec_of(CrossEntropyOptions{ignore_index}, lengths), pattern, std::span<const Tensor* const>(in),
                 nullptr);
}

Tensor dropout(const Tensor& x, double p, std::int64_t seed) {
  if (!x.defined()) throw Error("dropout of an undefined tensor");
  Tensor s = Tensor::from_vector(std::vector<std::int64_t>{seed}, {});  // every bit of the seed
  if (!x.device().is_cpu()) s = s.to(x.device());
  const std::array<const Tensor*, 2> in{&x, &s};
  return execute(spec_of(DropoutOptions{p}, {}), "..., -> ...", std::span<const Tensor* const>(in), nullptr);
}

Tensor scalar_like(double value, const Tensor& like) {
  if (!like.defined()) throw Error("a scalar operand takes the other operand's dtype, which is an undefined tensor");
  return Tensor::full({}, value, like.dtype(), like.device());
}

Tensor map(const Tensor& x, double y, std::string_view pattern, std::string_view function) {
  return map(x, scalar_like(y, x), pattern, function);
}
Tensor map(double x, const Tensor& y, std::string_view pattern, std::string_view function) {
  return map(scalar_like(x, y), y, pattern, function);
}
Tensor map(const Tensor& x, double y, std::string_view pattern, BinaryOp function) {
  return map(x, scalar_like(y, x), pattern, function);
}
Tensor map(double x, const Tensor& y, std::string_view pattern, BinaryOp function) {
  return map(scalar_like(x, y), y, pattern, function);
}

Tensor map(const Tensor& x, UnaryOp function) {
  return one(spec_of(MapOptions{function}, no_lengths), x, "");
}

Tensor map(const Tensor& x, std::string_view function) {
  const UnaryOp fn = parse_named<UnaryOp>("map", "", std::span<const Tensor>(&x, 1), nullptr,
                                          [&] { return parse_unary_op(function); });
  return map(x, fn);
}

Tensor map(const Tensor& x, std::string_view pattern, UnaryOp function, const AxisLengths& lengths) {
  return one(spec_of(MapOptions{function}, lengths), x, pattern);
}

Tensor map(const Tensor& x, std::string_view pattern, std::string_view function, const AxisLengths& lengths) {
  const UnaryOp fn = parse_named<UnaryOp>("map", pattern, std::span<const Tensor>(&x, 1), &lengths,
                                          [&] { return parse_unary_op(function); });
  return map(x, pattern, fn, lengths);
}

Tensor map(const Tensor& x, const Tensor& y, std::string_view pattern, BinaryOp function) {
  const std::array<const Tensor*, 2> in{&x, &y};
  return execute(spec_of(MapOptions{function}, no_lengths), pattern, std::span<const Tensor* const>(in), nullptr);
}

Tensor map(const Tensor& x, const Tensor& y, std::string_view pattern, std::string_view function) {
  const std::array<const Tensor*, 2> in{&x, &y};
  const BinaryOp fn = parse_named<BinaryOp>("map", pattern, std::span<const Tensor* const>(in), nullptr,
                                            [&] { return parse_binary_op(function); });
  return map(x, y, pattern, fn);
}

Tensor normalize(const Tensor& x, std::string_view pattern, Normalization kind, double eps,
                 const AxisLengths& lengths) {
  return one(spec_of(NormalizeOptions{kind, takes_eps(kind) ? eps : 0.0}, lengths), x, pattern);
}
Tensor softmax(const Tensor& x, std::string_view pattern, const AxisLengths& lengths) {
  return normalize(x, pattern, Normalization::softmax, 0, lengths);
}
Tensor log_softmax(const Tensor& x, std::string_view pattern, const AxisLengths& lengths) {
  return normalize(x, pattern, Normalization::log_softmax, 0, lengths);
}
Tensor layer_norm(const Tensor& x, std::string_view pattern, double eps, const AxisLengths& lengths) {
  return normalize(x, pattern, Normalization::layer_norm, eps, lengths);
}
Tensor rms_norm(const Tensor& x, std::string_view pattern, double eps, const AxisLengths& lengths) {
  return normalize(x, pattern, Normalization::rms_norm, eps, lengths);
}
Tensor layer_norm(const Tensor& x, const Tensor& gain, const Tensor& bias, std::string_view pattern, double eps,
                  const AxisLengths& lengths) {
  const std::array<const Tensor*, 3> in{&x, &gain, &bias};
  return execute(spec_of(NormalizeOptions{Normalization::layer_norm, eps}, lengths), pattern,
                 std::span<const Tensor* const>(in), nullptr);
}
Tensor rms_norm(const Tensor& x, const Tensor& gain, std::string_view pattern, double eps, const AxisLengths& lengths) {
  const std::array<const Tensor*, 2> in{&x, &gain};
  return execute(spec_of(NormalizeOptions{Normalization::rms_norm, eps}, lengths), pattern,
                 std::span<const Tensor* const>(in), nullptr);
}

// ---- out-parameter forms: planned to materialize, so the last step writes into `out` ----

void rearrange_into(Tensor& out, const Tensor& x, std::string_view pattern, const AxisLengths& lengths) {
  one(OpSpec::rearrange(lengths, Copy::always), x, pattern, &out);
}
void reduce_into(Tensor& out, const Tensor& x, std::string_view pattern, Reduction reduction,
                 const AxisLengths& lengths, std::int64_t correction) {
  one(OpSpec::reduce(reduction, lengths, correction), x, pattern, &out);
}
void repeat_into(Tensor& out, const Tensor& x, std::string_view pattern, const AxisLengths& lengths) {
  one(OpSpec::repeat(lengths, Copy::always), x, pattern, &out);
}
void einsum_into(Tensor& out, std::span<const Tensor> operands, std::string_view pattern,
                 const AxisLengths& lengths) {
  execute(OpSpec::einsum(lengths), pattern, operands, &out);
}
void normalize_into(Tensor& out, const Tensor& x, std::string_view pattern, Normalization kind, double eps,
                    const AxisLengths& lengths) {
  one(OpSpec::normalize(kind, eps, lengths), x, pattern, &out);
}
void map_into(Tensor& out, const Tensor& x, UnaryOp function) { one(OpSpec::map(function), x, "", &out); }
void map_into(Tensor& out, const Tensor& x, std::string_view pattern, UnaryOp function, const AxisLengths& lengths) {
  one(OpSpec::map(function, lengths), x, pattern, &out);
}
void map_into(Tensor& out, const Tensor& x, const Tensor& y, std::string_view pattern, BinaryOp function) {
  const std::array<const Tensor*, 2> in{&x, &y};
  execute(OpSpec::map(function), pattern, std::span<const Tensor* const>(in), &out);
}

}  // namespace einexpr
