#pragma once
// The semantic checks shared by every op, in one place. Each violation throws
// PatternError with the caret under the offending term:
//   - rearrange / reduce / repeat take exactly one operand; einsum one to
//     max_einsum_operands (planning a contraction order grows as the cube of the count)
//   - at most one ellipsis per operand; an ellipsis on the right must be on the left
//   - a name twice on one side (except einsum inputs, where it takes the diagonal)
//   - names einops rejects: starting or ending with '_'
//   - rearrange: the same names on both sides; non-unit anonymous axes not allowed
//   - reduce: every output name appears on the left
//   - repeat: every input name appears on the right
//   - einsum: every output name appears in an input; no anonymous axes other than 1
//   - einsum and map: compositions "(a b)" are allowed (views around the contraction),
//     but not an ellipsis inside one in an input
//   - normalize (parse_bracketed's patterns): one operand, checked as a rearrange onto
//     itself (its output is its operand)
//   - map: one or two operands; every output name appears in an input and every input
//     name in the output (nothing is summed); no anonymous axes other than 1
#include "einexpr/parser/ast.hpp"

namespace einexpr {

/// The most operands an einsum takes (numpy's limit too). Choosing the contraction order of
/// n operands costs about n^3 steps and its gradients n^4, so a 4 KB pattern of ~2000
/// operands would plan for minutes: it is refused instead.
inline constexpr std::size_t max_einsum_operands = 64;

void check(const ast::Pattern& pattern, Op op);

}  // namespace einexpr
