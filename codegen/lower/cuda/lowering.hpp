#pragma once
// Private, CUDA builds only: what each step's lowering sees (lower_cuda.cpp builds it) and
// the lowerings of the steps that need more than a few lines.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/runtime/program.hpp"
#include "lower/skeleton.hpp"

namespace einexpr::gpu {

/// A step's lowering on device `device`: the shared skeleton's Context (lower/skeleton.hpp)
/// with the names the CUDA lowerings use.
struct Lowering {
  lowering::Context& context;
  const Plan& plan;
  int device;

  const Value& value(int v) const { return context.value(v); }
  /// Bytes of a plan buffer that is a temporary.
  std::size_t buffer_bytes(int buffer) const { return context.buffer_bytes(buffer); }
  /// Appends a staging temporary (after the plan's own); returns its program buffer index.
  int add_temp(std::size_t bytes) { return context.add_temp(bytes); }
  void add_kernel(std::string name, std::function<void(const Workspace&)> run) {
    context.add(Kernel{std::move(name), std::move(run)});
  }
};

/// The base address of program buffer `buffer` in a bound workspace.
inline std::byte* buffer_base(const Workspace& ws, int buffer) { return ws.buffers.at(static_cast<std::size_t>(buffer)); }

/// ContractStep (contract_cuda.cpp).
void lower_contract(const ContractStep& step, Lowering& low);

}  // namespace einexpr::gpu
