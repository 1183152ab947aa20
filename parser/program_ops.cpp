// The op table of the model language and the function names its calls accept.
#include "program_ops.hpp"

#include "einexpr/parser/check.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {
namespace {

// clang-format off
constexpr ProgramOp ops[] = {
    // name        op             tensors                  string after the pattern
    {"einsum",    Op::einsum,    1, max_einsum_operands,  FunctionArg::none},
    {"rearrange", Op::rearrange, 1, 1,                    FunctionArg::none},
    {"reduce",    Op::reduce,    1, 1,                    FunctionArg::reduction},
    {"repeat",    Op::repeat,    1, 1,                    FunctionArg::none},
    {"map",       Op::map,       1, 2,                    FunctionArg::elementwise},
};

constexpr std::string_view reductions[] = {"sum", "mean", "max", "min", "prod", "any", "all",
                                           "var", "std", "logsumexp"};
constexpr std::string_view unary[] = {"relu", "gelu", "exp", "log", "square", "sqrt", "rsqrt",
                                      "neg", "abs", "sigmoid", "tanh", "silu", "reciprocal",
                                      "gelu_erf", "erf", "softplus"};
constexpr std::string_view binary[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
// clang-format on

}  // namespace

std::span<const ProgramOp> program_ops() noexcept { return ops; }

const ProgramOp* find_program_op(std::string_view name) noexcept {
  for (const ProgramOp& row : ops)
    if (row.name == name) return &row;
  return nullptr;
}

const ProgramOp& program_op(Op op) {
  for (const ProgramOp& row : ops)
    if (row.op == op) return row;
  throw InternalError(std::string("no program op for ") + name(op), __FILE__, __LINE__);
}

std::string program_op_names() {
  std::string s;
  for (const ProgramOp& row : ops) s += (s.empty() ? "" : ", ") + std::string(row.name);
  return s;
}

std::span<const std::string_view> reduction_names() noexcept { return reductions; }
std::span<const std::string_view> unary_function_names() noexcept { return unary; }
std::span<const std::string_view> binary_function_names() noexcept { return binary; }

}  // namespace einexpr
