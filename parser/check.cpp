// check(): the semantic rules of each op, in one place (the list is in check.hpp).
// Every rule throws PatternError with the caret under the offending term; messages are
// einops' own words where einops has them.
#include "einexpr/parser/check.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "einexpr/runtime/error.hpp"

namespace einexpr {
namespace {

using ast::Span;

/// One axis of an operand, taken out of its group, in text order.
struct Axis {
  enum class Kind : unsigned char { name, anonymous, unit, ellipsis };
  Kind kind = Kind::name;
  std::string_view name;     // for Kind::name
  std::int64_t length = 1;   // for Kind::anonymous
  Span span;
  bool in_group = false;
  std::string label() const {
    if (kind == Kind::anonymous) return std::to_string(length);
    if (kind == Kind::unit) return "()";
    return kind == Kind::ellipsis ? "..." : std::string(name);
  }
  /// Names and "..." must match up across the arrow; 1 and () need not.
  bool is_identifier() const { return kind == Kind::name || kind == Kind::ellipsis; }
};
using Axes = std::vector<Axis>;

Axis axis_of(const ast::Named& n, bool in_group) {
  return Axis{Axis::Kind::name, n.name, 1, n.span, in_group};
}
Axis axis_of(const ast::Anonymous& x, bool in_group) {
  return Axis{Axis::Kind::anonymous, {}, x.length, x.span, in_group};
}
Axis axis_of(const ast::Ellipsis& e, bool in_group) {
  return Axis{Axis::Kind::ellipsis, {}, 1, e.span, in_group};
}
Axis axis_of(const ast::Unit& u, bool in_group) {
  return Axis{Axis::Kind::unit, {}, 1, u.span, in_group};
}

/// The axes of an operand in text order, the atoms of a group in place of the group.
Axes flatten(const ast::Operand& operand) {
  Axes axes;
  for (const auto& term : operand.terms) {
    if (const auto* g = std::get_if<ast::Group>(&term)) {
      for (const auto& atom : g->atoms)
        std::visit([&](const auto& a) { axes.push_back(axis_of(a, true)); }, atom);
      continue;
    }
    std::visit([&](const auto& t) {
      if constexpr (!std::is_same_v<std::decay_t<decltype(t)>, ast::Group>)
        axes.push_back(axis_of(t, false));
    }, term);
  }
  return axes;
}

bool contains(const Axes& axes, const Axis& wanted) {
  for (const auto& a : axes)
    if (a.is_identifier() && a.kind == wanted.kind && a.name == wanted.name) return true;
  return false;
}

std::string quoted(const Axis& a) { return "'" + a.label() + "'"; }

/// The pattern with its axes flattened, and the rules as member functions.
class Checker {
 public:
  Checker(const ast::Pattern& p, Op op) : p_(p), op_(op) {
    for (const auto& operand : p.operands) inputs_.push_back(flatten(operand));
    output_ = flatten(p.output);
  }

  void run() const {
    operand_count();
    names();
    groups();
    ellipses();
    duplicates();
    anonymous();
    sides();
  }

 private:
  [[noreturn]] void fail(Span at, const std::string& reason) const {
    throw PatternError(reason, p_.text, at.begin);
  }
  bool is_einsum_like() const { return op_ == Op::einsum || op_ == Op::map; }
  bool any_input_has(const Axis& a) const {
    for (const auto& in : inputs_)
      if (contains(in, a)) return true;
    return false;
  }
  /// "the left side" for rearrange / reduce / repeat, "input 2" for einsum and map.
  std::string side_name(std::size_t input) const {
    if (!is_einsum_like()) return "on the left side";
    return "in input " + std::to_string(input + 1);
  }
  std::string output_name() const {
    return is_einsum_like() ? "in the output" : "on the right side";
  }

  void operand_count() const;
  void names() const;
  void groups() const;
  void ellipses() const;
  void duplicates() const;
  void anonymous() const;
  void sides() const;
  void sides_rearrange() const;
  void sides_einsum() const;

