// parse(): valid patterns and their ASTs, spans, whitespace variants and round trips.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ast_strip.hpp"
#include "ast_text.hpp"
#include "einexpr/parser/ast.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"

using einexpr::parse;
using einexpr::test::describe;
using einexpr::test::describe_spans;
using einexpr::test::strip_spans;
namespace ast = einexpr::ast;

namespace {

struct Valid {
  const char* pattern;
  const char* ast;  // describe(): names, #length, () unit, (group), ..., [operand]
};

// clang-format off
const std::vector<Valid> valid_rows = {
    // einops' documented examples
    {"b h w c -> b (h w) c", "[b h w c] -> [b (h w) c]"},
    {"b (h1 h2) (w1 w2) c -> (b h1 w1) h2 w2 c", "[b (h1 h2) (w1 w2) c] -> [(b h1 w1) h2 w2 c]"},
    {"... h -> ...", "[... h] -> [...]"},
    {"b c (h h2) (w w2) -> b c h w", "[b c (h h2) (w w2)] -> [b c h w]"},
    {"c h w -> c w h", "[c h w] -> [c w h]"},
    {"h w -> c h w", "[h w] -> [c h w]"},
    {"batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2",
     "[batch seq1 hidden], [batch seq2 hidden] -> [batch seq1 seq2]"},
    {"i j, j k, k l -> i l", "[i j], [j k], [k l] -> [i l]"},
    {"i i -> i", "[i i] -> [i]"},
    {"b ... -> b (...)", "[b ...] -> [b (...)]"},
    {"b h w c -> h (b w) c", "[b h w c] -> [h (b w) c]"},
    {"b h w c -> b c h w", "[b h w c] -> [b c h w]"},
    {"b h w c -> (b h) w c", "[b h w c] -> [(b h) w c]"},
    {"b (h h1) (w w1) c -> b h w (c h1 w1)", "[b (h h1) (w w1) c] -> [b h w (c h1 w1)]"},
    {"(b1 b2) h w c -> (b1 h) (b2 w) c", "[(b1 b2) h w c] -> [(b1 h) (b2 w) c]"},
    {"b h w c -> h w", "[b h w c] -> [h w]"},
    {"b h w c -> b () () c", "[b h w c] -> [b () () c]"},
    {"b h w c -> b 1 1 c", "[b h w c] -> [b #1 #1 c]"},
    {"h w c -> h w c 2", "[h w c] -> [h w c #2]"},
    {"h w c -> h (repeat w) c", "[h w c] -> [h (repeat w) c]"},
    {"h w c -> (2 h) (2 w) c", "[h w c] -> [(#2 h) (#2 w) c]"},
    {"b c (h 2) (w 2) -> b c h w", "[b c (h #2) (w #2)] -> [b c h w]"},
    {"b ... c -> b c ...", "[b ... c] -> [b c ...]"},
    {"a b c d e -> (a b) c d e", "[a b c d e] -> [(a b) c d e]"},
    {"a b ... -> (a b) ...", "[a b ...] -> [(a b) ...]"},
    // DESIGN.md's examples
    {"b s (h d) -> b h s d", "[b s (h d)] -> [b h s d]"},
    {"b s h -> b h", "[b s h] -> [b h]"},
    {"b h -> b c h", "[b h] -> [b c h]"},
    {"b s1 h, b s2 h -> b s1 s2", "[b s1 h], [b s2 h] -> [b s1 s2]"},
    {"i j, j k -> i k", "[i j], [j k] -> [i k]"},
    {"b s h, h -> b s h", "[b s h], [h] -> [b s h]"},
    // empty operands: scalars
    {"i i ->", "[i i] -> []"},
    {"i ->", "[i] -> []"},
    {"->", "[] -> []"},
    {" -> ", "[] -> []"},
    {"-> x", "[] -> [x]"},
    {"a,b,c->", "[a], [b], [c] -> []"},
    {"i j k, i j k, i j k -> ", "[i j k], [i j k], [i j k] -> []"},
    // empty operands between commas: 0-d operands, as numpy's "i, -> i"
    {"a, , b -> a", "[a], [], [b] -> [a]"},
    {"a,,b -> a", "[a], [], [b] -> [a]"},
    {", a -> a", "[], [a] -> [a]"},
    {"a, -> a", "[a], [] -> [a]"},
    {", ->", "[], [] -> []"},
    // ellipses
    {"..., ... -> ...", "[...], [...] -> [...]"},
    {"a ... -> ...", "[a ...] -> [...]"},
    {"(...) -> ...", "[(...)] -> [...]"},
    {"(a ... b) -> a ... b", "[(a ... b)] -> [a ... b]"},
    {"...->...", "[...] -> [...]"},
    {"(...)(a)->...", "[(...) (a)] -> [...]"},
    // names
    {"x -> x", "[x] -> [x]"},
    {"_x -> x", "[_x] -> [x]"},
    {"hidden_dim -> hidden_dim", "[hidden_dim] -> [hidden_dim]"},
    {"a1 b2 -> b2 a1", "[a1 b2] -> [b2 a1]"},
    {"A B -> B A", "[A B] -> [B A]"},
    {"very_long_axis_name_1 -> very_long_axis_name_1",
     "[very_long_axis_name_1] -> [very_long_axis_name_1]"},
    // numbers, units and groups
    {"9223372036854775807 -> a", "[#9223372036854775807] -> [a]"},
    {"007 -> a", "[#7] -> [a]"},
    {"() -> ()", "[()] -> [()]"},
    {"( ) -> (\t)", "[()] -> [()]"},
    {"(a) -> a", "[(a)] -> [a]"},
    {"(1 a) -> a", "[(#1 a)] -> [a]"},
    {"b 1 h -> b h", "[b #1 h] -> [b h]"},
    {"a (b c) () 3 ... -> a b c", "[a (b c) () #3 ...] -> [a b c]"},
    {"b h w c -> b (h w c)", "[b h w c] -> [b (h w c)]"},
    {"x, y, z, w -> x y z w", "[x], [y], [z], [w] -> [x y z w]"},
    {"a b, b -> a", "[a b], [b] -> [a]"},
    // whitespace is free between tokens, and optional next to ( ) , ->
    {"a(b c)d -> a b c d", "[a (b c) d] -> [a b c d]"},
    {"a->b", "[a] -> [b]"},
    {"a,b->a b", "[a], [b] -> [a b]"},
    {"\ta\tb\t->\tb\ta\t", "[a b] -> [b a]"},
    {"a\nb\r\n-> b a", "[a b] -> [b a]"},
    {"  a   b   ->   a   b  ", "[a b] -> [a b]"},
    {"( a  b ) -> a b", "[(a b)] -> [a b]"},
    {"(a b)(c d) -> (a c)(b d)", "[(a b) (c d)] -> [(a c) (b d)]"},
    {"i j ,j k-> i k", "[i j], [j k] -> [i k]"},
};
// clang-format on

std::string text_at(const std::string& text, ast::Span span) {
  return text.substr(span.begin, span.end - span.begin);
}

/// A name's span holds the name, a number's its digits, an ellipsis's "...".
void check_atom_text(const std::string& text, const ast::Atom& atom) {
  const std::string at = text_at(text, ast::span_of(atom));
  if (const auto* n = std::get_if<ast::Named>(&atom)) CHECK(at == n->name);
  if (const auto* a = std::get_if<ast::Anonymous>(&atom)) CHECK(std::stoll(at) == a->length);
  if (std::holds_alternative<ast::Ellipsis>(atom)) CHECK(at == "...");
}

/// Every node's span covers exactly the text that node was read from.
void check_spans_cover_text(const ast::Pattern& p) {
  auto check_operand = [&](const ast::Operand& o) {
    for (const auto& term : o.terms) {
      const std::string at = text_at(p.text, ast::span_of(term));
      if (const auto* g = std::get_if<ast::Group>(&term)) {
        for (const auto& atom : g->atoms) check_atom_text(p.text, atom);
      }
      if (std::holds_alternative<ast::Group>(term) || std::holds_alternative<ast::Unit>(term)) {
        CHECK(at.front() == '(');
        CHECK(at.back() == ')');
      } else {
        std::visit([&](const auto& t) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(t)>, ast::Group> &&
                        !std::is_same_v<std::decay_t<decltype(t)>, ast::Unit>)
            check_atom_text(p.text, ast::Atom{t});
        }, term);
      }
    }
    const std::size_t begin = o.terms.empty() ? o.span.end : ast::span_of(o.terms.front()).begin;
    const std::size_t end = o.terms.empty() ? o.span.begin : ast::span_of(o.terms.back()).end;
    CHECK(o.span.begin == begin);
    CHECK(o.span.end == end);
  };
  for (const auto& o : p.operands) check_operand(o);
  check_operand(p.output);
  CHECK(text_at(p.text, p.arrow) == "->");
}

}  // namespace

