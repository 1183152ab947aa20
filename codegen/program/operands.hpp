#pragma once
// A statement's operands against the tensors it reads (private to codegen/program): every
// dim the pattern gives a length (a named axis, a number, "()", a composition) must have it.
#include <cstddef>
#include <string>
#include <vector>

#include "einexpr/codegen/program_plan.hpp"
#include "program/environment.hpp"

namespace einexpr::program_detail {

/// The named axes of a pattern (operands and output), each once, in order of appearance.
std::vector<std::string> named_axes(const ast::Pattern& pattern);

/// Operand `i` of statement `s` read from tensor `t`: as many dims (an ellipsis takes any
/// number), each of the length the environment gives it. ProgramError at the pattern's term,
/// naming both lengths and where each comes from, with a note at the tensor's definition.
void check_operand(const ProgramPlan& plan, const Environment& env, const ast::Statement& s, std::size_t i,
                   const ProgramTensor& t);

}  // namespace einexpr::program_detail
