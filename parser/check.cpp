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
    for (const auto& more : p.more_outputs) more_outputs_.push_back(flatten(more));
  }

  /// Each op's rules (a switch over every Op: an op without its rules fails to compile).
  void run() const {
    outputs();
    switch (op_) {
      case Op::get_at:
      case Op::add_at:
      case Op::cross_entropy:
        indexed();
        return;
      case Op::rearrange:
        if (is_concat_or_split()) {
          concatenation();
          return;
        }
        break;
      case Op::pack:
      case Op::unpack:
        return;  // parse_pack checked the names; the "*" is the "..."
      case Op::dropout:
        dropout();
        break;
      case Op::reduce:
      case Op::repeat:
      case Op::einsum:
      case Op::map:
      case Op::normalize:
        break;
    }
    concat_groups();
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
  bool is_einsum_like() const { return op_ == Op::einsum || op_ == Op::map || op_ == Op::dropout; }
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

  void outputs() const;
  bool is_concat_or_split() const;
  void concat_groups() const;
  void concatenation() const;
  void indexed() const;
  void dropout() const;
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
  std::vector<Axes> more_outputs_;
};

/// The first concatenation group "(a + b)" of an operand, or nullptr.
const ast::Group* concat_group(const ast::Operand& operand) {
  for (const auto& term : operand.terms)
    if (const auto* g = std::get_if<ast::Group>(&term); g != nullptr && g->concat) return g;
  return nullptr;
}
std::size_t concat_groups_in(const ast::Operand& operand) {
  std::size_t n = 0;
  for (const auto& term : operand.terms)
    if (const auto* g = std::get_if<ast::Group>(&term); g != nullptr && g->concat) ++n;
  return n;
}

// Several outputs only split a concatenation: rearrange with '(a + b)' on the left.
void Checker::outputs() const {
  if (p_.more_outputs.empty()) return;
  const bool split = op_ == Op::rearrange && p_.operands.size() == 1 && concat_group(p_.operands[0]) != nullptr;
  if (split) return;
  const std::size_t comma = p_.text.rfind(',', p_.more_outputs[0].span.begin);
  fail(Span{comma, comma + 1},
       op_ == Op::rearrange ? "',' in the output: several outputs split a concatenation of the input, "
                              "'b (q + k) -> b q, b k'"
                            : "',' in the output: the right side of '->' is a single operand");
}

bool Checker::is_concat_or_split() const {
  if (p_.operands.size() > 1 || !p_.more_outputs.empty()) return true;
  return concat_group(p_.operands[0]) != nullptr || concat_group(p_.output) != nullptr;
}

// '(a + b)' belongs to rearrange, which concatenates or splits with it.
void Checker::concat_groups() const {
  auto check_operand = [this](const ast::Operand& operand) {
    if (const ast::Group* g = concat_group(operand))
      fail(g->span, "'(a + b)' concatenates, which only rearrange does (rearrange({x, y}, \"b s1, b s2 -> b (s1 + s2)\")); "
                    "it means nothing in " + std::string(name(op_)));
  };
  for (const auto& operand : p_.operands) check_operand(operand);
  check_operand(p_.output);
}

