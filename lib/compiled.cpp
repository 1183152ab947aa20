// Compiled expressions: parsed and checked once; programs kept per input layout in a small
// cache of their own, so a call in a hot loop neither parses nor hashes the pattern.
#include <mutex>
#include <variant>

#include "einexpr/ops.hpp"
#include "engine.hpp"

namespace einexpr {

struct Compiled::Impl {
  Op op;
  std::string pattern;
  std::string op_name;
  AxisLengths lengths;
  Reduction reduction;
  Copy copy;
  std::int64_t correction = 1;                   // reduce var / std
  std::variant<UnaryOp, BinaryOp> function;      // map
  std::shared_ptr<const ast::Pattern> parsed;
  mutable std::mutex mutex;
  mutable std::vector<std::pair<std::string, std::shared_ptr<const engine::Entry>>> programs;  // most recent last

  engine::Request request(std::span<const Tensor> inputs) const {
    std::uint32_t extra = static_cast<std::uint32_t>(copy);
    if (op == Op::reduce) extra = static_cast<std::uint32_t>(reduction);
    if (op == Op::map)
      extra = std::visit([](auto f) { return static_cast<std::uint32_t>(f); }, function) |
              (std::holds_alternative<BinaryOp>(function) ? 0x100u : 0u);
    return engine::Request{op, op_name, pattern, inputs, &lengths, extra, correction};
  }

  Plan make_plan(std::span<const Layout> layouts, DType dtype) const {
    switch (op) {
      case Op::rearrange: return plan_rearrange(*parsed, layouts[0], dtype, lengths, copy);
      case Op::reduce: return plan_reduce(*parsed, layouts[0], dtype, reduction, lengths, correction);
      case Op::repeat: return plan_repeat(*parsed, layouts[0], dtype, lengths, copy);
      case Op::einsum: return plan_einsum(*parsed, layouts, dtype, lengths);
      case Op::map:
        if (const auto* unary = std::get_if<UnaryOp>(&function))
          return plan_unary(*parsed, *unary, layouts[0], dtype, lengths);
        return plan_binary(*parsed, std::get<BinaryOp>(function), layouts, dtype, lengths);
    }
    throw InternalError("Compiled: unknown op", __FILE__, __LINE__);
  }

  std::shared_ptr<const engine::Entry> entry(std::span<const Tensor> inputs) const {
    engine::common_dtype_device(op_name, inputs);
    const std::string key = engine::key_of(request(inputs), false);
    {
      std::lock_guard lock(mutex);
      for (auto it = programs.rbegin(); it != programs.rend(); ++it)
        if (it->first == key) return it->second;
    }
    std::vector<Layout> layouts;
    for (const Tensor& t : inputs) layouts.push_back(Layout{t.shape(), t.strides(), 0});
    auto made = std::make_shared<engine::Entry>();
    made->plan = make_plan(layouts, inputs[0].dtype());
    engine::count_plan();
    made->program = lower(made->plan, inputs[0].device());
    engine::count_lowering();
    std::lock_guard lock(mutex);
    programs.emplace_back(key, made);
    if (programs.size() > 16) programs.erase(programs.begin());
    return made;
  }
};

Compiled::Compiled(Op op, std::string_view pattern, AxisLengths lengths, Reduction reduction, Copy copy,
                   std::int64_t correction)
    : impl_(std::make_unique<Impl>()) {
  if (op == Op::map) throw Error("compile a map with compile_map(pattern, function)");
  impl_->op = op;
  impl_->pattern = std::string(pattern);
  impl_->op_name = name(op);
  impl_->lengths = std::move(lengths);
  impl_->reduction = reduction;
  impl_->copy = copy;
  impl_->correction = correction;
  parse();
}

Compiled::Compiled(std::string_view pattern, std::variant<UnaryOp, BinaryOp> function, AxisLengths lengths)
    : impl_(std::make_unique<Impl>()) {
  impl_->op = Op::map;
  impl_->pattern = std::string(pattern);
  impl_->op_name = std::visit([](auto f) { return std::string("map.") + name(f); }, function);
  impl_->lengths = std::move(lengths);
  impl_->reduction = Reduction::sum;
  impl_->copy = Copy::if_needed;
  impl_->function = function;
  parse();
}

void Compiled::parse() {
  try {
    impl_->parsed = engine::pattern(impl_->op, impl_->pattern);
  } catch (Error& e) {
    e.add_context(engine::context("compile_" + impl_->op_name, impl_->pattern, {}, &impl_->lengths));
    throw;
  }
}

Compiled::~Compiled() = default;
Compiled::Compiled(Compiled&&) noexcept = default;
Compiled& Compiled::operator=(Compiled&&) noexcept = default;

Tensor Compiled::run(std::span<const Tensor> inputs) const {
  try {
    return impl_->entry(inputs)->program.run(inputs);
  } catch (Error& e) {
    e.add_context(engine::context(impl_->op_name, impl_->pattern, inputs, &impl_->lengths));
    throw;
  }
}

const Plan& Compiled::plan(std::span<const Tensor> inputs) const { return impl_->entry(inputs)->plan; }

const std::string& Compiled::pattern() const noexcept { return impl_->pattern; }

Compiled compile_einsum(std::string_view pattern, AxisLengths lengths) {
  return Compiled(Op::einsum, pattern, std::move(lengths));
}
Compiled compile_rearrange(std::string_view pattern, AxisLengths lengths, Copy copy) {
  return Compiled(Op::rearrange, pattern, std::move(lengths), Reduction::sum, copy);
}
Compiled compile_reduce(std::string_view pattern, Reduction reduction, AxisLengths lengths, std::int64_t correction) {
  return Compiled(Op::reduce, pattern, std::move(lengths), reduction, Copy::if_needed, correction);
}
Compiled compile_map(std::string_view pattern, UnaryOp function, AxisLengths lengths) {
  return Compiled(pattern, function, std::move(lengths));
}
Compiled compile_map(std::string_view pattern, BinaryOp function, AxisLengths lengths) {
  return Compiled(pattern, function, std::move(lengths));
}
Compiled compile_repeat(std::string_view pattern, AxisLengths lengths, Copy copy) {
  return Compiled(Op::repeat, pattern, std::move(lengths), Reduction::sum, copy);
}

}  // namespace einexpr
