#pragma once
// Pattern text as token lists, for deriving gradient patterns (private to codegen).
// Tokens are what a side of a pattern lists: "b", "(h d)", "()", "...", "1".
#include <string>
#include <string_view>
#include <vector>

#include "einexpr/codegen/backward.hpp"

namespace einexpr::detail {

using Tokens = std::vector<std::string>;

struct PatternText {
  std::vector<Tokens> inputs;  // comma-separated operands left of "->"
  Tokens output;
};

/// Splits "b s1 h, b s2 h -> b s1 s2"; a group "( h  d )" becomes the token "(h d)".
/// Throws Error for a pattern without "->" or with an unbalanced parenthesis.
PatternText split_pattern(std::string_view pattern);
/// "b h d", single-spaced.
std::string join(const Tokens& tokens);
/// "a b, b c -> a c".
std::string text(const PatternText& pattern);
/// The axis names a token stands for: "(h d)" -> {h, d}; "()" and numbers -> {}.
Tokens names_of(const std::string& token);
/// The dims of `t` (written as `tokens`, an ellipsis standing for the dims left over)
/// that `keep` lists, in keep's order, as a tensor named `name`.
GradientTensor select(const GradientTensor& t, const Tokens& tokens, const Tokens& keep, std::string name);

}  // namespace einexpr::detail
