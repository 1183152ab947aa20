// Fuzz target: the pattern parser. The input bytes are the pattern text, as a user types it.
// Invariants (a violation aborts):
//   - parse, parse_pack and check throw nothing but PatternError, whose position lies in
//     the text (or just past it) and whose message carries the caret line;
//   - a parsed pattern's spans lie inside the text, in order;
//   - to_string round-trips: parse(to_string(p)) equals p up to spans, to_string of that is
//     the same text again, and check() accepts or rejects both alike, with the same reason;
//   - a pack pattern has exactly one '*', and its names are unique identifiers;
//   - the same for indexed patterns (parse_indexed: get_at, add_at, cross_entropy), whose
//     brackets lie in the text and round-trip through to_string.
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "ast_strip.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/ops.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"
#include "fuzz_support.hpp"

using namespace einexpr;

namespace {

constexpr Op all_ops[] = {Op::rearrange, Op::reduce, Op::repeat, Op::einsum, Op::map};

void check_error(const PatternError& e, std::string_view text) {
  FUZZ_CHECK(e.position() <= text.size(), "position " + std::to_string(e.position()) + " of \"" +
                                              fuzz::escaped(text) + "\"");
  FUZZ_CHECK(e.pattern() == text, "the error quotes another pattern: \"" + fuzz::escaped(e.pattern()) + "\"");
  const std::string what = e.what();
  FUZZ_CHECK(what.find(caret_line(text, e.position())) != std::string::npos, "no caret line in: " + what);
  FUZZ_CHECK(!e.reason().empty(), "an empty reason for \"" + fuzz::escaped(text) + "\"");
}

void check_spans(const ast::Pattern& p, std::string_view text) {
  auto inside = [&](ast::Span s) { return s.begin <= s.end && s.end <= text.size(); };
  FUZZ_CHECK(inside(p.arrow) && text.substr(p.arrow.begin, 2) == "->", "the arrow's span is off");
  std::size_t last = 0;
  for (const ast::Operand& o : p.operands) {
    FUZZ_CHECK(inside(o.span) && o.span.begin >= last, "an operand's span is out of place");
    for (const ast::Term& t : o.terms) {
      const ast::Span s = ast::span_of(t);
      FUZZ_CHECK(inside(s) && s.begin >= o.span.begin && s.end <= o.span.end, "a term outside its operand");
    }
    last = o.span.end;
  }
  FUZZ_CHECK(p.arrow.begin >= last, "an operand after the arrow");
  for (const ast::Term& t : p.output.terms) FUZZ_CHECK(ast::span_of(t).begin >= p.arrow.end, "an output term before the arrow");
  std::size_t after = p.output.span.end;
  for (const ast::Operand& o : p.more_outputs) {
    FUZZ_CHECK(inside(o.span) && o.span.begin >= after, "a further output's span is out of place");
    after = o.span.end;
  }
  for (const ast::Span& b : p.brackets)
    FUZZ_CHECK(inside(b) && b.end - b.begin >= 2 && text[b.begin] == '[' && text[b.end - 1] == ']',
               "a bracket's span is not its '[...]'");
}

/// check(p, op) as a result: "" when accepted, else the reason.
std::string verdict(const ast::Pattern& p, Op op, std::string_view text) {
  try {
    check(p, op);
    return "";
  } catch (const PatternError& e) {
    check_error(e, text);
    return e.reason();
  }
}

void fuzz_pattern(std::string_view text) {
  ast::Pattern p;
  try {
    p = parse(text);
  } catch (const PatternError& e) {
    check_error(e, text);
    return;
  }
  FUZZ_CHECK(p.text == text, "the pattern's text differs from the input");
  check_spans(p, text);
  const std::string canonical = ast::to_string(p);
  std::string verdicts[5];
  for (int i = 0; i < 5; ++i) verdicts[i] = verdict(p, all_ops[i], text);
  if (canonical.size() > max_pattern_length) return;  // single spaces may lengthen a dense pattern
  ast::Pattern q;
  try {
    q = parse(canonical);
  } catch (const PatternError& e) {
    FUZZ_CHECK(false, "to_string gave \"" + fuzz::escaped(canonical) + "\", which does not parse: " + e.what());
  }
  FUZZ_CHECK(test::stripped(q) == test::stripped(p), "\"" + fuzz::escaped(text) + "\" and its to_string \"" +
                                             fuzz::escaped(canonical) + "\" parse differently");
  FUZZ_CHECK(ast::to_string(q) == canonical, "to_string is not idempotent on \"" + fuzz::escaped(canonical) + "\"");
  for (int i = 0; i < 5; ++i)
    FUZZ_CHECK(verdict(q, all_ops[i], canonical) == verdicts[i],
               std::string("check(") + name(all_ops[i]) + ") differs on \"" + fuzz::escaped(text) + "\" (\"" +
                   verdicts[i] + "\") and \"" + fuzz::escaped(canonical) + "\"");
}

constexpr Op indexed_ops[] = {Op::get_at, Op::add_at, Op::cross_entropy};

void fuzz_indexed(std::string_view text) {
  ast::Pattern p;
  try {
    p = parse_indexed(text);
  } catch (const PatternError& e) {
    check_error(e, text);
    return;
  }
  check_spans(p, text);
  std::string verdicts[3];
  for (int i = 0; i < 3; ++i) verdicts[i] = verdict(p, indexed_ops[i], text);
  const std::string canonical = ast::to_string(p);
  if (canonical.size() > max_pattern_length) return;
  ast::Pattern q;
  try {
    q = parse_indexed(canonical);
  } catch (const PatternError& e) {
    FUZZ_CHECK(false, "to_string gave \"" + fuzz::escaped(canonical) + "\", which does not parse as indexed: " + e.what());
  }
  FUZZ_CHECK(test::stripped(q) == test::stripped(p), "\"" + fuzz::escaped(text) + "\" and its to_string \"" +
                                                         fuzz::escaped(canonical) + "\" parse differently (indexed)");
  for (int i = 0; i < 3; ++i)
    FUZZ_CHECK(verdict(q, indexed_ops[i], canonical) == verdicts[i],
               std::string("check(") + name(indexed_ops[i]) + ") differs on \"" + fuzz::escaped(text) + "\" and \"" +
                   fuzz::escaped(canonical) + "\"");
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

void fuzz_pack(std::string_view text) {
  ast::PackPattern p;
  try {
    p = parse_pack(text);
  } catch (const PatternError& e) {
    check_error(e, text);
    return;
  }
  FUZZ_CHECK(p.star <= p.names.size(), "the star is past the names");
  for (std::size_t i = 0; i < p.names.size(); ++i) {
    FUZZ_CHECK(is_identifier(p.names[i]), "a pack name that is no identifier: " + fuzz::escaped(p.names[i]));
    for (std::size_t j = 0; j < i; ++j) FUZZ_CHECK(p.names[i] != p.names[j], "a pack name twice: " + p.names[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz_pattern(text);
  fuzz_pack(text);
  fuzz_indexed(text);
  return 0;
}
