#pragma once
// The pattern language (grammar in parser/grammar.hpp):
//   rearrange / reduce / repeat:  "b (h d) ... -> b h d ..."
//   einsum:                        "b s1 h, b s2 h -> b s1 s2"
//   concatenation and split:       "b s1 d, b s2 d -> b (s1 + s2) d", "b (q + k) -> b q, b k"
// Names are identifiers ([A-Za-z_][A-Za-z0-9_]*), anonymous axes are positive integers,
// "()" is a unit axis, "(a b)" a composition, "..." an ellipsis. Whitespace is free.
#include <string_view>

#include "einexpr/parser/ast.hpp"

namespace einexpr {

/// Longest pattern accepted (bytes); longer ones are rejected, not parsed.
inline constexpr std::size_t max_pattern_length = 4096;

/// Parses a pattern. Throws PatternError (position + caret) on malformed text.
/// Purely syntactic: which op it is for is checked by check().
ast::Pattern parse(std::string_view text);

/// Parses a normalization's pattern: one tensor's dims with the axes to work along in
/// brackets, einx's notation ("b h q [k]", "... [d]", "b [h w] c", "b [(h w)] c"). The
/// result has the dims as its one operand and again as its output (check(Op::normalize)
/// checks it as a rearrange onto itself) and each bracket's span in `brackets`. Throws
/// PatternError for a bracket that is unclosed, unopened, nested, empty or inside a group,
/// for a pattern without brackets, and for "->" or ",".
ast::Pattern parse_bracketed(std::string_view text);
/// Parses an indexed pattern (get_at, add_at, cross_entropy): a whole pattern, inputs and
/// output, with the indexed axis in brackets, einx's notation ("[v] d, b s -> b s d",
/// "b [n] d, b k -> b k d", "b s [v], b s -> b s"). The brackets' spans are in `brackets`;
/// check() says where each op wants them. Throws PatternError as parse and parse_bracketed.
ast::Pattern parse_indexed(std::string_view text);
/// Parses an einops pack / unpack pattern ("i j * k"). Throws PatternError.
ast::PackPattern parse_pack(std::string_view text);
/// A pack pattern as a pattern: one operand of its names with "..." in place of "*", the
/// output the same, the text as given ("i j * k" -> "i j ... k -> i j ... k").
ast::Pattern pack_as_pattern(const ast::PackPattern& pack);

}  // namespace einexpr
