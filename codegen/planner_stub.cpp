// Placeholder until the planners land.
#include "einexpr/codegen/planner.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {
namespace {
[[noreturn]] void todo(const char* what) { throw Error(std::string(what) + " is not built yet"); }
}  // namespace
Plan plan_rearrange(const ast::Pattern&, const Layout&, DType, const AxisLengths&, Copy) { todo("plan_rearrange"); }
Plan plan_reduce(const ast::Pattern&, const Layout&, DType, Reduction, const AxisLengths&) { todo("plan_reduce"); }
Plan plan_repeat(const ast::Pattern&, const Layout&, DType, const AxisLengths&, Copy) { todo("plan_repeat"); }
Plan plan_einsum(const ast::Pattern&, std::span<const Layout>, DType, const AxisLengths&, ContractionOrder) { todo("plan_einsum"); }
Plan plan_unary(UnaryOp, const Layout&, DType) { todo("plan_unary"); }
Plan plan_binary(const ast::Pattern&, BinaryOp, std::span<const Layout>, DType, const AxisLengths&) { todo("plan_binary"); }
std::vector<Shape> operand_shapes(const ast::Pattern&, const AxisLengths&) { todo("operand_shapes"); }
}  // namespace einexpr
