#pragma once
// The semantic checks shared by every op, in one place. Each violation throws
// PatternError with the caret under the offending term:
//   - rearrange / reduce / repeat take exactly one operand; einsum one or more
//   - at most one ellipsis per operand; an ellipsis on the right must be on the left
//   - a name twice on one side (except einsum inputs, where it takes the diagonal)
//   - names einops rejects: starting or ending with '_'
//   - rearrange: the same names on both sides; non-unit anonymous axes not allowed
//   - reduce: every output name appears on the left
//   - repeat: every input name appears on the right
//   - einsum: every output name appears in an input; no anonymous axes other than 1
//   - einsum and map: compositions "(a b)" are allowed (views around the contraction),
//     but not an ellipsis inside one in an input
//   - map: one or two operands; every output name appears in an input and every input
//     name in the output (nothing is summed); no anonymous axes other than 1
#include "einexpr/parser/ast.hpp"

namespace einexpr {

void check(const ast::Pattern& pattern, Op op);

}  // namespace einexpr
