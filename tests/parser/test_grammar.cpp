// The private PEGTL grammar: analyze() finds no rule that can loop forever, and every
// rule, run alone, matches, fails or raises as its comment says (PEGTL's verify_rule style:
// input, outcome, bytes consumed or the error's position).
#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze.hpp>

#include "grammar.hpp"
#include "messages.hpp"

namespace pegtl = tao::pegtl;
namespace g = einexpr::grammar;

namespace {

enum class Kind { match, no_match, raise };

struct Outcome {
  Kind kind;
  std::size_t at;  // bytes consumed for a match, the error's position for a raise
};

template <typename Rule>
Outcome run_rule(std::string_view text) {
  pegtl::memory_input in(text.data(), text.size(), "rule");
  try {
    if (pegtl::parse<Rule, pegtl::nothing, g::control>(in))
      return {Kind::match, static_cast<std::size_t>(in.current() - text.data())};
    return {Kind::no_match, 0};
  } catch (const pegtl::parse_error& e) {
    return {Kind::raise, e.positions().front().byte};
  }
}

struct Row {
  const char* rule;
  Outcome (*run)(std::string_view);
  std::string_view input;
  Kind kind;
  std::size_t at = 0;
};

constexpr Kind match = Kind::match;
constexpr Kind no_match = Kind::no_match;
constexpr Kind raise = Kind::raise;

#define RULE(r) #r, &run_rule<g::r>

// clang-format off
const std::vector<Row> rows = {
    {RULE(blank), " a", match, 1},                {RULE(blank), "a", no_match},
    {RULE(ws), "  \t\r\n a", match, 6},           {RULE(ws), "a", match, 0},
    {RULE(arrow), "->x", match, 2},               {RULE(arrow), "- >", no_match},
    {RULE(comma), ",", match, 1},                 {RULE(comma), ";", no_match},
    {RULE(open_paren), "(", match, 1},            {RULE(close_paren), ")", match, 1},
    {RULE(ellipsis), "...", match, 3},            {RULE(ellipsis), "....", no_match},
    {RULE(ellipsis), "..", no_match},
    {RULE(number), "123 ", match, 3},             {RULE(number), "a1", no_match},
    {RULE(name), "seq_1 x", match, 5},            {RULE(name), "1a", no_match},
    {RULE(name), "_", match, 1},
    {RULE(separated), " ", match, 0},             {RULE(separated), "(", match, 0},
    {RULE(separated), "a", no_match},             {RULE(separated), ".", no_match},
    {RULE(ellipsis_token), "...)", match, 3},     {RULE(ellipsis_token), "...a", raise, 3},
    {RULE(number_token), "12)", match, 2},        {RULE(number_token), "12.", raise, 2},
    {RULE(name_token), "ab,", match, 2},          {RULE(name_token), "ab.", raise, 2},
    {RULE(bad_dots), ".", match, 1},
    {RULE(digit_name), "2b", match, 2},           {RULE(digit_name), "22", no_match},
    {RULE(unclosed_paren), "(a b", match, 4},     {RULE(unclosed_paren), "(a b)", no_match},
    {RULE(unclosed_paren), "(a -> b)", match, 3},
    {RULE(nested_paren), "(", match, 1},          {RULE(stray_paren), ")", match, 1},
    {RULE(comma_in_group), ",", match, 1},
    {RULE(lone_dash), "- ", match, 1},            {RULE(lone_dash), "->", no_match},
    {RULE(non_ascii), "\xc3", match, 1},          {RULE(non_ascii), "\x01", match, 1},
    {RULE(non_ascii), "a", no_match},
    {RULE(unexpected_char), "#", match, 1},       {RULE(unexpected_char), ",", no_match},
    {RULE(unexpected_char), ")", no_match},
    {RULE(second_arrow), "->", match, 2},         {RULE(output_comma), ",", match, 1},
    {RULE(atom), "h d)", match, 1},               {RULE(atom), ")", no_match},
    {RULE(atom), "(", raise, 0},                  {RULE(atom), ",", raise, 0},
    {RULE(group), "(h d) x", match, 5},           {RULE(group), "()", match, 2},
    {RULE(group), "( )", match, 3},               {RULE(group), "(a (b))", raise, 3},
    {RULE(term), "(h d)", match, 5},              {RULE(term), "...", match, 3},
    {RULE(term), "-> a", no_match},               {RULE(term), ", a", no_match},
    {RULE(term), ")", raise, 0},                  {RULE(term), "(a", raise, 0},
    {RULE(operand), "a (b c) 1 ... -> x", match, 14},
    {RULE(operand), "", match, 0},
    {RULE(output), "a b -> c", match, 4},
    {RULE(next_operand), ", b c ->", match, 6},   {RULE(next_operand), ", ->", match, 2},
    {RULE(inputs), "a, b -> c", match, 5},        {RULE(inputs), ", a", match, 3},
    {RULE(output_end), "", match, 0},             {RULE(output_end), "->", raise, 0},
    {RULE(output_end), ",", no_match},            {RULE(output_end), "a", no_match},
    {RULE(stray_plus), "+", match, 1},            {RULE(plus), "+", match, 1},
    {RULE(pattern), "a -> b", match, 6},          {RULE(pattern), "a b", raise, 3},
    {RULE(pack_star), "*", match, 1},
    {RULE(pack_separated), " ", match, 0},        {RULE(pack_separated), "*", no_match},
    {RULE(pack_paren), ")", match, 1},            {RULE(pack_ellipsis), ".", match, 1},
    {RULE(pack_number), "1", match, 1},           {RULE(pack_unexpected), "#", match, 1},
    {RULE(pack_item), "* k", match, 1},           {RULE(pack_item), "(", raise, 0},
    {RULE(pack_end), "", match, 0},
    {RULE(pack), "i j * k", match, 7},            {RULE(pack), "i j*", raise, 3},
    {RULE(dims_arrow), "->", match, 2},           {RULE(dims_comma), ",", match, 1},
    {RULE(dims_end), "", match, 0},               {RULE(dims_end), "-> b", raise, 0},
    {RULE(dims_end), ", b", raise, 0},
    {RULE(dims), " b h  k ", match, 8},           {RULE(dims), "b (h d) ...", match, 11},
    {RULE(dims), "b -> b", raise, 2},             {RULE(dims), "b, k", raise, 1},
};
// clang-format on

#undef RULE

}  // namespace

