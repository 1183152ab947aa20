// check(): every rule of check.hpp, for every op, as (pattern, op, ok or position + message).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "einexpr/parser/check.hpp"
#include "einexpr/parser/ops.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"

using einexpr::Op;

namespace {

constexpr std::size_t ok = static_cast<std::size_t>(-1);

struct Row {
  const char* pattern;
  Op op;
  std::size_t position;  // `ok` where check() accepts the pattern
  const char* message = "";
};

// clang-format off
const std::vector<Row> rows = {
    // ---- rearrange ----
    {"b h w c -> b (h w) c", Op::rearrange, ok},
    {"b (h1 h2) (w1 w2) c -> (b h1 w1) h2 w2 c", Op::rearrange, ok},
    {"b ... -> b (...)", Op::rearrange, ok},
    {"... -> ...", Op::rearrange, ok},
    {"b h w c -> b 1 h w () c", Op::rearrange, ok},
    {"b () 1 h -> b h", Op::rearrange, ok},
    {"a_b -> a_b", Op::rearrange, ok},
    {"b h -> b", Op::rearrange, 2, "Identifiers only on one side of expression (should be on both): 'h'"},
    {"b -> b h", Op::rearrange, 7, "(should be on both): 'h'"},
    {"b ... -> b", Op::rearrange, 2, "(should be on both): '...'"},
    {"b -> b ...", Op::rearrange, 7, "Ellipsis found in right side, but not left side of a pattern"},
    {"b (h ...) -> b h ...", Op::rearrange, 5, "Ellipsis inside parenthesis in the left side is not allowed"},
    {"b 2 -> b", Op::rearrange, 2, "Non-unitary anonymous axes are not supported in rearrange (exception is length 1): '2'"},
    {"b -> b 3", Op::rearrange, 7, "Non-unitary anonymous axes are not supported in rearrange"},
    {"(b 2) -> b", Op::rearrange, 3, "Non-unitary anonymous axes"},
    {"b b -> b", Op::rearrange, 2, "axis 'b' appears twice on the left side"},
    {"b -> b b", Op::rearrange, 7, "axis 'b' appears twice on the right side"},
    {"b (a b) -> a b", Op::rearrange, 5, "axis 'b' appears twice on the left side"},
    {"... (a ...) -> a ...", Op::rearrange, 7, "only one ellipsis '...' is allowed per operand"},
    {"a, b -> a b", Op::rearrange, 3, "rearrange takes one operand, not 2"},
    // ---- concatenation and split (rearrange with "(a + b)") ----
    {"b s1 d, b s2 d -> b (s1 + s2) d", Op::rearrange, ok},
    {"b d s1, b s2 d -> b (s1 + s2) d", Op::rearrange, ok},
    {"s1 h k, s2 h k -> (s1 + s2) (h k)", Op::rearrange, ok},
    {"... s, ... t -> ... (s + t)", Op::rearrange, ok},
    {"b s (q + k + v) -> b s q, b s k, b s v", Op::rearrange, ok},
    {"(a + b) c -> c a, b c", Op::rearrange, ok},
    {"a -> (a + b)", Op::rearrange, 5, "has 2 parts but 1 input is given"},
    {"a (b + c) -> a b", Op::rearrange, 2, "'(b + c)' has 2 parts but 1 output is given"},
    {"a b, a c -> a (b + c + d)", Op::rearrange, 14, "has 3 parts but 2 inputs are given"},
    {"a b, a c -> a (b + c), a", Op::rearrange, 21, "several outputs split a concatenation"},
    {"a b, a c -> a (b + b)", Op::rearrange, 19, "part 'b' appears twice"},
    {"a b, a c -> a (b + 2)", Op::rearrange, 19, "a part of '(a + b)' is a named axis"},
    {"a b, c -> a (b + c)", Op::rearrange, 5, "input 2 lacks axis 'a'"},
    {"a b, a c d -> a (b + c)", Op::rearrange, 9, "axis 'd' of input 2 is not in 'a (b + c)'"},
    {"a b, a c -> (a + b) (b + c)", Op::rearrange, 20, "a second '(a + b)'"},
    {"b a, c a -> b (b + c)", Op::rearrange, 12, "is a part of '(a + b)' and a dim of its own"},
    {"a b, a b -> a (b + c)", Op::rearrange, 7, "axis 'b' of input 2 is not in 'a (b + c)' (input 2 holds part 'c')"},
    {"a (b + c) -> a b", Op::einsum, 2, "'(a + b)' concatenates, which only rearrange does"},
    {"a (b + c) -> a b", Op::reduce, 2, "it means nothing in reduce"},
    {"a b, a c -> a (b + c)", Op::map, 14, "it means nothing in map"},
    {"a, b -> c, d", Op::einsum, 9, "',' in the output: the right side of '->' is a single operand"},
    {"a -> b c, d", Op::reduce, 8, "',' in the output"},
    {"a b -> a, b", Op::rearrange, 8, "several outputs split a concatenation of the input"},
    {"_b -> _b", Op::rearrange, 0, "axis name should not start or end with underscore: '_b'"},
    {"b_ -> b_", Op::rearrange, 0, "should not start or end with underscore: 'b_'"},
    {"b -> b_", Op::rearrange, 5, "should not start or end with underscore: 'b_'"},
    {"_ -> _", Op::rearrange, 0, "should not start or end with underscore: '_'"},
    // ---- reduce ----
    {"b h w c -> b c", Op::reduce, ok},
    {"b c (h 2) (w 2) -> b c h w", Op::reduce, ok},
    {"b h ->", Op::reduce, ok},
    {"... h -> ...", Op::reduce, ok},
    {"b ... -> b", Op::reduce, ok},
    {"b 3 -> b", Op::reduce, ok},
    {"b h -> b 1 ()", Op::reduce, ok},
    {"b h -> b x", Op::reduce, 9, "Unexpected identifiers on the right side of reduce: 'x'"},
    {"b h -> b 3", Op::reduce, 9, "Unexpected identifiers on the right side of reduce: '3'"},
    {"b -> b ...", Op::reduce, 7, "Ellipsis found in right side, but not left side"},
    {"(b ...) -> b", Op::reduce, 3, "Ellipsis inside parenthesis in the left side is not allowed"},
    {"b h h -> b", Op::reduce, 4, "axis 'h' appears twice on the left side"},
    {"b h -> b b", Op::reduce, 9, "axis 'b' appears twice on the right side"},
    {"a, b -> a", Op::reduce, 3, "reduce takes one operand, not 2"},
    {"__h -> ", Op::reduce, 0, "underscore"},
    // ---- repeat ----
    {"h w -> c h w", Op::repeat, ok},
    {"h w c -> h (repeat w) c", Op::repeat, ok},
    {"h w c -> (2 h) (2 w) c", Op::repeat, ok},
    {"h w -> h w 3", Op::repeat, ok},
    {"... -> b ...", Op::repeat, ok},
    {" -> h w", Op::repeat, ok},
    {"b 1 () -> b c", Op::repeat, ok},
    {"h w -> h", Op::repeat, 2, "Unexpected identifiers on the left side of repeat: 'w'"},
    {"h 2 -> h", Op::repeat, 2, "Unexpected identifiers on the left side of repeat: '2'"},
    {"h ... -> h", Op::repeat, 2, "Unexpected identifiers on the left side of repeat: '...'"},
    {"h -> h ...", Op::repeat, 7, "Ellipsis found in right side, but not left side"},
    {"(h ...) -> h ...", Op::repeat, 3, "Ellipsis inside parenthesis in the left side"},
    {"h -> h h", Op::repeat, 7, "axis 'h' appears twice on the right side"},
    {"h, w -> h w", Op::repeat, 3, "repeat takes one operand, not 2"},
    {"h -> h _c", Op::repeat, 7, "underscore: '_c'"},
    // ---- einsum ----
    {"i j, j k -> i k", Op::einsum, ok},
    {"i i -> i", Op::einsum, ok},
    {"i i ->", Op::einsum, ok},
    {"b s1 h, b s2 h -> b s1 s2", Op::einsum, ok},
    {"i j, j k, k l -> i l", Op::einsum, ok},
    {"... i j, ... j k -> ... i k", Op::einsum, ok},
    {"i ..., ... -> ...", Op::einsum, ok},
    {"b 1 h -> b h", Op::einsum, ok},
    {"b () h -> b 1 h", Op::einsum, ok},
    {"->", Op::einsum, ok},
    {"i j -> i i", Op::einsum, 9, "axis 'i' appears twice in the output"},
    {"i j -> k", Op::einsum, 7, "output axis 'k' appears in no input"},
    {"i j -> ...", Op::einsum, 7, "ellipsis '...' in the output but in no input"},
    {"... ... i -> i", Op::einsum, 4, "only one ellipsis '...' is allowed per operand"},
    {"i, j -> ... ...", Op::einsum, 12, "only one ellipsis"},
    {"i 3 -> i", Op::einsum, 2, "Non-unitary anonymous axes are not supported in einsum (exception is length 1): '3'"},
    {"(i j) k -> k", Op::einsum, ok},
    {"i j, j k -> (i k)", Op::einsum, ok},
    {"b (h d), h d k -> b k", Op::einsum, ok},
    {"b ..., b -> b (...)", Op::einsum, ok},
    {"(i ...) -> i", Op::einsum, 3, "an ellipsis inside a composition is not supported in the inputs of einsum"},
    {"i_ j -> j", Op::einsum, 0, "underscore: 'i_'"},
    // ---- map ----
    {"b s h, h -> b s h", Op::map, ok},
    {"b s h, b s h -> b s h", Op::map, ok},
    {"b h -> h b", Op::map, ok},
    {"... h, h -> ... h", Op::map, ok},
    {"b 1 h, h -> b h", Op::map, ok},
    {"a, b, c -> a b c", Op::map, 6, "map takes one or two operands, not 3"},
    {"b s h, h -> b s", Op::map, 4, "axis 'h' of input 1 is not in the output: map sums nothing"},
    {"b h -> b h x", Op::map, 11, "output axis 'x' appears in no input"},
    {"b b, b -> b", Op::map, 2, "axis 'b' appears twice in input 1"},
    {"b, h h -> b h", Op::map, 5, "axis 'h' appears twice in input 2"},
    {"... h, h -> h", Op::map, 0, "axis '...' of input 1 is not in the output"},
    {"h -> ...", Op::map, 5, "ellipsis '...' in the output but in no input"},
    {"b 2, b -> b", Op::map, 2, "Non-unitary anonymous axes are not supported in map"},
    {"(b h), h -> (b h)", Op::map, ok},
    {"b (... h), h -> b h", Op::map, 3, "an ellipsis inside a composition is not supported in the inputs of map"},
};
// clang-format on

}  // namespace

