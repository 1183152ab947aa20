#pragma once
// The AST of a pattern: plain structs, no PEGTL types. Every node has a Span (byte
// offsets into Pattern::text), so later stages can point a caret at it.
//
//   "b (h d) 1 () ... -> b h d"
//     operand 0: Named b, Group(h d), Anonymous 1, Unit, Ellipsis
//     output:    Named b, Named h, Named d
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace einexpr {

/// The operations that take patterns; check() applies each one's rules, and the op registry
/// (einexpr/parser/ops.hpp) has one row per spelling of each (arity, grammar, options).
/// `map` is an elementwise binary op with named broadcasting ("b s h, h -> b s h"):
/// einsum's syntax, but nothing may be summed (every input name is in the output).
/// `normalize` (softmax, layer_norm, ...) takes one tensor's dims with the axes it works
/// along in brackets ("b h q [k]", parse_bracketed), checked as a rearrange onto itself.
/// `get_at`, `add_at` and `cross_entropy` take einx's indexed patterns (parse_indexed): the
/// indexed axis of the first operand in brackets ("[V] D, B S -> B S D").
/// codegen's OpOptions has one alternative per Op, in this order (a static_assert checks it).
/// `pack` and `unpack` take einops' pack patterns ("i j * k", parse_pack), seen as a pattern
/// whose one operand has "..." where the "*" is (pack_as_pattern).
/// `dropout` takes a plain pattern whose output is its first operand ("b s d, -> b s d": x and
/// the 0-d seed); in a model file it is written without one, "dropout(x, 0.1)".
enum class Op : unsigned char {
  rearrange, reduce, repeat, einsum, map, normalize, get_at, add_at, cross_entropy, pack, unpack, dropout
};
inline constexpr Op all_ops[] = {Op::rearrange, Op::reduce, Op::repeat,        Op::einsum, Op::map,   Op::normalize,
                                 Op::get_at,    Op::add_at, Op::cross_entropy, Op::pack,   Op::unpack, Op::dropout};
const char* name(Op op) noexcept;

namespace ast {

struct Span {
  std::size_t begin = 0;  // first byte
  std::size_t end = 0;    // one past the last byte
  friend bool operator==(const Span&, const Span&) = default;
};

struct Named {       // an axis name: "b", "seq1", "hidden_dim"
  std::string name;
  Span span;
  friend bool operator==(const Named&, const Named&) = default;
};
struct Anonymous {   // an axis given by its length: "1", "3"
  std::int64_t length = 0;
  Span span;
  friend bool operator==(const Anonymous&, const Anonymous&) = default;
};
struct Ellipsis {    // "..."
  Span span;
  friend bool operator==(const Ellipsis&, const Ellipsis&) = default;
};
struct Unit {        // "()": an axis of length 1 that has no name
  Span span;
  friend bool operator==(const Unit&, const Unit&) = default;
};
using Atom = std::variant<Named, Anonymous, Ellipsis>;
struct Group {       // "(h d)": one dim that is the composition of its atoms (never empty);
                     // "(s1 + s2)": their concatenation (concat), a dim of the lengths' sum
  std::vector<Atom> atoms;
  Span span;
  bool concat = false;  // "(a + b)": the parts are named or anonymous axes, at least two
  friend bool operator==(const Group&, const Group&) = default;
};
using Term = std::variant<Named, Anonymous, Unit, Group, Ellipsis>;

struct Operand {     // one side of "->", or one comma-separated einsum input
  std::vector<Term> terms;
  Span span;
  friend bool operator==(const Operand&, const Operand&) = default;
};

struct Pattern {
  std::string text;               // the pattern as given
  std::vector<Operand> operands;  // left of "->": 1 for rearrange/reduce/repeat, 1..N for einsum
  Operand output;                 // right of "->" (may have no terms: a scalar)
  Span arrow;                     // where "->" is
  std::vector<Span> brackets;     // parse_bracketed, parse_indexed: each "[...]", brackets included
  std::vector<Operand> more_outputs;  // a split's outputs after the first: "a (b + c) -> a b, a c"
  friend bool operator==(const Pattern&, const Pattern&) = default;
};

/// einops' pack / unpack pattern: names separated by spaces with exactly one "*".
struct PackPattern {
  std::string text;
  std::vector<std::string> names;  // the names in order, without the "*"
  std::size_t star = 0;            // position of "*" among the names (0..names.size())
  friend bool operator==(const PackPattern&, const PackPattern&) = default;
};

Span span_of(const Term& term) noexcept;
Span span_of(const Atom& atom) noexcept;

/// True when `term` stands inside one of the pattern's brackets.
bool in_brackets(const Pattern& pattern, const Term& term) noexcept;

/// Canonical text, single-spaced: "b (h d) -> b h d", "i j, j k -> i k", "b (s1 + s2)"; a
/// pattern of parse_bracketed as its dims with their brackets: "b h q [k]", "[b h] (x y) [c]";
/// of parse_indexed with its brackets in place: "[v] d, b s -> b s d".
std::string to_string(const Term& term);
std::string to_string(const Operand& operand);
std::string to_string(const Pattern& pattern);

}  // namespace ast
}  // namespace einexpr
