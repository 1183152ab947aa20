// numpy_pattern_hint: numpy's one-letter einsum patterns rewritten in einexpr's names; other
// patterns (einexpr's own, with spaces, numbers or parentheses) get no hint.
#include <catch2/catch.hpp>

#include "einexpr/parser/numpy_hint.hpp"

using namespace einexpr;

TEST_CASE("numpy's one-letter patterns get einexpr's spelling", "[numpy_hint]") {
  struct Row {
    const char* pattern;
    const char* spelled;  // "" for no hint
  };
  const Row rows[] = {
      {"bd,dk->bk", "b d, d k -> b k"},
      {"ij,jk", "i j, j k"},
      {"ii->i", "i i -> i"},
      {"ab,ab->", "a b, a b ->"},
      {"...ii->...i", "... i i -> ... i"},
      {"i...,i->...", "i ..., i -> ..."},
      {"bhqd,bhkd->bhqk", "b h q d, b h k d -> b h q k"},
      {"abc->cba", "a b c -> c b a"},
      {"i,j->ij", "i, j -> i j"},
      // einexpr's own or not numpy's form: no hint
      {"b d, d k -> b k", ""},
      {"i,j->k", ""},        // no run of two letters: already einexpr's meaning
      {"bd", ""},            // no comma or arrow
      {"b(hd)->bhd", ""},    // a parenthesis: einexpr's composition
      {"b2,2k->bk", ""},     // a digit
      {"", ""},
  };
  for (const Row& r : rows) {
    CAPTURE(r.pattern);
    const std::string hint = numpy_pattern_hint(r.pattern);
    if (*r.spelled == '\0') {
      CHECK(hint.empty());
    } else {
      CHECK(hint == std::string("einexpr's axes are names separated by spaces: numpy's '") + r.pattern + "' is '" +
                        r.spelled + "' here");
    }
  }
}