  const ast::Pattern& p_;
  Op op_;
  std::vector<Axes> inputs_;
  Axes output_;
};

// rearrange / reduce / repeat take one operand; map one or two; einsum one or more.
void Checker::operand_count() const {
  const std::size_t n = p_.operands.size();
  if (n == 0) fail(p_.arrow, std::string(name(op_)) + " needs an operand left of '->'");
  if (op_ == Op::einsum && n > max_einsum_operands)
    fail(p_.operands[max_einsum_operands].span,
         "einsum takes at most " + std::to_string(max_einsum_operands) + " operands, not " + std::to_string(n) +
             ": contract them in several einsums");
  const std::size_t most = op_ == Op::einsum ? n : op_ == Op::map ? 2 : 1;
  if (n > most)
    fail(p_.operands[most].span,
         std::string(name(op_)) + " takes " + (most == 1 ? "one operand" : "one or two operands") +
             ", not " + std::to_string(n) + ": ',' separates the inputs of einsum");
}

// Names einops rejects: starting or ending with '_'.
void Checker::names() const {
  auto check_side = [this](const Axes& axes) {
    for (const auto& a : axes)
      if (a.kind == Axis::Kind::name && (a.name.front() == '_' || a.name.back() == '_'))
        fail(a.span, "axis name should not start or end with underscore: " + quoted(a));
  };
  for (const auto& in : inputs_) check_side(in);
  check_side(output_);
}

// einsum and map take compositions, as views around the contraction (numpy's einsum has
// none; einops users ask for them): "b (h d), h d k -> b k". An ellipsis inside one is
// allowed in the output only, as on the left of rearrange.
void Checker::groups() const {
  if (!is_einsum_like()) return;
  for (const auto& operand : p_.operands)
    for (const auto& term : operand.terms)
      if (const auto* g = std::get_if<ast::Group>(&term))
        for (const auto& atom : g->atoms)
          if (std::holds_alternative<ast::Ellipsis>(atom))
            fail(ast::span_of(atom), std::string("an ellipsis inside a composition is not supported in the inputs of ") +
                                         name(op_));
}

// One ellipsis per operand; none inside a group on the left; one on the right needs one
// on the left (for einsum and map: in some input).
void Checker::ellipses() const {
  auto count = [this](const Axes& axes) {
    const Axis* first = nullptr;
    for (const auto& a : axes) {
      if (a.kind != Axis::Kind::ellipsis) continue;
      if (first) fail(a.span, "only one ellipsis '...' is allowed per operand");
      first = &a;
    }
  };
  for (const auto& in : inputs_) count(in);
  count(output_);
  if (!is_einsum_like())
    for (const auto& a : inputs_[0])
      if (a.kind == Axis::Kind::ellipsis && a.in_group)
        fail(a.span, "Ellipsis inside parenthesis in the left side is not allowed");
  for (const auto& a : output_)
    if (a.kind == Axis::Kind::ellipsis && !any_input_has(a))
      fail(a.span, is_einsum_like()
                       ? "ellipsis '...' in the output but in no input"
                       : "Ellipsis found in right side, but not left side of a pattern");
}

// No name twice on one side, except within an einsum input (a diagonal).
void Checker::duplicates() const {
  auto check_side = [this](const Axes& axes, const std::string& where) {
    for (std::size_t i = 0; i < axes.size(); ++i) {
      if (axes[i].kind != Axis::Kind::name) continue;
      for (std::size_t j = 0; j < i; ++j)
        if (axes[j].kind == Axis::Kind::name && axes[j].name == axes[i].name)
          fail(axes[i].span, "axis " + quoted(axes[i]) + " appears twice " + where);
    }
  };
  if (op_ != Op::einsum)
    for (std::size_t i = 0; i < inputs_.size(); ++i) check_side(inputs_[i], side_name(i));
  check_side(output_, output_name());
}

// Anonymous axes other than 1: reduce reduces them on the left, repeat creates them on
// the right; nowhere else are they allowed.
void Checker::anonymous() const {
  auto check_side = [this](const Axes& axes, const std::string& reason) {
    for (const auto& a : axes)
      if (a.kind == Axis::Kind::anonymous && a.length != 1) fail(a.span, reason + quoted(a));
  };
  const std::string unsupported = std::string("Non-unitary anonymous axes are not supported in ") +
                                  name(op_) + " (exception is length 1): ";
  if (op_ != Op::reduce)
    for (const auto& in : inputs_)
      check_side(in, op_ == Op::repeat ? "Unexpected identifiers on the left side of repeat: "
                                       : unsupported);
  if (op_ != Op::repeat)
    check_side(output_, op_ == Op::reduce ? "Unexpected identifiers on the right side of reduce: "
                                          : unsupported);
}

void Checker::sides() const {
  if (is_einsum_like())
    sides_einsum();
  else
    sides_rearrange();
}

// rearrange: the same names on both sides; reduce: output names on the left; repeat:
// input names on the right.
void Checker::sides_rearrange() const {
  const Axes& left = inputs_[0];
  if (op_ != Op::reduce)
    for (const auto& a : left)
      if (a.is_identifier() && !contains(output_, a))
        fail(a.span, op_ == Op::rearrange
                         ? "Identifiers only on one side of expression (should be on both): " +
                               quoted(a)
                         : "Unexpected identifiers on the left side of repeat: " + quoted(a));
  if (op_ != Op::repeat)
    for (const auto& a : output_)
      if (a.is_identifier() && !contains(left, a))
        fail(a.span, op_ == Op::rearrange
                         ? "Identifiers only on one side of expression (should be on both): " +
                               quoted(a)
                         : "Unexpected identifiers on the right side of reduce: " + quoted(a));
}

// einsum: every output name in some input. map: that, and every input name in the output.
void Checker::sides_einsum() const {
  for (const auto& a : output_)
    if (a.kind == Axis::Kind::name && !any_input_has(a))
      fail(a.span, "output axis " + quoted(a) + " appears in no input");
  if (op_ != Op::map) return;
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    for (const auto& a : inputs_[i])
      if (a.is_identifier() && !contains(output_, a))
        fail(a.span, "axis " + quoted(a) + " of input " + std::to_string(i + 1) +
                         " is not in the output: map sums nothing (einsum does)");
}

}  // namespace

void check(const ast::Pattern& pattern, Op op) { Checker(pattern, op).run(); }

}  // namespace einexpr
