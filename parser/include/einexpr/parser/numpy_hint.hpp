#pragma once
// numpy's einsum writes an axis as one letter and runs them together ("bd,dk->bk"); einexpr's
// axes are names separated by spaces, so that pattern means axes "bd", "dk" and "bk". Where a
// rejected pattern looks like numpy's, the public ops, cost and `einexpr check` add a line
// saying so, with the pattern rewritten.
#include <string>
#include <string_view>

namespace einexpr {

/// "einexpr's axes are names separated by spaces: numpy's 'bd,dk->bk' is 'b d, d k -> b k'
/// here", or "" when `pattern` does not look like numpy's: no spaces, only letters, commas,
/// "->" and "...", a comma or an arrow, and two letters (or a letter and "...") side by side.
std::string numpy_pattern_hint(std::string_view pattern);

}  // namespace einexpr
