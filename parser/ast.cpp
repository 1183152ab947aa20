#include "einexpr/parser/ast.hpp"

namespace einexpr {

const char* name(Op op) noexcept {
  switch (op) {
    case Op::rearrange: return "rearrange";
    case Op::reduce: return "reduce";
    case Op::repeat: return "repeat";
    case Op::einsum: return "einsum";
    case Op::map: return "map";
    case Op::normalize: return "normalize";
    case Op::get_at: return "get_at";
    case Op::add_at: return "add_at";
    case Op::cross_entropy: return "cross_entropy";
    case Op::pack: return "pack";
    case Op::unpack: return "unpack";
    case Op::dropout: return "dropout";
  }
  return "?";
}

namespace ast {

Span span_of(const Term& term) noexcept {
  return std::visit([](const auto& t) { return t.span; }, term);
}
Span span_of(const Atom& atom) noexcept {
  return std::visit([](const auto& a) { return a.span; }, atom);
}

namespace {
std::string atom_text(const Atom& atom) {
  if (const auto* n = std::get_if<Named>(&atom)) return n->name;
  if (const auto* a = std::get_if<Anonymous>(&atom)) return std::to_string(a->length);
  return "...";
}
}  // namespace

std::string to_string(const Term& term) {
  if (const auto* n = std::get_if<Named>(&term)) return n->name;
  if (const auto* a = std::get_if<Anonymous>(&term)) return std::to_string(a->length);
  if (std::holds_alternative<Unit>(term)) return "()";
  if (std::holds_alternative<Ellipsis>(term)) return "...";
  const auto& g = std::get<Group>(term);
  std::string s = "(";
  for (std::size_t i = 0; i < g.atoms.size(); ++i) {
    if (i) s += g.concat ? " + " : " ";
    s += atom_text(g.atoms[i]);
  }
  return s + ")";
}

bool in_brackets(const Pattern& pattern, const Term& term) noexcept {
  const Span t = span_of(term);
  for (const Span& b : pattern.brackets)
    if (b.begin < t.begin && t.end < b.end) return true;
  return false;
}

namespace {
/// The bracket a term stands in, or brackets.size() for none.
std::size_t bracket_of(const Pattern& pattern, const Term& term) {
  const Span t = span_of(term);
  std::size_t b = 0;
  while (b < pattern.brackets.size() && !(pattern.brackets[b].begin < t.begin && t.end < pattern.brackets[b].end)) ++b;
  return b;
}

/// An operand with its bracketed terms in their brackets: "[v] d", "[a] [b]", "[a b] c".
std::string bracketed_text(const Pattern& pattern, const Operand& operand) {
  std::string s;
  const std::vector<Term>& terms = operand.terms;
  const std::size_t none = pattern.brackets.size();
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::size_t b = bracket_of(pattern, terms[i]);
    if (i) s += ' ';
    if (b != none && (i == 0 || bracket_of(pattern, terms[i - 1]) != b)) s += '[';
    s += to_string(terms[i]);
    if (b != none && (i + 1 == terms.size() || bracket_of(pattern, terms[i + 1]) != b)) s += ']';
  }
  return s;
}
}  // namespace

std::string to_string(const Operand& operand) {
  std::string s;
  for (std::size_t i = 0; i < operand.terms.size(); ++i) {
    if (i) s += ' ';
    s += to_string(operand.terms[i]);
  }
  return s;
}

std::string to_string(const Pattern& pattern) {
  std::string s;
  if (!pattern.brackets.empty() && pattern.arrow.end == 0) {  // parse_bracketed's "b h q [k]": no arrow
    const std::vector<Term>& terms = pattern.operands[0].terms;
    // The bracket a term stands in, or brackets.size() for none.
    const auto bracket_of = [&](std::size_t i) {
      const Span t = span_of(terms[i]);
      std::size_t b = 0;
      while (b < pattern.brackets.size() &&
             !(pattern.brackets[b].begin < t.begin && t.end < pattern.brackets[b].end))
        ++b;
      return b;
    };
    const std::size_t none = pattern.brackets.size();
    for (std::size_t i = 0; i < terms.size(); ++i) {
      const std::size_t b = bracket_of(i);
      if (i) s += ' ';
      if (b != none && (i == 0 || bracket_of(i - 1) != b)) s += '[';
      s += to_string(terms[i]);
      if (b != none && (i + 1 == terms.size() || bracket_of(i + 1) != b)) s += ']';
    }
    return s;
  }
  for (std::size_t i = 0; i < pattern.operands.size(); ++i) {
    if (i) s += ", ";
    s += bracketed_text(pattern, pattern.operands[i]);
  }
  s += " -> ";
  s += bracketed_text(pattern, pattern.output);
  for (const Operand& more : pattern.more_outputs) s += ", " + bracketed_text(pattern, more);
  if (s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace ast
}  // namespace einexpr
