#pragma once
// Test helpers that print an ast::Pattern with every node's kind made explicit, so a
// table row can state the whole expected AST in one string:
//   describe("b (h w) 3 () ... -> b")  ==  "[b (h w) #3 () ...] -> [b]"
// names as written, anonymous axes as #length, "()" a unit, "(...)" a group, "..." an
// ellipsis, each operand in [ ]. describe_spans adds "@begin:end" to every node.
#include <string>
#include <string_view>
#include <variant>

#include "einexpr/parser/ast.hpp"

namespace einexpr::test {

inline std::string span_text(ast::Span s) {
  return "@" + std::to_string(s.begin) + ":" + std::to_string(s.end);
}

inline std::string node_text(const ast::Atom& atom, bool spans) {
  std::string s;
  if (const auto* n = std::get_if<ast::Named>(&atom)) s = n->name;
  if (const auto* a = std::get_if<ast::Anonymous>(&atom)) s = "#" + std::to_string(a->length);
  if (std::holds_alternative<ast::Ellipsis>(atom)) s = "...";
  return spans ? s + span_text(ast::span_of(atom)) : s;
}

inline std::string node_text(const ast::Term& term, bool spans) {
  std::string s;
  if (const auto* g = std::get_if<ast::Group>(&term)) {
    s = "(";
    for (std::size_t i = 0; i < g->atoms.size(); ++i)
      s += (i ? " " : "") + node_text(g->atoms[i], spans);
    s += ")";
  } else if (std::holds_alternative<ast::Unit>(term)) {
    s = "()";
  } else {
    std::visit([&](const auto& t) {
      if constexpr (!std::is_same_v<std::decay_t<decltype(t)>, ast::Group> &&
                    !std::is_same_v<std::decay_t<decltype(t)>, ast::Unit>)
        s = node_text(ast::Atom{t}, false);
    }, term);
  }
  return spans ? s + span_text(ast::span_of(term)) : s;
}

inline std::string node_text(const ast::Operand& operand, bool spans) {
  std::string s = "[";
  for (std::size_t i = 0; i < operand.terms.size(); ++i)
    s += (i ? " " : "") + node_text(operand.terms[i], spans);
  s += "]";
  return spans ? s + span_text(operand.span) : s;
}

inline std::string pattern_text(const ast::Pattern& p, bool spans) {
  std::string s;
  for (std::size_t i = 0; i < p.operands.size(); ++i)
    s += (i ? ", " : "") + node_text(p.operands[i], spans);
  s += spans ? " ->" + span_text(p.arrow) + " " : " -> ";
  return s + node_text(p.output, spans);
}

/// "[b (h w) #3 () ...] -> [b]"
inline std::string describe(const ast::Pattern& p) { return pattern_text(p, false); }
/// "[b@0:1 (h@3:4 w@5:6)@2:7]@0:7 ->@8:10 [b@11:12]@11:12"
inline std::string describe_spans(const ast::Pattern& p) { return pattern_text(p, true); }

/// The pattern without its text and with every span zeroed: equal ASTs compare equal.
inline ast::Pattern strip_spans(ast::Pattern p) {
  auto strip_atom = [](ast::Atom& a) { std::visit([](auto& x) { x.span = {}; }, a); };
  auto strip_operand = [&](ast::Operand& o) {
    o.span = {};
    for (auto& t : o.terms) {
      std::visit([](auto& x) { x.span = {}; }, t);
      if (auto* g = std::get_if<ast::Group>(&t))
        for (auto& a : g->atoms) strip_atom(a);
    }
  };
  p.text.clear();
  p.arrow = {};
  for (auto& o : p.operands) strip_operand(o);
  strip_operand(p.output);
  return p;
}

}  // namespace einexpr::test