TEST_CASE("grammar: analyze finds no rule that can loop forever", "[grammar]") {
  CHECK(pegtl::analyze<g::pattern>(1) == 0);
  CHECK(pegtl::analyze<g::pack>(1) == 0);
  CHECK(pegtl::analyze<g::dims>(1) == 0);
}

TEST_CASE("grammar: each rule alone", "[grammar]") {
  for (const auto& row : rows) {
    CAPTURE(row.rule, row.input);
    const Outcome out = row.run(row.input);
    CHECK(out.kind == row.kind);
    CHECK(out.at == row.at);
  }
}

TEST_CASE("grammar: the byte at the fault is named in the message", "[grammar]") {
  struct Named {
    std::string_view input;
    const char* message;
  };
  const std::vector<Named> table = {
      {"#", "unexpected character '#': axis names are identifiers [A-Za-z_][A-Za-z0-9_]*"},
      {"\x7f", "unexpected byte 0x7F: axis names are ASCII identifiers [A-Za-z_][A-Za-z0-9_]*"},
      {"\xff", "unexpected byte 0xFF: axis names are ASCII identifiers [A-Za-z_][A-Za-z0-9_]*"},
  };
  for (const auto& row : table) {
    CAPTURE(row.input);
    pegtl::memory_input in(row.input.data(), row.input.size(), "rule");
    try {
      (void)pegtl::parse<g::term, pegtl::nothing, g::control>(in);
      FAIL("no error raised");
    } catch (const pegtl::parse_error& e) {
      CHECK(std::string(e.message()) == row.message);
    }
  }
}
