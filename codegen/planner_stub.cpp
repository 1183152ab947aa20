// Placeholder until the CPU lowering lands.
#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {
Program lower_cpu(const Plan&) { throw Error("lower_cpu is not built yet"); }
const char* cpu_gemm_backend() noexcept { return "eigen"; }
}  // namespace einexpr
