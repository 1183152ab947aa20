// Hostile patterns through the public API (ops, compiled expressions, pack / unpack /
// parse_shape, the cost API): malformed text, Unicode, NUL and control bytes, enormous
// numbers, patterns over the length limit, absurd nesting. Each row asserts PatternError,
// the byte position, a part of the reason, the user's own text quoted, and the caret under
// the fault in columns of code points (so it stays right after multi-byte UTF-8).
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"
#include "hostile_support.hpp"

using namespace einexpr;
using hostile::caret_column;

namespace {

using Call = std::function<void(const std::string&)>;

const Tensor x = Tensor::randn({2, 3}, DType::f32, 1);
const Tensor y = Tensor::randn({3, 4}, DType::f32, 2);

const Call rearrange_ = [](const std::string& p) { (void)rearrange(x, p); };
const Call reduce_ = [](const std::string& p) { (void)reduce(x, p, Reduction::sum); };
const Call repeat_ = [](const std::string& p) { (void)repeat(x, p, {{"r", 2}}); };
const Call einsum1 = [](const std::string& p) { (void)einsum(x, p); };
const Call einsum2 = [](const std::string& p) { (void)einsum(x, y, p); };
const Call map2 = [](const std::string& p) { (void)map(x, y, p, BinaryOp::add); };
const Call compiled = [](const std::string& p) { (void)compile_einsum(p); };
const Call pack_ = [](const std::string& p) { (void)pack(std::vector<Tensor>{x, x}, p); };
const Call unpack_ = [](const std::string& p) {
  const std::vector<Shape> shapes = {{1}, {1}};
  (void)unpack(x, shapes, p);
};
const Call parse_shape_ = [](const std::string& p) { (void)parse_shape(x, p); };
const Call cost_einsum_ = [](const std::string& p) { (void)cost_einsum(p, {{"a", 2}, {"b", 3}, {"c", 4}}); };
const Call cost_reduce_ = [](const std::string& p) { (void)cost_reduce(p, Reduction::max, {{"a", 2}}); };

struct Row {
  const char* call_name;
  const Call* call;
  std::string pattern;
  std::size_t position;
  std::string message;  // a part of the reason
};

std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

const std::string e_acute = "\xc3\xa9", arrow_u = "\xe2\x86\x92", cjk = "\xe4\xb8\xad\xe6\x96\x87",
                  emoji = "\xf0\x9f\x98\x80";

// clang-format off
std::vector<Row> rows() {
  const std::string deep = std::string(40, '(') + "a" + std::string(40, ')') + " -> a";
  return {
      // structure
      {"rearrange", &rearrange_, "a b", 3, "missing '->'"},
      {"rearrange", &rearrange_, "", 0, "missing '->'"},
      {"rearrange", &rearrange_, "a b -> b a -> a", 11, "a second '->'"},
      {"rearrange", &rearrange_, "a (b -> a b", 2, "'(' is never closed"},
      {"rearrange", &rearrange_, "a b) -> a b", 3, "')' has no matching '('"},
      {"rearrange", &rearrange_, "(a (b)) -> a b", 3, "nested parenthesis"},
      {"rearrange", &rearrange_, deep, 1, "nested parenthesis"},
      {"rearrange", &rearrange_, std::string(5000, '(') + " -> a", 4096, "pattern too long: 5005 bytes, at most 4096"},
      {"rearrange", &rearrange_, repeated("a ", 2100) + "-> a", 4096, "pattern too long: 4204 bytes"},
      {"rearrange", &rearrange_, "a .. -> a", 2, "exactly three dots"},
      {"rearrange", &rearrange_, "2b -> b", 0, "not a digit"},
      {"rearrange", &rearrange_, "a b -> b a,", 10, "',' in the output"},
      // Unicode, NUL and control bytes
      {"rearrange", &rearrange_, "a" + e_acute + " b -> b a", 1, "unexpected byte 0xC3"},
      {"rearrange", &rearrange_, "caf" + e_acute + " -> x", 3, "unexpected byte 0xC3"},
      {"rearrange", &rearrange_, "a b " + arrow_u + " b a", 4, "unexpected byte 0xE2"},
      {"rearrange", &rearrange_, "a b -> b " + cjk, 9, "unexpected byte 0xE4"},
      {"rearrange", &rearrange_, emoji + " a -> a", 0, "unexpected byte 0xF0"},
      {"rearrange", &rearrange_, "a\xff b -> b a", 1, "unexpected byte 0xFF"},
      {"rearrange", &rearrange_, std::string("a\0b -> a", 8), 1, "unexpected byte 0x00"},
      {"rearrange", &rearrange_, std::string("a b -> b a\0", 11), 10, "unexpected byte 0x00"},
      {"rearrange", &rearrange_, "a\vb -> b a", 1, "unexpected byte 0x0B"},
      {"rearrange", &rearrange_, "a b -> b a\x1b[31m", 10, "unexpected byte 0x1B"},
      {"rearrange", &rearrange_, repeated(e_acute, 2100) + " -> a", 4096, "pattern too long"},
      // enormous and impossible numbers
      {"rearrange", &rearrange_, "99999999999999999999 -> a", 0, "number too large"},
      {"rearrange", &rearrange_, "a 9223372036854775808 -> a", 2, "must fit in int64"},
      {"rearrange", &rearrange_, "a 0 -> a", 2, "positive length, not 0"},
      {"rearrange", &rearrange_, "a b 9223372036854775807 -> a b", 4, "Non-unitary anonymous axes are not supported in rearrange"},
      // each op's rules
      {"rearrange", &rearrange_, "a b -> a", 2, "Identifiers only on one side of expression (should be on both): 'b'"},
      {"rearrange", &rearrange_, "a a -> a", 2, "axis 'a' appears twice"},
      {"rearrange", &rearrange_, "_a b -> b _a", 0, "should not start or end with underscore: '_a'"},
      {"rearrange", &rearrange_, "a ... ... -> a", 6, "only one ellipsis"},
      {"rearrange", &rearrange_, "(a ...) -> a ...", 3, "Ellipsis inside parenthesis in the left side"},
      {"rearrange", &rearrange_, "a b -> a b ...", 11, "Ellipsis found in right side, but not left side"},
      {"reduce", &reduce_, "a b -> c", 7, "Unexpected identifiers on the right side of reduce: 'c'"},
      {"repeat", &repeat_, "a b -> a", 2, "Unexpected identifiers on the left side of repeat: 'b'"},
      {"rearrange", &rearrange_, "a, b -> a b", 3, "rearrange takes one operand, not 2"},
      {"einsum", &einsum2, "a b, b c -> a d", 14, "output axis 'd' appears in no input"},
      {"einsum", &einsum2, "a b, b c", 8, "missing '->'"},
      {"einsum", &einsum2, "a b, b c -> a c, d", 15, "',' in the output"},
      {"einsum", &einsum1, "a 3 -> a", 2, "Non-unitary anonymous axes are not supported in einsum"},
      {"einsum", &einsum2, "(a ...) b, b c -> a c", 3, "an ellipsis inside a composition is not supported"},
      {"einsum", &einsum2, " -> a", 4, "output axis 'a' appears in no input"},
      {"map", &map2, "a b, b -> a c", 12, "output axis 'c' appears in no input"},
      {"map", &map2, "a b, b c -> a b", 7, "axis 'c' of input 2 is not in the output: map sums nothing"},
      {"map", &map2, "a b, b, b -> a b", 8, "map takes one or two operands, not 3"},
      {"compile_einsum", &compiled, "a b, -> a c", 10, "output axis 'c' appears in no input"},
      {"compile_einsum", &compiled, "a " + cjk + " -> a", 2, "unexpected byte 0xE4"},
      // pack, unpack, parse_shape
      {"pack", &pack_, "a b", 3, "no '*' in the pack pattern"},
      {"pack", &pack_, "* a *", 4, "a second '*'"},
      {"pack", &pack_, "a (b) *", 2, "parentheses are not allowed in a pack pattern"},
      {"pack", &pack_, "a ... *", 2, ""},
      {"pack", &pack_, "a 2 *", 2, ""},
      {"pack", &pack_, "a a *", 2, "axis 'a' appears twice in the pack pattern"},
      {"pack", &pack_, "_a *", 0, "should not start or end with underscore"},
      {"unpack", &unpack_, "a " + e_acute + " *", 2, "unexpected byte 0xC3"},
      {"unpack", &unpack_, std::string("*\0", 2), 1, "unexpected byte 0x00"},
      {"parse_shape", &parse_shape_, "a (b)", 2, "parse_shape takes names, '_' and '...' only"},
      {"parse_shape", &parse_shape_, "a -> b", 2, "parse_shape takes one side of a pattern"},
      {"parse_shape", &parse_shape_, "a" + e_acute, 1, "unexpected byte 0xC3"},
      // the cost API
      {"cost_einsum", &cost_einsum_, "a b, b c -> a " + e_acute, 14, "unexpected byte 0xC3"},
      {"cost_einsum", &cost_einsum_, "a b, b c -> a (c", 14, "'(' is never closed"},
      {"cost_reduce", &cost_reduce_, "a -> a a", 7, "axis 'a' appears twice"},
      {"cost_einsum", &cost_einsum_, "a" + repeated(", a", 1300) + " -> a", 192, "einsum takes at most 64 operands, not 1301"},
      {"compile_einsum", &compiled, "a" + repeated(",a", 2040) + "->a", 128, "einsum takes at most 64 operands, not 2041"},
  };
}
// clang-format on

}  // namespace

TEST_CASE("hostile patterns through the public API: PatternError at the fault, caret in place", "[hostile][errors]") {
  const std::vector<Row> table = rows();
  REQUIRE(table.size() >= 60);
  for (const Row& r : table) {
    CAPTURE(r.call_name, hostile::printable(r.pattern), r.position, r.message);
    try {
      (*r.call)(r.pattern);
      FAIL("accepted");
    } catch (const PatternError& e) {
      CHECK(e.position() == r.position);
      CHECK_THAT(e.reason(), Catch::Contains(r.message));
      CHECK(e.pattern() == r.pattern);  // the user's own text, not a rewritten one
      const std::string caret = "\n  " + std::string(caret_column(r.pattern, r.position), ' ') + "^";
      CHECK(std::string(e.what()).find(caret) != std::string::npos);
      CHECK(std::string(e.what()).find('\0') == std::string::npos);  // control bytes shown as '?'
    }
  }
}
