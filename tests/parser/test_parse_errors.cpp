// parse(): malformed patterns throw PatternError with a caret position and a message.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"

namespace {

struct Invalid {
  std::string pattern;
  std::size_t position;
  const char* message;  // a part of the message
};

// clang-format off
const std::vector<Invalid> invalid_rows = {
    // structure
    {"b h w", 5, "missing '->'"},
    {"", 0, "missing '->'"},
    {"b h w c", 7, "a pattern is 'inputs -> output'"},
    {"a -> b -> c", 7, "a second '->': a pattern has exactly one '->'"},
    {"a -> b -> ", 7, "a second '->'"},
    {"a ->-> b", 4, "a second '->'"},
    {"a, ", 3, "missing '->'"},  // an empty operand (0-d) parses; the arrow is missing
    // parentheses
    {"b (h d -> b h d", 2, "unbalanced parenthesis: '(' is never closed"},
    {"(a b -> (a b)", 0, "'(' is never closed"},
    {"a -> (b", 5, "'(' is never closed"},
    {"(", 0, "'(' is never closed"},
    {"a b) -> a b", 3, "unbalanced parenthesis: ')' has no matching '('"},
    {"a -> (a))", 8, "')' has no matching '('"},
    {")", 0, "')' has no matching '('"},
    {"(a (b c)) -> a b c", 3, "nested parenthesis: axis composition is one level deep"},
    {"((a)) -> a", 1, "nested parenthesis"},
    {"((((((((((a)))))))))) -> a", 1, "nested parenthesis"},
    {"(a, b) -> a b", 2, "',' inside parentheses"},
    // dots
    {"a .. -> a", 2, "an ellipsis is exactly three dots '...'"},
    {"a .... -> a", 2, "exactly three dots"},
    {". -> a", 0, "exactly three dots"},
    {"a -> ......", 5, "exactly three dots"},
    {"a -> (b ..)", 8, "exactly three dots"},
    // tokens run together
    {"a.b -> a", 1, "expected a space: axis names, numbers and '...' are separated by whitespace"},
    {"a... -> a", 1, "expected a space"},
    {"...a -> a", 3, "expected a space"},
    {"2.5 -> a", 1, "expected a space"},
    {"2b -> b", 0, "invalid axis name: a name starts with a letter or '_', not a digit"},
    {"a 3x -> a", 2, "not a digit"},
    {"(2x) -> x", 1, "not a digit"},
    // characters outside the language
    {"\xc3\xa9 -> a", 0, "unexpected byte 0xC3: axis names are ASCII identifiers"},
    {"a\tb\t\xc3\xa9 -> a", 4, "unexpected byte 0xC3"},
    {"i j -> i\xe2\x80\x8bj", 8, "unexpected byte 0xE2"},
    {std::string("a b\x01 -> a"), 3, "unexpected byte 0x01"},
    {"a\vb -> a", 1, "unexpected byte 0x0B"},
    {"a -> b\x7f", 6, "unexpected byte 0x7F"},
    {std::string("a -> b\0", 7), 6, "unexpected byte 0x00"},
    {"a # b -> a", 2, "unexpected character '#': axis names are identifiers"},
    {"a * b -> a", 2, "unexpected character '*'"},
    {"(a # b) -> a", 3, "unexpected character '#'"},
    {"a > b", 2, "unexpected character '>'"},
    {"a - b -> a", 2, "'-' without '>': the arrow is '->'"},
    {"a - > b", 2, "'-' without '>'"},
    {"(a - b) -> a", 3, "'-' without '>'"},
    // numbers
    {"99999999999999999999 -> a", 0, "number too large"},
    {"a 9223372036854775808 -> a", 2, "number too large: an anonymous axis length must fit in int64"},
    {"a 0 -> a", 2, "anonymous axis should have positive length, not 0"},
    {"a (b 000) -> a b", 5, "positive length, not 0"},
};
// clang-format on

}  // namespace

TEST_CASE("parse: malformed patterns throw PatternError at the fault", "[parse][errors]") {
  REQUIRE(invalid_rows.size() >= 40);
  for (const auto& row : invalid_rows) {
    CAPTURE(row.pattern, row.position, row.message);
    try {
      einexpr::parse(row.pattern);
      FAIL("parsed without an error");
    } catch (const einexpr::PatternError& e) {
      CHECK(e.position() == row.position);
      CHECK_THAT(e.reason(), Catch::Contains(row.message));
      CHECK(e.pattern() == row.pattern);
    }
  }
}

TEST_CASE("parse: the message has the position and a caret under the fault", "[parse][errors]") {
  try {
    einexpr::parse("b (h d -> b h d");
    FAIL("parsed without an error");
  } catch (const einexpr::PatternError& e) {
    CHECK(std::string(e.what()) ==
          "unbalanced parenthesis: '(' is never closed at position 2\n"
          "  b (h d -> b h d\n"
          "    ^");
  }
}