// Concatenation "b s1 d, b s2 d -> b (s1 + s2) d": the output has one '(a + b ...)' with a
// part per input, and each input names the output's axes with the group replaced by its part.
// Split "b (q + k) -> b q, b k": the reverse, one output per part.
void Checker::concatenation() const {
  const bool split = p_.operands.size() == 1;
  const std::vector<ast::Operand>& many_side = p_.operands;
  std::vector<const ast::Operand*> parts_side;  // the operands that hold one part each
  if (split) {
    parts_side.push_back(&p_.output);
    for (const auto& o : p_.more_outputs) parts_side.push_back(&o);
  } else {
    for (const auto& o : many_side) parts_side.push_back(&o);
  }
  const ast::Operand& joined = split ? p_.operands[0] : p_.output;
  if (p_.operands.size() > max_einsum_operands)
    fail(p_.operands[max_einsum_operands].span,
         "rearrange concatenates at most " + std::to_string(max_einsum_operands) + " tensors, not " +
             std::to_string(p_.operands.size()));
  const ast::Group* g = concat_group(joined);
  if (g == nullptr && split && p_.more_outputs.empty())
    if (const ast::Group* out = concat_group(p_.output))
      fail(out->span, "'" + ast::to_string(ast::Term{*out}) + "' has " + std::to_string(out->atoms.size()) +
                          " parts but 1 input is given: a concatenation takes one input per part");
  if (g == nullptr) {
    if (!split)
      fail(p_.operands[1].span,
           "rearrange takes one operand, not " + std::to_string(p_.operands.size()) +
               ", unless it concatenates them: write the joined dim as '(a + b)' in the output, "
               "'b s1, b s2 -> b (s1 + s2)'");
    fail(p_.operands[0].span, "several outputs split the input: write the split dim as '(a + b)' on the left, "
                              "'b (q + k) -> b q, b k'");
  }
  if (concat_groups_in(joined) > 1) {
    bool seen = false;
    for (const auto& term : joined.terms)
      if (const auto* h = std::get_if<ast::Group>(&term); h != nullptr && h->concat) {
        if (seen) fail(h->span, "a second '(a + b)': one dim is concatenated or split at a time");
        seen = true;
      }
  }
  const std::string where = split ? "outputs" : "inputs";
  if (g->atoms.size() != parts_side.size())
    fail(g->span, "'" + ast::to_string(ast::Term{*g}) + "' has " + std::to_string(g->atoms.size()) + " parts but " +
                      std::to_string(parts_side.size()) + " " + (parts_side.size() == 1 ? where.substr(0, where.size() - 1) + " is" : where + " are") +
                      " given: one part per " + (split ? "output" : "input"));
  for (const ast::Operand* o : parts_side)
    if (const ast::Group* h = concat_group(*o))
      fail(h->span, std::string("'(a + b)' on both sides: the ") + (split ? "outputs" : "inputs") +
                        " name their part alone");
  // Every part a distinct name; names einops rejects.
  std::vector<std::string> part_names;
  for (const ast::Atom& atom : g->atoms) {
    const auto* n = std::get_if<ast::Named>(&atom);
    if (n == nullptr) fail(ast::span_of(atom), "a part of '(a + b)' is a named axis (its length is its operand's)");
    for (const std::string& other : part_names)
      if (other == n->name) fail(n->span, "part '" + n->name + "' appears twice in '(a + b)'");
    part_names.push_back(n->name);
  }
  // The axes of the joined side besides the group.
  Axes rest;  // (names point into the pattern, which outlives them)
  for (const Axis& a : flatten(joined))
    if (a.span.begin < g->span.begin || a.span.begin >= g->span.end) rest.push_back(a);
  for (const Axis& a : rest) {
    if (a.kind == Axis::Kind::name && (a.name.front() == '_' || a.name.back() == '_'))
      fail(a.span, "axis name should not start or end with underscore: " + quoted(a));
    if (a.kind == Axis::Kind::anonymous && a.length != 1)
      fail(a.span, "Non-unitary anonymous axes are not supported in rearrange (exception is length 1): " + quoted(a));
    if (a.kind == Axis::Kind::name)
      for (const std::string& part : part_names)
        if (part == a.name) fail(a.span, "axis '" + part + "' is a part of '(a + b)' and a dim of its own");
  }
  for (std::size_t i = 0; i < rest.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (rest[i].is_identifier() && rest[j].is_identifier() && rest[i].kind == rest[j].kind &&
          rest[i].name == rest[j].name)
        fail(rest[i].span, "axis " + quoted(rest[i]) + " appears twice");
  // Each part's operand: the joined side's axes with the part in the group's place.
  for (std::size_t k = 0; k < parts_side.size(); ++k) {
    const Axes axes = flatten(*parts_side[k]);
    const std::string label = (split ? "output " : "input ") + std::to_string(k + 1);
    Axis part{Axis::Kind::name, std::get<ast::Named>(g->atoms[k]).name, 1, {}, false};
    Axes want = rest;
    want.push_back(part);
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const Axis& a = axes[i];
      if (a.kind == Axis::Kind::name && (a.name.front() == '_' || a.name.back() == '_'))
        fail(a.span, "axis name should not start or end with underscore: " + quoted(a));
      if (a.kind == Axis::Kind::anonymous && a.length != 1)
        fail(a.span, "Non-unitary anonymous axes are not supported in rearrange (exception is length 1): " + quoted(a));
      for (std::size_t j = 0; j < i; ++j)
        if (a.is_identifier() && axes[j].is_identifier() && a.kind == axes[j].kind && a.name == axes[j].name)
          fail(a.span, "axis " + quoted(a) + " appears twice in " + label);
      if (a.is_identifier() && !contains(want, a))
        fail(a.span, "axis " + quoted(a) + " of " + label + " is not in '" + ast::to_string(joined) + "'" +
                         (split ? "" : "") + " (" + label + " holds part '" + std::string(part.name) + "')");
      if (a.kind == Axis::Kind::ellipsis && a.in_group && !split)
        fail(a.span, "Ellipsis inside parenthesis in the left side is not allowed");
    }
    for (const Axis& a : want)
      if (a.is_identifier() && !contains(axes, a))
        fail(parts_side[k]->span.begin < parts_side[k]->span.end ? parts_side[k]->span : g->span,
             label + " lacks axis " + quoted(a) + " (it holds part '" + std::string(part.name) + "' of '" +
                 ast::to_string(ast::Term{*g}) + "')");
  }
}