TEST_CASE("parse: valid patterns give the expected AST", "[parse]") {
  REQUIRE(valid_rows.size() >= 60);
  for (const auto& row : valid_rows) {
    CAPTURE(row.pattern);
    const ast::Pattern p = parse(row.pattern);
    CHECK(describe(p) == row.ast);
    CHECK(p.text == row.pattern);
    check_spans_cover_text(p);
  }
}

TEST_CASE("parse: to_string then parse gives the same AST up to spans", "[parse]") {
  for (const auto& row : valid_rows) {
    CAPTURE(row.pattern);
    const ast::Pattern p = parse(row.pattern);
    const std::string canonical = ast::to_string(p);
    CAPTURE(canonical);
    const ast::Pattern again = parse(canonical);
    CHECK(strip_spans(again) == strip_spans(p));
    CHECK(ast::to_string(again) == canonical);
  }
}

TEST_CASE("parse: exact spans of every node", "[parse][spans]") {
  struct Row {
    const char* pattern;
    const char* spans;
  };
  // clang-format off
  const std::vector<Row> rows = {
      {"b (h w) -> b", "[b@0:1 (h@3:4 w@5:6)@2:7]@0:7 ->@8:10 [b@11:12]@11:12"},
      {"i j, j k -> i k", "[i@0:1 j@2:3]@0:3, [j@5:6 k@7:8]@5:8 ->@9:11 [i@12:13 k@14:15]@12:15"},
      {"  a  ->  ", "[a@2:3]@2:3 ->@5:7 []@9:9"},
      {"-> x", "[]@0:0 ->@0:2 [x@3:4]@3:4"},
      {"... () 12 -> ...", "[...@0:3 ()@4:6 #12@7:9]@0:9 ->@10:12 [...@13:16]@13:16"},
      {"( ) -> (a ...)", "[()@0:3]@0:3 ->@4:6 [(a@8:9 ...@10:13)@7:14]@7:14"},
      {"a,b->a b", "[a@0:1]@0:1, [b@2:3]@2:3 ->@3:5 [a@5:6 b@7:8]@5:8"},
      {"\ta\n->\tb", "[a@1:2]@1:2 ->@3:5 [b@6:7]@6:7"},
      {"hidden_dim, x -> x", "[hidden_dim@0:10]@0:10, [x@12:13]@12:13 ->@14:16 [x@17:18]@17:18"},
      {"a(b c)d->", "[a@0:1 (b@2:3 c@4:5)@1:6 d@6:7]@0:7 ->@7:9 []@9:9"},
  };
  // clang-format on
  for (const auto& row : rows) {
    CAPTURE(row.pattern);
    CHECK(describe_spans(parse(row.pattern)) == row.spans);
  }
}