TEST_CASE("check: the rules of each op", "[check]") {
  for (const auto& row : rows) {
    CAPTURE(row.pattern, einexpr::name(row.op), row.position, row.message);
    const auto pattern = einexpr::parse(row.pattern);
    if (row.position == ok) {
      CHECK_NOTHROW(einexpr::check(pattern, row.op));
      continue;
    }
    try {
      einexpr::check(pattern, row.op);
      FAIL("check() accepted the pattern");
    } catch (const einexpr::PatternError& e) {
      CHECK(e.position() == row.position);
      CHECK_THAT(e.reason(), Catch::Contains(row.message));
      CHECK(e.pattern() == row.pattern);
    }
  }
}

TEST_CASE("check: indexed patterns (get_at, add_at, cross_entropy)", "[check]") {
  struct Indexed {
    const char* pattern;
    Op op;
    std::size_t position;
    const char* message;
  };
  for (const Indexed& row : std::vector<Indexed>{
           {"[v] d, b s -> b s d", Op::get_at, ok, ""},
           {"b [n] d, b k -> b k d", Op::get_at, ok, ""},
           {"... [v] d, ... -> ... d", Op::get_at, ok, ""},
           {"[v] d, b s -> b (s d)", Op::get_at, ok, ""},
           {"[v] d, b s, b s d -> [v] d", Op::add_at, ok, ""},
           {"b s [v], b s -> b s", Op::cross_entropy, ok, ""},
           {"b s [v], b s -> s b", Op::cross_entropy, ok, ""},
           {"[v] d -> d", Op::get_at, 6, "get_at takes 2 operands, not 1"},
           {"[v] d, b s -> b s d", Op::add_at, 11, "add_at takes 3 operands, not 2"},
           {"[v] [d], b -> b", Op::get_at, 4, "brackets exactly one axis, in its first operand"},
           {"v d, [b] -> b d", Op::get_at, 5, "brackets exactly one axis, in its first operand"},
           {"[v] d, b s, b s d -> v d", Op::add_at, 0, "the same in its output"},
           {"[v] d, b s, b s d -> [w] d", Op::add_at, 22, "add_at's output is its first operand"},
           {"[(v w)] d, b -> b d", Op::get_at, 1, "one named axis, not a composition"},
           {"[v] d, b v -> b d", Op::get_at, 9, "is the indexed axis: the indices select along it"},
           {"[v] d, b -> b v d", Op::get_at, 14, "get_at replaces it by the indices' axes"},
           {"[v] d, b -> b", Op::get_at, 12, "in the output lacks axis 'd'"},
           {"[v] d, b -> b d e", Op::get_at, 16, "axis 'e' in the output"},
           {"[v] d, b s, b d -> [v] d", Op::add_at, 12, "in input 3 lacks axis 's'"},
           {"b s [v], b -> b s", Op::cross_entropy, 9, "in input 2 lacks axis 's'"},
           {"b s [v], b s -> b", Op::cross_entropy, 16, "in the output lacks axis 's'"},
           {"[v] d, b b -> b b d", Op::get_at, 9, "axis 'b' appears twice in input 2"},
           {"[v] (d + e), b -> b d", Op::get_at, 4, "'(a + b)' concatenates"},
           {"[v] _d, b -> b _d", Op::get_at, 4, "underscore"},
       }) {
    CAPTURE(row.pattern, einexpr::name(row.op));
    if (row.position == ok) {
      CHECK_NOTHROW(einexpr::parse_pattern(row.op, row.pattern));
      continue;
    }
    try {
      einexpr::parse_pattern(row.op, row.pattern);
      FAIL("accepted");
    } catch (const einexpr::PatternError& e) {
      CHECK(e.position() == row.position);
      CHECK_THAT(e.reason(), Catch::Contains(row.message));
    }
  }
}

