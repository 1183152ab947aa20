// Compiled expressions: parsed and checked once; programs kept per input layout in a small
// cache of their own, so a call in a hot loop neither parses nor hashes the pattern.
#include <mutex>

#include "einexpr/ops.hpp"
#include "einexpr/parser/ops.hpp"
#include "engine.hpp"

namespace einexpr {

struct Compiled::Impl {
  OpSpec spec;
  std::string pattern;
  std::string op_name;
  std::shared_ptr<const ast::Pattern> parsed;
  mutable std::mutex mutex;
  mutable std::vector<std::pair<std::string, std::shared_ptr<const engine::Entry>>> programs;  // most recent last

  std::shared_ptr<const engine::Entry> entry(TensorRefs inputs) const {
    engine::common_dtype_device(op_name, inputs, op_row(spec.op()).index_operand);
    std::string& scratch = engine::scratch_key();
    engine::key_of({spec, pattern, inputs}, false, scratch);
    {
      std::lock_guard lock(mutex);
      for (auto it = programs.rbegin(); it != programs.rend(); ++it)
        if (it->first == scratch) return it->second;
    }
    std::string key = scratch;  // planning may build keys of its own on this thread
    auto made = std::make_shared<const engine::Entry>(engine::make_entry(spec, parsed.get(), inputs));
    std::lock_guard lock(mutex);
    programs.emplace_back(key, made);
    if (programs.size() > 16) programs.erase(programs.begin());
    return made;
  }

  Tensor run(TensorRefs inputs) const {
    try {
      return entry(inputs)->program.run(inputs);
    } catch (Error& e) {
      e.add_context(engine::context(op_name, pattern, inputs, &spec.lengths));
      throw;
    }
  }
};

namespace {
OpSpec spec_for(Op op, AxisLengths lengths, Reduction reduction, Copy copy) {
  OpSpec spec = OpSpec::of(op, std::move(lengths));
  if (auto* r = spec.get_if<ReduceOptions>()) r->reduction = reduction;
  if (auto* r = spec.get_if<RearrangeOptions>()) r->copy = copy;
  if (auto* r = spec.get_if<RepeatOptions>()) r->copy = copy;
  return spec;
}
}  // namespace

Compiled::Compiled(Op op, std::string_view pattern, AxisLengths lengths, Reduction reduction, Copy copy)
    : Compiled(spec_for(op, std::move(lengths), reduction, copy), pattern) {}

Compiled::Compiled(OpSpec spec, std::string_view pattern) : impl_(std::make_unique<Impl>()) {
  impl_->spec = std::move(spec);
  impl_->pattern = std::string(pattern);
  impl_->op_name = engine::op_name(impl_->spec);
  try {
    if (!(impl_->spec.op() == Op::map && pattern.empty())) impl_->parsed = engine::pattern(impl_->spec.op(), pattern);
  } catch (Error& e) {
    e.add_context(engine::context("compile_" + impl_->op_name, pattern, {}, &impl_->spec.lengths));
    throw;
  }
}

Compiled::~Compiled() = default;
Compiled::Compiled(Compiled&&) noexcept = default;
Compiled& Compiled::operator=(Compiled&&) noexcept = default;

Tensor Compiled::run(std::span<const Tensor> inputs) const { return impl_->run(inputs); }
Tensor Compiled::run(std::span<const Tensor* const> inputs) const { return impl_->run(inputs); }

const Plan& Compiled::plan(std::span<const Tensor> inputs) const { return impl_->entry(inputs)->plan; }

const std::string& Compiled::pattern() const noexcept { return impl_->pattern; }

const OpSpec& Compiled::spec() const noexcept { return impl_->spec; }

Compiled compile_einsum(std::string_view pattern, AxisLengths lengths) {
  return Compiled(Op::einsum, pattern, std::move(lengths));
}
Compiled compile_rearrange(std::string_view pattern, AxisLengths lengths, Copy copy) {
  return Compiled(Op::rearrange, pattern, std::move(lengths), Reduction::sum, copy);
}
Compiled compile_reduce(std::string_view pattern, Reduction reduction, AxisLengths lengths, std::int64_t correction) {
  return Compiled(OpSpec::reduce(reduction, std::move(lengths), correction), pattern);
}
Compiled compile_map(std::string_view pattern, UnaryOp function, AxisLengths lengths) {
  return Compiled(OpSpec::map(function, std::move(lengths)), pattern);
}
Compiled compile_map(std::string_view pattern, BinaryOp function, AxisLengths lengths) {
  return Compiled(OpSpec::map(function, std::move(lengths)), pattern);
}
Compiled compile_repeat(std::string_view pattern, AxisLengths lengths, Copy copy) {
  return Compiled(Op::repeat, pattern, std::move(lengths), Reduction::sum, copy);
}

}  // namespace einexpr
