#pragma once
// PEGTL actions for grammar.hpp: each fills a plain builder struct (as PEGTL's calculator
// example does), so that a successful parse leaves a complete ast::Pattern behind, with
// the exact byte Span of every node. Actions never see a failed alternative: the grammar
// raises instead of backtracking over a rule that has an action.
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <tao/pegtl.hpp>

#include "einexpr/parser/ast.hpp"
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
  std::vector<ast::Operand> operands;
  ast::Operand output;
  ast::Span arrow;
  std::vector<ast::Term> terms;  // the operand being read
  std::vector<ast::Atom> atoms;  // the group being read
  bool in_group = false;

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
  }
};

template <>
struct action<group> {
  template <typename Input>
  static void apply(const Input& in, PatternBuilder& b) {
    b.in_group = false;
    if (b.atoms.empty())
      b.terms.emplace_back(ast::Unit{span_of_input(in)});
    else
      b.terms.emplace_back(ast::Group{std::move(b.atoms), span_of_input(in)});
    b.atoms.clear();
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
    b.output = b.take_operand(span_of_input(in).begin);
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
