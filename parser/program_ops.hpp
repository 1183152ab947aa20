#pragma once
// The ops a model statement may call, one table row each (program_ops.cpp). An op is an
// identifier looked up here, not a grammar keyword: adding an op to the model language is
// one row (with its Op value and check() rules in ast.hpp and check.cpp).
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "einexpr/parser/ast.hpp"

namespace einexpr {

/// The string a call takes after its pattern.
enum class FunctionArg : unsigned char {
  none,        // einsum(x, w, "b d, d e -> b e")
  reduction,   // reduce(x, "b s h -> b h", "mean")
  elementwise  // map(x, "b h -> b h", "gelu"): unary with one tensor, binary with two
};

struct ProgramOp {
  std::string_view name;   // as written in a statement
  Op op;                   // check(pattern, op) applies to its pattern
  std::size_t min_inputs;  // tensor arguments
  std::size_t max_inputs;
  FunctionArg function;
};

std::span<const ProgramOp> program_ops() noexcept;
/// The row named `name`, or nullptr.
const ProgramOp* find_program_op(std::string_view name) noexcept;
/// The row named `name`, which the table has (a parsed statement's op_name always is).
/// Several rows may share an Op (softmax, layer_norm, ... are all Op::normalize).
const ProgramOp& program_op(std::string_view name);
/// "einsum, rearrange, reduce, repeat, map, softmax, ...": the table's names, for messages.
std::string program_op_names();

/// The names a FUNCTION string may take: codegen's Reduction, UnaryOp and BinaryOp names
/// (the parser may not include codegen; tests/parser/test_program_names.cpp checks that the
/// lists agree, so a new function cannot be added to one and not the other).
std::span<const std::string_view> reduction_names() noexcept;
std::span<const std::string_view> unary_function_names() noexcept;
std::span<const std::string_view> binary_function_names() noexcept;

}  // namespace einexpr
