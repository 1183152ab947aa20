#pragma once
// Private, CUDA builds only: what each step's lowering sees (lower_cuda.cpp builds it) and
// the lowerings of the steps that need more than a few lines.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/program.hpp"

namespace einexpr::gpu {

struct Lowering {
  const Plan& plan;
  Program& program;
  int device;

  const Value& value(int v) const { return plan.values.at(static_cast<std::size_t>(v)); }
  /// Bytes of a plan buffer that is a temporary.
  std::size_t buffer_bytes(int buffer) const {
    return static_cast<std::size_t>(plan.buffers.at(static_cast<std::size_t>(buffer)).elements) * element_size(plan.dtype);
  }
  /// Appends a staging temporary (after the plan's own); returns its program buffer index.
  int add_temp(std::size_t bytes) {
    program.temp_bytes.push_back(bytes);
    return program.num_inputs() + static_cast<int>(program.temp_bytes.size()) - 1;
  }
  void add_kernel(std::string name, std::function<void(const Workspace&)> run) {
    program.kernels.push_back(Kernel{std::move(name), std::move(run)});
  }
};

/// The base address of program buffer `buffer` in a bound workspace.
inline std::byte* buffer_base(const Workspace& ws, int buffer) { return ws.buffers.at(static_cast<std::size_t>(buffer)); }

/// ContractStep (contract_cuda.cpp).
void lower_contract(const ContractStep& step, Lowering& low);

}  // namespace einexpr::gpu
