#pragma once
// The skeleton both lowerings share (private to codegen/lower): validate the plan once,
// bind its buffers to program buffers, visit every step with a backend's overloads, bind
// the output. The CPU and CUDA lowerings differ only in those overloads (their kernels):
//
//   struct Backend {
//     void operator()(const ViewStep&, Context&);      // one per Step alternative: a
//     void operator()(const CopyStep&, Context&);      // missing one fails to compile
//     ...
//   };
//
// Buffers: plan buffer i is program buffer i (inputs first, then the plan's temporaries in
// order, elements x element size bytes); a kernel may append staging temporaries after them.
#include <cstddef>
#include <string>
#include <utility>
#include <variant>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/program.hpp"

namespace einexpr::lowering {

/// A plan value as a kernel sees it: a program buffer and a layout relative to its base.
struct Operand {
  int buffer = 0;
  Layout layout;
};

/// What a step's lowering sees, and how it adds to the program.
class Context {
 public:
  Context(const Plan& plan, Program& program) : plan_(plan), program_(program) {}

  const Plan& plan() const noexcept { return plan_; }
  DType dtype() const noexcept { return plan_.dtype; }
  Program& program() noexcept { return program_; }
  const Value& value(int v) const { return plan_.value(v); }
  Operand operand(int v) const { return {value(v).buffer, value(v).layout}; }
  /// Bytes of a plan buffer that is a temporary.
  std::size_t buffer_bytes(int buffer) const {
    const PlanBuffer& b = plan_.buffers.at(static_cast<std::size_t>(buffer));
    return static_cast<std::size_t>(b.elements) * element_size(b.dtype);
  }
  /// The dtype of value v's elements.
  DType dtype_of(int v) const { return plan_.dtype_of(v); }
  /// Elements of a plan buffer that is a temporary.
  std::int64_t buffer_elements(int buffer) const { return plan_.buffers.at(static_cast<std::size_t>(buffer)).elements; }
  /// Appends a staging temporary (after the plan's own); returns its program buffer index.
  int add_temp(std::size_t bytes) {
    program_.temp_bytes.push_back(bytes);
    return program_.num_inputs() + static_cast<int>(program_.temp_bytes.size()) - 1;
  }
  void add(Kernel kernel) { program_.kernels.push_back(std::move(kernel)); }

 private:
  const Plan& plan_;
  Program& program_;
};

/// Binds the plan's buffers: inputs' layouts, temporaries' bytes (checked: no overflow).
inline void bind_buffers(const Plan& plan, Program& program) {
  for (int i = 0; i < static_cast<int>(plan.buffers.size()); ++i) {
    const PlanBuffer& b = plan.buffers[static_cast<std::size_t>(i)];
    if (i < plan.num_inputs) {
      EINEXPR_ASSERT(b.input == i, "lower: plan buffer " + std::to_string(i) + " is not input " + std::to_string(i));
      program.input_layouts.push_back(plan.value(i).layout);
      program.input_dtypes.push_back(b.dtype);
    } else {
      EINEXPR_ASSERT(b.input < 0, "lower: an input's buffer after the temporaries");
      program.temp_bytes.push_back(
          static_cast<std::size_t>(checked_mul(b.elements, static_cast<std::int64_t>(element_size(b.dtype)))));
    }
  }
}

/// validate(plan) (unless the pipeline did: `check` false), then a Program for `device` with
/// one backend overload call per step.
template <class Backend>
Program lower_plan(const Plan& plan, Device device, Backend& backend, bool check = true) {
  if (check) validate(plan);
  Program program;
  program.device = device;
  program.dtype = plan.dtype_of(plan.output);
  bind_buffers(plan, program);
  Context context(plan, program);
  for (const Step& step : plan.steps) std::visit([&](const auto& s) { backend(s, context); }, step);
  const Value& out = plan.output_value();
  program.output_buffer = out.buffer;
  program.output_layout = out.layout;
  return program;
}

}  // namespace einexpr::lowering
