#pragma once
// The op registry's rows as the text sees them: one row per spelling of an op (its name in
// C++ calls, on the command line, in model statements and in Python), with its arity, the
// grammar its pattern is parsed with, the string it takes after the pattern and which of its
// operands are integer indices. Every caller that lists, parses or counts ops reads this
// table (parser/ops.cpp): the CLI, the cost API, the model language, the Python module and
// the fuzz targets. codegen's half of a row (the options, the planner, the gradient) is
// OpOptions in codegen/planner.hpp, one alternative per Op: a new Op that is missing there
// fails to compile (codegen/README.md, "Adding an op").
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "einexpr/parser/ast.hpp"

namespace einexpr {

/// How an op's pattern is parsed (parse_pattern).
enum class Grammar : unsigned char {
  plain,      // parse(): "b s h, h d -> b s d"; "(a + b)" concatenates
  bracketed,  // parse_bracketed(): one tensor's dims, the axes to work along in brackets
  indexed,    // parse_indexed(): a whole pattern, the indexed axis in brackets
  packed      // parse_pack(): einops' "i j * k", as pack_as_pattern gives it
};

/// The string a call takes after its pattern.
enum class FunctionArg : unsigned char {
  none,        // einsum(x, w, "b d, d e -> b e")
  reduction,   // reduce(x, "b s h -> b h", "mean")
  elementwise  // map(x, "b h -> b h", "gelu"): unary with one tensor, binary with two
};

struct OpRow {
  std::string_view name;    // as written: C++ function, CLI OP, model statement, Python
  Op op;                    // check(pattern, op) applies to its pattern
  std::size_t min_inputs;   // tensor arguments
  std::size_t max_inputs;
  Grammar grammar;
  FunctionArg function;
  int index_operand;        // the operand that holds integer indices (i64 or i32), or -1
  std::string_view summary; // one line: what it computes, for help texts and docs
};

std::span<const OpRow> op_rows() noexcept;
/// The row named `name`, or nullptr.
const OpRow* find_op_row(std::string_view name) noexcept;
/// The row named `name`, which the table has (a parsed statement's op_name always is).
/// Several rows may share an Op (softmax, layer_norm, ... are all Op::normalize).
const OpRow& op_row(std::string_view name);
/// The first row of `op` (for Op::normalize: softmax).
const OpRow& op_row(Op op) noexcept;
/// "einsum, rearrange, reduce, repeat, map, softmax, ...": the table's names, for messages.
std::string op_row_names();

/// Parses `text` with `grammar` (no check). Throws PatternError.
ast::Pattern parse_with(Grammar grammar, std::string_view text);
/// Parses `text` with op's grammar and checks it for op (check.hpp). Throws PatternError.
ast::Pattern parse_pattern(Op op, std::string_view text);

/// The names a FUNCTION string may take: codegen's Reduction, UnaryOp and BinaryOp names
/// (the parser may not include codegen; tests/parser/test_program_names.cpp checks that the
/// lists agree, so a new function cannot be added to one and not the other).
std::span<const std::string_view> reduction_names() noexcept;
std::span<const std::string_view> unary_function_names() noexcept;
std::span<const std::string_view> binary_function_names() noexcept;

}  // namespace einexpr