TEST_CASE("check: einsum takes at most max_einsum_operands operands", "[check][limits]") {
  // Found probing for hangs (issue 8): "a, a, ..., a -> a" with 1300 operands planned for
  // minutes (the contraction order is cubic in the count, backward_cost quartic).
  auto operands = [](std::size_t n) {
    std::string p = "a";
    for (std::size_t i = 1; i < n; ++i) p += ", a";
    return p + " -> a";
  };
  CHECK_NOTHROW(einexpr::check(einexpr::parse(operands(einexpr::max_einsum_operands)), Op::einsum));
  const std::string too_many = operands(einexpr::max_einsum_operands + 1);
  try {
    einexpr::check(einexpr::parse(too_many), Op::einsum);
    FAIL("accepted");
  } catch (const einexpr::PatternError& e) {
    CHECK(e.position() == 3 * einexpr::max_einsum_operands);  // the 65th operand
    CHECK(e.reason() == "einsum takes at most 64 operands, not 65: contract them in several einsums");
  }
  CHECK_THROWS_AS(einexpr::check(einexpr::parse(operands(1300)), Op::einsum), einexpr::PatternError);
}

TEST_CASE("check: a rule applies to some ops only", "[check]") {
  // The same pattern, judged by each op: which ops accept it.
  struct Judged {
    const char* pattern;
    bool rearrange, reduce, repeat, einsum, map;
  };
  const std::vector<Judged> table = {
      {"b h -> b", false, true, false, true, false},
      {"b -> b h", false, false, true, false, false},
      {"i i -> i", false, false, false, true, false},
      {"b 2 -> b", false, true, false, false, false},
      {"b -> b 2", false, false, true, false, false},
      {"b (h w) -> b h w", true, true, true, true, true},
      {"i j, j k -> i k", false, false, false, true, false},
      {"x, y -> x y", false, false, false, true, true},
  };
  const Op ops[] = {Op::rearrange, Op::reduce, Op::repeat, Op::einsum, Op::map};
  for (const auto& row : table) {
    const bool expected[] = {row.rearrange, row.reduce, row.repeat, row.einsum, row.map};
    const auto pattern = einexpr::parse(row.pattern);
    for (int i = 0; i < 5; ++i) {
      CAPTURE(row.pattern, einexpr::name(ops[i]));
      bool accepted = true;
      try {
        einexpr::check(pattern, ops[i]);
      } catch (const einexpr::PatternError&) {
        accepted = false;
      }
      CHECK(accepted == expected[i]);
    }
  }
}
