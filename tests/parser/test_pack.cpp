// parse_pack(): einops' pack / unpack patterns, names with exactly one "*".
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : " ") + n;
  return s;
}

}  // namespace

TEST_CASE("parse_pack: valid pack patterns", "[pack]") {
  struct Row {
    const char* pattern;
    const char* names;  // joined by spaces
    std::size_t star;
  };
  const std::vector<Row> rows = {
      {"i j * k", "i j k", 2},
      {"* k", "k", 0},
      {"b *", "b", 1},
      {"*", "", 0},
      {"  b\t*\n h ", "b h", 1},
      {"batch * hidden_dim", "batch hidden_dim", 1},
      {"h w c *", "h w c", 3},
      {"A1 * b2", "A1 b2", 1},
  };
  for (const auto& row : rows) {
    CAPTURE(row.pattern);
    const auto p = einexpr::parse_pack(row.pattern);
    CHECK(joined(p.names) == row.names);
    CHECK(p.star == row.star);
    CHECK(p.text == row.pattern);
  }
}

TEST_CASE("parse_pack: invalid pack patterns throw PatternError at the fault", "[pack]") {
  struct Row {
    const char* pattern;
    std::size_t position;
    const char* message;
  };
  const std::vector<Row> rows = {
      {"i j k", 5, "no '*' in the pack pattern"},
      {"", 0, "no '*'"},
      {"* i *", 4, "a second '*': a pack pattern has exactly one '*'"},
      {"* *", 2, "a second '*'"},
      {"i (j) *", 2, "parentheses are not allowed in a pack pattern"},
      {"i j) *", 3, "parentheses are not allowed"},
      {"... *", 0, "'...' is not allowed in a pack pattern"},
      {"i i *", 2, "axis 'i' appears twice in the pack pattern"},
      {"i * j i", 6, "axis 'i' appears twice"},
      {"_i *", 0, "axis name should not start or end with underscore: '_i'"},
      {"i_ *", 0, "underscore: 'i_'"},
      {"2 *", 0, "invalid axis name"},
      {"i*", 1, "expected a space"},
      {"*i", 1, "expected a space"},
      {"i, *", 1, "unexpected character ','"},
      {"i # *", 2, "unexpected character '#'"},
      {"i -> *", 2, "unexpected character '-'"},
      {"\xc3\xa9 *", 0, "unexpected byte 0xC3"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.pattern);
    try {
      einexpr::parse_pack(row.pattern);
      FAIL("parsed without an error");
    } catch (const einexpr::PatternError& e) {
      CHECK(e.position() == row.position);
      CHECK_THAT(e.reason(), Catch::Contains(row.message));
    }
  }
}

TEST_CASE("parse_pack: the length limit applies", "[pack]") {
  const std::string long_pattern = "* " + std::string(einexpr::max_pattern_length, 'a');
  try {
    einexpr::parse_pack(long_pattern);
    FAIL("parsed without an error");
  } catch (const einexpr::PatternError& e) {
    CHECK(e.position() == einexpr::max_pattern_length);
    CHECK_THAT(e.reason(), Catch::Contains("pattern too long"));
  }
}
