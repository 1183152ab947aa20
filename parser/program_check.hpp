#pragma once
// The name-level checks of a parsed model program (the list is in program.hpp).
#include "einexpr/parser/program_ast.hpp"

namespace einexpr {

/// Applies the rules in source order; throws ProgramError at the first fault. Fills
/// program.outputs.
void check_program(ast::Program& program);

}  // namespace einexpr
