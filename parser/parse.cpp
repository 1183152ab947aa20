// parse() and parse_pack(): run the PEGTL grammar (grammar.hpp) with its actions
// (actions.hpp) and messages (messages.hpp); turn PEGTL's parse_error into PatternError.
#include "einexpr/parser/parse.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

#include <tao/pegtl.hpp>

#include "actions.hpp"
#include "einexpr/runtime/error.hpp"
#include "grammar.hpp"
#include "messages.hpp"

namespace einexpr {
namespace {

namespace pegtl = tao::pegtl;

/// Long patterns are refused before parsing: the caret goes where the limit is crossed.
void check_length(std::string_view text) {
  if (text.size() > max_pattern_length)
    throw PatternError("pattern too long: " + std::to_string(text.size()) +
                           " bytes, at most " + std::to_string(max_pattern_length) +
                           " are accepted",
                       std::string(text), max_pattern_length);
}

/// Runs `Rule` over the whole text, filling `builder`; every failure raises parse_error,
/// turned into a PatternError that shows `shown` (the text as the user wrote it).
template <typename Rule, typename Builder>
void run_grammar(std::string_view text, Builder& builder, std::string_view shown) {
  pegtl::memory_input in(text.data(), text.size(), "pattern");
  try {
    const bool matched = pegtl::parse<Rule, grammar::action, grammar::control>(in, builder);
    EINEXPR_ASSERT(matched, "the pattern grammar failed without raising an error");
  } catch (const pegtl::parse_error& e) {
    const std::size_t at = e.positions().empty() ? 0 : e.positions().front().byte;
    throw PatternError(std::string(e.message()), std::string(shown), at);
  }
}

bool has_edge_underscore(const std::string& name) {
  return name.front() == '_' || name.back() == '_';
}

/// einops' rules for a pack pattern: one "*", no name twice, no name starting or
/// ending with '_'. Returns the index of the "*".
std::size_t check_pack(std::string_view text, const grammar::PackBuilder& b) {
  const std::string pattern(text);
  std::unordered_set<std::string> seen;
  std::size_t star = b.items.size();
  for (std::size_t i = 0; i < b.items.size(); ++i) {
    const auto& item = b.items[i];
    if (item.name.empty()) {
      if (star != b.items.size())
        throw PatternError("a second '*': a pack pattern has exactly one '*'", pattern,
                           item.span.begin);
      star = i;
      continue;
    }
    if (has_edge_underscore(item.name))
      throw PatternError("axis name should not start or end with underscore: '" + item.name +
                             "'",
                         pattern, item.span.begin);
    if (!seen.insert(item.name).second)
      throw PatternError("axis '" + item.name + "' appears twice in the pack pattern", pattern,
                         item.span.begin);
  }
  if (star == b.items.size())
    throw PatternError("no '*' in the pack pattern: one '*' marks where the packed axes go",
                       pattern, text.size());
  return star;
}

/// The text with its brackets as spaces (every other byte keeps its position) and the span of
/// each "[...]"; PatternError for a bracket that is unclosed, unopened, nested, empty or inside
/// a group, and (with `example`) for a text without brackets.
std::pair<std::string, std::vector<ast::Span>> blank_brackets(std::string_view text, const char* example) {
  const std::string shown(text);
  std::string blanked(text);
  std::vector<ast::Span> brackets;
  const std::size_t none = std::string::npos;
  std::size_t open = none;
  int parens = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == ')') parens = std::max(0, parens + (c == '(' ? 1 : -1));
    if (open != none && (c == ',' || (c == '-' && i + 1 < text.size() && text[i + 1] == '>')))
      throw PatternError(std::string("'") + (c == ',' ? "," : "->") +
                             "' inside brackets: brackets go around dims of one operand, as in \"[v] d, b s -> b s d\"",
                         shown, i);
    if (c != '[' && c != ']') continue;
    if (parens > 0)
      throw PatternError("a bracket inside parentheses: brackets go around whole dims, as in \"b [(h w)]\"", shown, i);
    if (c == '[' && open != none) throw PatternError("brackets do not nest: '[' inside '[...]'", shown, i);
    if (c == ']' && open == none) throw PatternError("']' without '['", shown, i);
    if (c == ']' && text.find_first_not_of(" \t\r\n", open + 1) == i)
      throw PatternError("empty brackets: name the axes inside them", shown, open);
    if (c == ']') brackets.push_back({open, i + 1});
    open = c == '[' ? i : none;
    blanked[i] = ' ';
  }
  if (open != none) throw PatternError("'[' is never closed", shown, open);
  if (brackets.empty() && example != nullptr) throw PatternError(example, shown, text.size());
  return {std::move(blanked), std::move(brackets)};
}

ast::Pattern make_pattern(std::string_view text, grammar::PatternBuilder& b, std::vector<ast::Span> brackets) {
  ast::Pattern p{std::string(text), std::move(b.operands), std::move(b.output), b.arrow, std::move(brackets), {}};
  p.more_outputs = std::move(b.more_outputs);
  return p;
}

}  // namespace

ast::Pattern parse(std::string_view text) {
  check_length(text);
  grammar::PatternBuilder b;
  b.text = text;
  run_grammar<grammar::pattern>(text, b, text);
  return make_pattern(text, b, {});
}

ast::Pattern parse_indexed(std::string_view text) {
  check_length(text);
  auto [blanked, brackets] =
      blank_brackets(text, "no brackets: put the indexed axis in brackets, as in \"[v] d, b s -> b s d\"");
  grammar::PatternBuilder b;
  b.text = text;
  run_grammar<grammar::pattern>(blanked, b, text);
  return make_pattern(text, b, std::move(brackets));
}

ast::Pattern parse_bracketed(std::string_view text) {
  check_length(text);
  const std::string shown(text);
  auto [blanked, brackets] =
      blank_brackets(text, "no brackets: name the axes to work along in brackets, as in \"b h q [k]\"");
  grammar::PatternBuilder b;
  b.text = text;
  run_grammar<grammar::dims>(blanked, b, shown);
  EINEXPR_ASSERT(b.operands.size() == 1, "parse_bracketed: the dims rule made " + std::to_string(b.operands.size()) +
                                             " operands");
  ast::Operand dims = b.operands.front();
  return ast::Pattern{shown, std::move(b.operands), std::move(dims), ast::Span{}, std::move(brackets), {}};
}

ast::PackPattern parse_pack(std::string_view text) {
  check_length(text);
  grammar::PackBuilder b;
  run_grammar<grammar::pack>(text, b, text);
  ast::PackPattern result{std::string(text), {}, check_pack(text, b)};
  for (auto& item : b.items)
    if (!item.name.empty()) result.names.push_back(std::move(item.name));
  return result;
}

ast::Pattern pack_as_pattern(const ast::PackPattern& pack) {
  ast::Operand operand;
  for (std::size_t i = 0; i <= pack.names.size(); ++i) {
    if (i == pack.star) operand.terms.emplace_back(ast::Ellipsis{});
    if (i < pack.names.size()) operand.terms.emplace_back(ast::Named{pack.names[i], {}});
  }
  ast::Pattern p;
  p.text = pack.text;
  p.operands.push_back(operand);
  p.output = operand;
  return p;
}

}  // namespace einexpr