// get_at "[v] d, b s -> b s d", add_at "[v] d, b s, b s d -> [v] d", cross_entropy
// "b s [v], b s -> b s": one bracketed axis, a name, in the first operand (and, for add_at, the
// same in the output); the index operand's axes are the output's (get_at) or the updates'.
void Checker::indexed() const {
  const std::string op = name(op_);
  const std::size_t want = op_ == Op::add_at ? 3 : 2;
  const std::size_t n = p_.operands.size();
  if (n != want) {
    const std::string example = op_ == Op::get_at   ? "\"[v] d, b s -> b s d\""
                                : op_ == Op::add_at ? "\"[v] d, b s, b s d -> [v] d\""
                                                    : "\"b s [v], b s -> b s\"";
    fail(n > want ? p_.operands[want].span : p_.arrow,
         op + " takes " + std::to_string(want) + " operands, not " + std::to_string(n) + ": " + example);
  }
  for (const auto& operand : p_.operands) {
    if (const ast::Group* g = concat_group(operand))
      fail(g->span, "'(a + b)' concatenates, which only rearrange does; it means nothing in " + op);
  }
  if (const ast::Group* g = concat_group(p_.output))
    fail(g->span, "'(a + b)' concatenates, which only rearrange does; it means nothing in " + op);
  // The bracketed terms, by operand.
  auto bracketed = [&](const ast::Operand& operand) {
    std::vector<const ast::Term*> terms;
    for (const auto& t : operand.terms)
      if (ast::in_brackets(p_, t)) terms.push_back(&t);
    return terms;
  };
  const auto table = bracketed(p_.operands[0]);
  const std::size_t out_brackets = bracketed(p_.output).size();
  std::size_t total = table.size() + out_brackets;
  for (std::size_t i = 1; i < n; ++i) total += bracketed(p_.operands[i]).size();
  if (p_.brackets.size() != 1 + (op_ == Op::add_at ? 1u : 0u) || table.size() != 1 ||
      total != p_.brackets.size() || (op_ == Op::add_at && out_brackets != 1)) {
    const Span at = p_.brackets.empty() ? Span{0, 0} : p_.brackets.back();
    fail(at, op_ == Op::add_at ? "add_at brackets one axis of its first operand and the same in its output: "
                                 "\"[v] d, b s, b s d -> [v] d\""
                               : op + " brackets exactly one axis, in its first operand: " +
                                     (op_ == Op::get_at ? "\"[v] d, b s -> b s d\"" : "\"b s [v], b s -> b s\""));
  }
  const auto* indexed_name = std::get_if<ast::Named>(table[0]);
  if (indexed_name == nullptr)
    fail(ast::span_of(*table[0]), "the bracketed axis of " + op + " is one named axis, not a composition or '...'");
  Axis index_axis = axis_of(*indexed_name, false);
  // Names einops rejects, duplicates, anonymous axes other than 1, ellipses.
  auto basic = [&](const Axes& axes, const std::string& where) {
    const Axis* ellipsis = nullptr;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const Axis& a = axes[i];
      if (a.kind == Axis::Kind::name && (a.name.front() == '_' || a.name.back() == '_'))
        fail(a.span, "axis name should not start or end with underscore: " + quoted(a));
      if (a.kind == Axis::Kind::anonymous && a.length != 1)
        fail(a.span, "Non-unitary anonymous axes are not supported in " + op + " (exception is length 1): " + quoted(a));
      if (a.kind == Axis::Kind::ellipsis) {
        if (ellipsis != nullptr) fail(a.span, "only one ellipsis '...' is allowed per operand");
        if (a.in_group) fail(a.span, "an ellipsis inside a composition is not supported in " + op);
        ellipsis = &a;
      }
      for (std::size_t j = 0; j < i; ++j)
        if (a.kind == Axis::Kind::name && axes[j].kind == Axis::Kind::name && axes[j].name == a.name)
          fail(a.span, "axis " + quoted(a) + " appears twice " + where);
    }
  };
  for (std::size_t i = 0; i < n; ++i) basic(inputs_[i], "in input " + std::to_string(i + 1));
  basic(output_, "in the output");
  // The table's other axes, the index operand's axes.
  Axes table_rest;
  for (const Axis& a : inputs_[0])
    if (!(a.kind == Axis::Kind::name && a.name == index_axis.name)) table_rest.push_back(a);
  const Axes& index = inputs_[1];
  for (const Axis& a : index)
    if (a.kind == Axis::Kind::name && a.name == index_axis.name)
      fail(a.span, "axis " + quoted(a) + " is the indexed axis: the indices select along it, so they have no such axis");
  auto same_set = [&](const Axes& got, const Axes& expected, const std::string& where, Span at,
                      const std::string& what) {
    for (const Axis& a : got)
      if (a.is_identifier() && !contains(expected, a)) fail(a.span, "axis " + quoted(a) + " " + where + " " + what);
    for (const Axis& a : expected)
      if (a.is_identifier() && !contains(got, a)) fail(at, where + " lacks axis " + quoted(a) + " (" + what + ")");
  };
  Axes gathered = index;  // what get_at makes: the index's axes and the table's other axes
  for (const Axis& a : table_rest)
    if (!contains(gathered, a)) gathered.push_back(a);
  const Span out_at = p_.output.span.begin < p_.output.span.end ? p_.output.span : p_.arrow;
  switch (op_) {
    case Op::get_at:
      for (const Axis& a : output_)
        if (a.kind == Axis::Kind::name && a.name == index_axis.name)
          fail(a.span, "axis " + quoted(a) + " is the indexed axis: get_at replaces it by the indices' axes");
      same_set(output_, gathered, "in the output", out_at,
               "the output has the indices' axes and the table's other axes");
      break;
    case Op::add_at: {
      if (ast::to_string(p_.output) != ast::to_string(p_.operands[0]))
        fail(out_at, "add_at's output is its first operand, the table: '" + ast::to_string(p_.operands[0]) + "'");
      const Span upd_at = p_.operands[2].span.begin < p_.operands[2].span.end ? p_.operands[2].span : p_.arrow;
      for (const Axis& a : inputs_[2])
        if (a.kind == Axis::Kind::name && a.name == index_axis.name)
          fail(a.span, "axis " + quoted(a) + " is the indexed axis: the updates have the indices' axes in its place");
      same_set(inputs_[2], gathered, "in input 3", upd_at,
               "the updates have the indices' axes and the table's other axes");
      break;
    }
    case Op::cross_entropy: {
      const Span idx_at = p_.operands[1].span.begin < p_.operands[1].span.end ? p_.operands[1].span : p_.arrow;
      same_set(index, table_rest, "in input 2", idx_at, "the targets have the logits' axes but the classes");
      same_set(output_, table_rest, "in the output", out_at, "the loss has the logits' axes but the classes");
      break;
    }
    default: break;
  }
}

