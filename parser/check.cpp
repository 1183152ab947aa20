// Placeholder until the semantic checks land.
#include "einexpr/parser/check.hpp"

namespace einexpr {

void check(const ast::Pattern&, Op) {}

}  // namespace einexpr