TEST_CASE("parse: whitespace variants give the same AST", "[parse]") {
  struct Row {
    const char* a;
    const char* b;
  };
  const std::vector<Row> rows = {
      {"b h w c -> b (h w) c", "b h w c->b(h w)c"},
      {"b h w c -> b (h w) c", "\tb\th\tw\tc\t->\tb\t(\th\tw\t)\tc\t"},
      {"b h w c -> b (h w) c", "\n b \r\n h  w   c ->\n\nb ( h w ) c\n"},
      {"i j, j k -> i k", "i j,j k->i k"},
      {"i j, j k -> i k", "  i  j  ,  j  k  ->  i  k  "},
      {"() -> ()", "(\n)->(  )"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.a, row.b);
    CHECK(strip_spans(parse(row.a)) == strip_spans(parse(row.b)));
  }
}

TEST_CASE("parse: to_string is single-spaced canonical text", "[parse]") {
  struct Row {
    const char* pattern;
    const char* canonical;
  };
  const std::vector<Row> rows = {
      {"b h w c->b(h w)c", "b h w c -> b (h w) c"},
      {"  i j ,j k-> i k ", "i j, j k -> i k"},
      {"007 ( ) (...) -> ", "7 () (...) ->"},
      {"->", " ->"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.pattern);
    CHECK(ast::to_string(parse(row.pattern)) == row.canonical);
  }
}

