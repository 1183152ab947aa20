// Placeholder until the PEGTL grammar lands.
#include "einexpr/parser/parse.hpp"

#include "einexpr/runtime/error.hpp"

namespace einexpr {

ast::Pattern parse(std::string_view text) {
  throw PatternError("the pattern parser is not built yet", std::string(text), 0);
}
ast::PackPattern parse_pack(std::string_view text) {
  throw PatternError("the pack-pattern parser is not built yet", std::string(text), 0);
}

}  // namespace einexpr