// dropout: x and the 0-d seed ("b s d, -> b s d"); the output is x's dims as written.
void Checker::dropout() const {
  const std::size_t n = p_.operands.size();
  if (n != 2)
    fail(n > 2 ? p_.operands[2].span : p_.arrow,
         "dropout takes two operands, the tensor and its 0-d seed: \"b s d, -> b s d\"");
  if (!p_.operands[1].terms.empty())
    fail(p_.operands[1].span, "dropout's second operand is its seed, a 0-d i64: it has no axes (\"b s d, -> b s d\")");
  if (ast::to_string(p_.output) != ast::to_string(p_.operands[0]))
    fail(p_.output.span.begin < p_.output.span.end ? p_.output.span : p_.arrow,
         "dropout's output is its input, '" + ast::to_string(p_.operands[0]) + "': it moves no axis");
}

// rearrange / reduce / repeat take one operand; map one or two; einsum one or more.
void Checker::operand_count() const {
  const std::size_t n = p_.operands.size();
  if (n == 0) fail(p_.arrow, std::string(name(op_)) + " needs an operand left of '->'");
  if (op_ == Op::einsum && n > max_einsum_operands)
    fail(p_.operands[max_einsum_operands].span,
         "einsum takes at most " + std::to_string(max_einsum_operands) + " operands, not " + std::to_string(n) +
             ": contract them in several einsums");
  const std::size_t most = op_ == Op::einsum ? n : op_ == Op::map || op_ == Op::dropout ? 2 : 1;
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
