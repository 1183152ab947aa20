// parse() and parse_pack(): run the PEGTL grammar (grammar.hpp) with its actions
// (actions.hpp) and messages (messages.hpp); turn PEGTL's parse_error into PatternError.
#include "einexpr/parser/parse.hpp"

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

/// Runs `Rule` over the whole text, filling `builder`; every failure raises parse_error.
template <typename Rule, typename Builder>
void run_grammar(std::string_view text, Builder& builder) {
  pegtl::memory_input in(text.data(), text.size(), "pattern");
  try {
    const bool matched = pegtl::parse<Rule, grammar::action, grammar::control>(in, builder);
    EINEXPR_ASSERT(matched, "the pattern grammar failed without raising an error");
  } catch (const pegtl::parse_error& e) {
    const std::size_t at = e.positions().empty() ? 0 : e.positions().front().byte;
    throw PatternError(std::string(e.message()), std::string(text), at);
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

}  // namespace

ast::Pattern parse(std::string_view text) {
  check_length(text);
  grammar::PatternBuilder b;
  run_grammar<grammar::pattern>(text, b);
  return ast::Pattern{std::string(text), std::move(b.operands), std::move(b.output), b.arrow};
}

ast::PackPattern parse_pack(std::string_view text) {
  check_length(text);
  grammar::PackBuilder b;
  run_grammar<grammar::pack>(text, b);
  ast::PackPattern result{std::string(text), {}, check_pack(text, b)};
  for (auto& item : b.items)
    if (!item.name.empty()) result.names.push_back(std::move(item.name));
  return result;
}

}  // namespace einexpr
