#pragma once
// PEGTL actions for grammar.hpp: each fills a plain builder struct (as PEGTL's calculator
// example does), so that a successful parse leaves a complete ast::Pattern behind, with
// the exact byte Span of every node. Actions never see a failed alternative: the grammar
// raises instead of backtracking over a rule that has an action.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <tao/pegtl.hpp>

#include "einexpr/parser/ast.hpp"
#include "einexpr/runtime/error.hpp"
#include "grammar.hpp"
#include "messages.hpp"

namespace einexpr::grammar {

/// The bytes an action matched.
template <typename Input>
ast::Span span_of_input(const Input& in) {
  const std::size_t begin = in.iterator().byte;
  return {begin, begin + in.size()};
}

/// What the pattern actions fill, in the order the text is read.
struct PatternBuilder {
  std::string_view text;         // the pattern as shown in messages (same byte positions)
  std::vector<ast::Operand> operands;
  ast::Operand output;
  std::vector<ast::Operand> more_outputs;
  bool has_output = false;
  ast::Span arrow;
  std::vector<ast::Term> terms;  // the operand being read
  std::vector<ast::Atom> atoms;  // the group being read
  std::vector<ast::Span> pluses; // the group's "+" signs
  std::vector<bool> plus_after;  // per atom of the group: a "+" came before the next atom
  bool in_group = false;

  [[noreturn]] void fail(const std::string& reason, std::size_t at) const {
    throw PatternError(reason, std::string(text), at);
  }

  /// A concatenation "(a + b + c)": parts and "+" alternate, at least two parts, each a
  /// name or a number (no "...").
  void check_concat(ast::Span group) const {
    // Rebuild the order of atoms and pluses by position.
    std::vector<std::pair<std::size_t, bool>> items;  // position, is a "+"
    for (const ast::Atom& a : atoms) items.push_back({ast::span_of(a).begin, false});
    for (const ast::Span& p : pluses) items.push_back({p.begin, true});
    std::sort(items.begin(), items.end());
    for (std::size_t i = 0; i < items.size(); ++i) {
      const bool want_plus = i % 2 == 1;
      if (items[i].second && !want_plus)
        fail("'+' needs an axis on each side: a concatenation is '(a + b)'", items[i].first);
      if (!items[i].second && want_plus)
        fail("a composition inside a concatenation: each part of '(a + b)' is one axis; compose around it, "
             "or rearrange the part first", items[i].first);
    }
    if (items.back().second) fail("'+' needs an axis on each side: a concatenation is '(a + b)'", items.back().first);
    for (const ast::Atom& a : atoms)
      if (std::holds_alternative<ast::Ellipsis>(a))
        fail("'...' cannot be a part of a concatenation", ast::span_of(a).begin);
    (void)group;
  }

  /// A name, number or ellipsis goes into the open group, or else into the operand.
  void add(ast::Atom atom) {
    if (in_group) {
      atoms.push_back(std::move(atom));
      return;
    }
    std::visit([this](auto&& a) { terms.emplace_back(std::move(a)); }, std::move(atom));
  }
  /// The terms read so far, as an operand starting at `begin` (its span ends at its last term).
  ast::Operand take_operand(std::size_t begin) {
    const std::size_t end = terms.empty() ? begin : ast::span_of(terms.back()).end;
    ast::Operand operand{std::move(terms), {begin, end}};
    terms.clear();
    return operand;
  }
};

/// What the pack actions fill: the items in order, "*" as an item with an empty name.
struct PackBuilder {
  struct Item {
    std::string name;  // empty for "*"
    ast::Span span;
  };
  std::vector<Item> items;
};

template <typename Rule>
struct action : tao::pegtl::nothing<Rule> {};

template <>
struct action<name> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    b.add(ast::Named{in.string(), span_of_input(in)});
  }
  template <typename Input>
  static void apply(const Input& in, PackBuilder& b) {
    b.items.push_back({in.string(), span_of_input(in)});
  }
};

template <>
struct action<number> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    std::int64_t length = 0;
    const auto [end, ec] = std::from_chars(in.begin(), in.end(), length);
    if (ec == std::errc::result_out_of_range)
      throw tao::pegtl::parse_error(error_message<number_too_large>, in);
    if (length == 0) throw tao::pegtl::parse_error(error_message<zero_length>, in);
    b.add(ast::Anonymous{length, span_of_input(in)});
  }
};

template <>
struct action<ellipsis> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    b.add(ast::Ellipsis{span_of_input(in)});
  }
};

template <>
struct action<open_paren> {
  template <typename Input>
  static void apply(const Input& /*in*/, PatternBuilder& b) {
    b.in_group = true;
    b.atoms.clear();
    b.pluses.clear();
  }
};

template <>
struct action<plus> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    b.pluses.push_back(span_of_input(in));
  }
};

template <>
struct action<group> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    b.in_group = false;
    const ast::Span span = span_of_input(in);
    const bool concat = !b.pluses.empty();
    if (concat) b.check_concat(span);
    if (b.atoms.empty())
      b.terms.emplace_back(ast::Unit{span});
    else
      b.terms.emplace_back(ast::Group{std::move(b.atoms), span, concat});
    b.atoms.clear();
    b.pluses.clear();
  }
};

template <>
struct action<operand> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    b.operands.push_back(b.take_operand(span_of_input(in).begin));
  }
};

template <>
struct action<output> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    ast::Operand operand = b.take_operand(span_of_input(in).begin);
    if (b.has_output) {
      b.more_outputs.push_back(std::move(operand));
      return;
    }
    b.output = std::move(operand);
    b.has_output = true;
  }
};

template <>
struct action<arrow> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    b.arrow = span_of_input(in);
  }
};

template <>
struct action<pack_star> {
  template <typename Input>
  static void apply(const Input& in, PackBuilder& b) {
    b.items.push_back({std::string(), span_of_input(in)});
  }
};

}  // namespace einexpr::grammar