TEST_CASE("parse: the length limit is max_pattern_length bytes", "[parse]") {
  // A valid pattern of exactly the limit parses; one byte more is refused at the limit.
  std::string at_limit = "a ->";
  at_limit.append(einexpr::max_pattern_length - at_limit.size() - 1, ' ');
  at_limit += "a";
  REQUIRE(at_limit.size() == einexpr::max_pattern_length);
  CHECK(describe(parse(at_limit)) == "[a] -> [a]");

  const std::string over = at_limit + " ";
  try {
    parse(over);
    FAIL("a pattern over the limit was accepted");
  } catch (const einexpr::PatternError& e) {
    CHECK(e.position() == einexpr::max_pattern_length);
    CHECK_THAT(e.what(), Catch::Contains("pattern too long: 4097 bytes, at most 4096"));
  }
}

TEST_CASE("parse: many axes up to the length limit", "[parse]") {
  // 300 distinct names on each side: no recursion, linear work.
  std::string left;
  for (int i = 0; i < 300; ++i) left += "a" + std::to_string(i) + " ";
  const ast::Pattern p = parse(left + "-> (" + left + ")");
  REQUIRE(p.operands.size() == 1);
  CHECK(p.operands[0].terms.size() == 300);
  REQUIRE(p.output.terms.size() == 1);
  CHECK(std::get<ast::Group>(p.output.terms[0]).atoms.size() == 300);
}

TEST_CASE("parse_bracketed: the dims as operand and output, each bracket's span", "[parse][brackets]") {
  struct Row {
    const char* pattern;
    const char* ast;
    std::vector<ast::Span> brackets;
  };
  const Row rows[] = {
      {"b h q [k]", "[b h q k] -> [b h q k]", {{6, 9}}},
      {"[b] h [w]", "[b h w] -> [b h w]", {{0, 3}, {6, 9}}},
      {"b [h w] c", "[b h w c] -> [b h w c]", {{2, 7}}},
      {"... [d]", "[... d] -> [... d]", {{4, 7}}},
      {"b [(h w)] 1", "[b (h w) #1] -> [b (h w) #1]", {{2, 9}}},
      {"b[k]", "[b k] -> [b k]", {{1, 4}}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.pattern);
    const ast::Pattern p = einexpr::parse_bracketed(row.pattern);
    CHECK(p.text == row.pattern);
    CHECK(describe(p) == row.ast);
    CHECK(p.brackets == row.brackets);
  }
}

TEST_CASE("to_string of a bracketed pattern: the dims, single-spaced, with their brackets", "[parse][brackets]") {
  const std::pair<const char*, const char*> rows[] = {
      {"b h q [k]", "b h q [k]"},       {" b  h\tq [ k ] ", "b h q [k]"},   {"[b] h [w]", "[b] h [w]"},
      {"b [h  w] c", "b [h w] c"},      {"... [d]", "... [d]"},              {"b [(h w)] 1", "b [(h w)] 1"},
      {"b[k]", "b [k]"},                {"[b][h] w", "[b] [h] w"},          {"[a b c]", "[a b c]"},
  };
  for (const auto& [pattern, canonical] : rows) {
    CAPTURE(pattern);
    CHECK(ast::to_string(einexpr::parse_bracketed(pattern)) == canonical);
  }
}

TEST_CASE("parse_bracketed on random text: a pattern or a PatternError inside the text", "[parse][brackets]") {
  const std::string alphabet = "ab_1 [](),->.#\t";
  std::uint64_t state = 12345;
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    const int length = static_cast<int>(state % 13);
    for (int k = 0; k < length; ++k) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      text += alphabet[(state >> 33) % alphabet.size()];
    }
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    CAPTURE(text);
    try {
      const ast::Pattern p = einexpr::parse_bracketed(text);
      CHECK(p.operands.size() == 1);
      CHECK_FALSE(p.brackets.empty());
      // to_string keeps the brackets: it parses back to the same dims and brackets
      const ast::Pattern q = einexpr::parse_bracketed(ast::to_string(p));
      CHECK(einexpr::test::stripped(q) == einexpr::test::stripped(p));
      CHECK(ast::to_string(q) == ast::to_string(p));
      for (const ast::Span& b : p.brackets) CHECK((b.begin < b.end && b.end <= text.size() && text[b.begin] == '['));
    } catch (const einexpr::PatternError& e) {
      CHECK(e.position() <= text.size());
    }
  }
}
