// lower_cpu: Plan -> Program on the CPU. Plan buffer i is program buffer i (the inputs
// first, then the plan's temporaries in order); kernels may append staging temporaries
// after those. Each step kind has one overload below, so a new kind fails to compile here.
#include <string>
#include <variant>

#include "cpu_kernels.hpp"
#include "gemm.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

class CpuLowering {
 public:
  CpuLowering(const Plan& plan, Program& program) : plan_(plan), program_(program) {}

  void operator()(const ViewStep&) const {}  // a view moves nothing
  void operator()(const CopyStep& s) const {
    add(cpu::copy_kernel(operand(s.src), operand(s.dst), plan_.dtype));
  }
  void operator()(const ContractStep& s) const {
    const cpu::AddTemp add_temp = [this](std::size_t bytes) {
      program_.temp_bytes.push_back(bytes);
      return program_.num_inputs() + static_cast<int>(program_.temp_bytes.size()) - 1;
    };
    add(cpu::contract_kernel(s, operand(s.a), operand(s.b), operand(s.dst), plan_.dtype, add_temp));
  }
  void operator()(const ReduceStep& s) const {
    add(cpu::reduce_kernel(s, operand(s.src), operand(s.dst), plan_.dtype));
  }
  void operator()(const MapStep& s) const {
    std::vector<cpu::Operand> srcs;
    for (int v : s.srcs) srcs.push_back(operand(v));
    add(cpu::map_kernel(s, srcs, operand(s.dst), plan_.dtype));
  }

 private:
  cpu::Operand operand(int value) const {
    const Value& v = plan_.values.at(static_cast<std::size_t>(value));
    return {v.buffer, v.layout};
  }
  void add(Kernel kernel) const { program_.kernels.push_back(std::move(kernel)); }

  const Plan& plan_;
  Program& program_;
};

}  // namespace

Program lower_cpu(const Plan& plan) {
  validate(plan);
  Program program;
  program.device = Device::cpu();
  program.dtype = plan.dtype;
  for (int i = 0; i < plan.num_inputs; ++i) {
    const PlanBuffer& b = plan.buffers.at(static_cast<std::size_t>(i));
    EINEXPR_ASSERT(b.input == i, "lower_cpu: plan buffer " + std::to_string(i) + " is not input " + std::to_string(i));
    program.input_layouts.push_back(plan.values.at(static_cast<std::size_t>(i)).layout);
  }
  for (std::size_t i = static_cast<std::size_t>(plan.num_inputs); i < plan.buffers.size(); ++i) {
    EINEXPR_ASSERT(plan.buffers[i].input < 0, "lower_cpu: an input buffer after the temporaries");
    program.temp_bytes.push_back(static_cast<std::size_t>(
        checked_mul(plan.buffers[i].elements, static_cast<std::int64_t>(element_size(plan.dtype)))));
  }
  const CpuLowering lowering(plan, program);
  for (const Step& step : plan.steps) std::visit(lowering, step);
  program.output_buffer = plan.output_value().buffer;
  program.output_layout = plan.output_value().layout;
  return program;
}

const char* cpu_gemm_backend() noexcept { return cpu::gemm_library(); }

}  // namespace einexpr
