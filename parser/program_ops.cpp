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
    // normalizations along the pattern's bracketed axes: softmax(s, "B H S [T]")
    {"softmax",     Op::normalize, 1, 1,                  FunctionArg::none},
    {"log_softmax", Op::normalize, 1, 1,                  FunctionArg::none},
    {"layer_norm",  Op::normalize, 1, 1,                  FunctionArg::none},
    {"rms_norm",    Op::normalize, 1, 1,                  FunctionArg::none},
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

const ProgramOp& program_op(std::string_view name) {
  if (const ProgramOp* row = find_program_op(name)) return *row;
  throw InternalError("no program op named '" + std::string(name) + "'", __FILE__, __LINE__);
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
