// Decoding fuzz_plan's bytes into a Case (plan_case.hpp) and planning it.
#include "plan_case.hpp"

#include <algorithm>
#include <limits>

#include "einexpr/parser/check.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"
#include "fuzz_support.hpp"

using namespace einexpr;

namespace fuzz {

const char* name(Kind kind) {
  constexpr const char* names[] = {"rearrange", "reduce", "repeat", "einsum", "binary map", "unary map",
                                   "get_at", "add_at", "cross_entropy", "pack", "unpack"};
  return names[static_cast<int>(kind)];
}

Op op_of(Kind kind) {
  constexpr Op ops[] = {Op::rearrange, Op::reduce, Op::repeat, Op::einsum, Op::map, Op::map,
                        Op::get_at, Op::add_at, Op::cross_entropy, Op::pack, Op::unpack};
  return ops[static_cast<int>(kind)];
}

bool indexed(Kind kind) { return kind == Kind::get_at || kind == Kind::add_at || kind == Kind::cross_entropy; }

std::size_t num_inputs(const Case& c) { return c.inputs.size(); }

namespace {

/// A length: small (0..5, mostly non-zero), or with `huge` often enormous.
std::int64_t draw_length(ByteReader& r, bool huge) {
  static constexpr std::int64_t small[] = {1, 2, 3, 4, 5, 0, 2, 3};
  static constexpr std::int64_t big[] = {std::int64_t{1} << 16, std::int64_t{1} << 31, std::int64_t{1} << 32,
                                         3037000500,            std::int64_t{1} << 40, std::int64_t{1} << 61,
                                         std::int64_t{1} << 62, std::numeric_limits<std::int64_t>::max()};
  const std::uint8_t b = r.byte();
  if (huge && b >= 0x80) return big[b % 8];
  return small[b % 8];
}

void collect_names(const ast::Operand& o, Case& c) {
  auto add = [&](const std::string& n) {
    if (c.sizes.count(n) == 0) {
      c.sizes[n] = 0;
      c.names.push_back(n);
    }
  };
  for (const ast::Term& t : o.terms) {
    if (const auto* n = std::get_if<ast::Named>(&t)) add(n->name);
    if (const auto* g = std::get_if<ast::Group>(&t))
      for (const ast::Atom& a : g->atoms)
        if (const auto* n = std::get_if<ast::Named>(&a)) add(n->name);
  }
}

bool has_ellipsis(const ast::Operand& o) {
  for (const ast::Term& t : o.terms) {
    if (std::holds_alternative<ast::Ellipsis>(t)) return true;
    if (const auto* g = std::get_if<ast::Group>(&t))
      for (const ast::Atom& a : g->atoms)
        if (std::holds_alternative<ast::Ellipsis>(a)) return true;
  }
  return false;
}

/// What "..." stands for in each operand: the last dims of one drawn shape, some of them 1
/// (broadcast) and, for multi-operand ops, sometimes fewer of them.
void draw_ellipsis(ByteReader& r, Case& c) {
  Shape full(r.below(4));
  for (auto& len : full) len = draw_length(r, c.huge);
  const bool multi = c.kind == Kind::einsum || c.kind == Kind::binary;
  for (const ast::Operand& o : c.pattern.operands) {
    Shape e;
    if (has_ellipsis(o)) {
      e = full;
      if (multi) {
        if (!e.empty() && r.below(4) == 3) e.erase(e.begin());
        for (auto& len : e)
          if (r.below(4) == 0) len = 1;
      }
    }
    c.ellipsis.push_back(e);
  }
  // The broadcast of the operands' ellipses, right-aligned: a length other than 1 wins.
  std::size_t rank = 0;
  for (const Shape& e : c.ellipsis) rank = std::max(rank, e.size());
  c.out_ellipsis.assign(rank, 1);
  for (const Shape& e : c.ellipsis)
    for (std::size_t i = 0; i < e.size(); ++i)
      if (e[i] != 1) c.out_ellipsis[rank - e.size() + i] = e[i];
}

/// pack: 1-4 inputs, each with its own "*" dims (0-2 of them), the output's "*" their sizes'
/// sum. unpack: 1-4 outputs' "*" shapes, the one input's "*" their sum, the output planned,
/// and sometimes a -1 in one shape (inferred). ShapeError when the sum overflows.
void draw_pack(ByteReader& r, Case& c) {
  const unsigned n = 1 + r.below(4);
  std::vector<Shape> parts(n);
  std::int64_t total = 0;
  for (Shape& part : parts) {
    part.resize(r.below(3));
    for (auto& len : part) len = draw_length(r, c.huge);
    total = checked_add(total, checked_numel(part));
  }
  if (c.kind == Kind::pack) {
    c.ellipsis = parts;
    c.out_ellipsis = {total};
    return;
  }
  c.unpack_output = static_cast<int>(r.below(n));
  c.unpack_shapes = parts;
  if (Shape& s = c.unpack_shapes[r.below(n)]; r.below(4) == 0 && !s.empty()) s[r.below(static_cast<unsigned>(s.size()))] = -1;
  c.ellipsis = {Shape{total}};
  c.out_ellipsis = parts[static_cast<std::size_t>(c.unpack_output)];
}

/// The shape of an operand (or the output) under the case's sizes; ShapeError on overflow.
Shape shape_of(const ast::Operand& o, const Case& c, const Shape& ellipsis) {
  Shape s;
  auto atom_length = [&](const ast::Atom& a) -> std::int64_t {
    if (const auto* n = std::get_if<ast::Named>(&a)) return c.sizes.at(n->name);
    if (const auto* k = std::get_if<ast::Anonymous>(&a)) return k->length;
    return checked_numel(ellipsis);
  };
  for (const ast::Term& t : o.terms) {
    if (std::holds_alternative<ast::Ellipsis>(t)) {
      s.insert(s.end(), ellipsis.begin(), ellipsis.end());
    } else if (std::holds_alternative<ast::Unit>(t)) {
      s.push_back(1);
    } else if (const auto* g = std::get_if<ast::Group>(&t)) {
      std::int64_t len = g->concat ? 0 : 1;  // a concatenation's parts add up
      for (const ast::Atom& a : g->atoms) len = g->concat ? checked_add(len, atom_length(a)) : checked_mul(len, atom_length(a));
      s.push_back(len);
    } else if (const auto* n = std::get_if<ast::Named>(&t)) {
      s.push_back(c.sizes.at(n->name));
    } else {
      s.push_back(std::get<ast::Anonymous>(t).length);
    }
  }
  return s;
}

/// Changes one operand's shape: a length, a dim dropped, a dim added, two dims swapped.
void perturb(ByteReader& r, Case& c, std::vector<Shape>& shapes) {
  Shape& s = shapes[r.below(static_cast<unsigned>(shapes.size()))];
  const unsigned at = s.empty() ? 0 : r.below(static_cast<unsigned>(s.size()));
  switch (r.below(4)) {
    case 0: if (!s.empty()) s[at] = draw_length(r, c.huge); break;
    case 1: if (!s.empty()) s.erase(s.begin() + at); break;
    case 2: s.insert(s.begin() + at, draw_length(r, c.huge)); break;
    default: if (s.size() > 1) std::swap(s[at], s[(at + 1) % s.size()]);
  }
}

/// Strides for `shape` stored in the dim order `order` (outermost first), each dim padded.
Strides ordered_strides(const Shape& shape, const std::vector<std::size_t>& order, const std::vector<int>& step) {
  Strides st(shape.size(), 0);
  std::int64_t s = 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    const std::size_t d = order[k];
    st[d] = checked_mul(s, step[d]);
    s = checked_mul(s, checked_mul(std::max<std::int64_t>(shape[d], 1), step[d]));
  }
  return st;
}

Layout draw_layout(ByteReader& r, const Shape& shape) {
  const std::size_t n = shape.size();
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::vector<int> step(n, 1);
  Strides st;
  switch (r.below(6)) {
    case 0: break;                                              // contiguous
    case 1: std::reverse(order.begin(), order.end()); break;   // transposed
    case 2:                                                     // permuted
      for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[r.below(static_cast<unsigned>(i))]);
      break;
    case 3:                                                     // sliced: every k-th element
      for (int& k : step) k = 1 + static_cast<int>(r.below(3));
      break;
    case 4:                                                     // broadcast: stride 0
      st = ordered_strides(shape, order, step);
      for (std::size_t d = 0; d < n; ++d)
        if (r.flag()) st[d] = 0;
      return Layout{shape, st, 0};
    default:                                                    // arbitrary, maybe overlapping
      st.resize(n);
      for (auto& s : st) s = r.below(7);
      return Layout{shape, st, 0};
  }
  return Layout{shape, ordered_strides(shape, order, step), 0};
}

void draw_lengths(ByteReader& r, Case& c) {
  const bool multi = c.kind == Kind::einsum || c.kind == Kind::binary;  // lengths are rare there
  if (c.kind == Kind::unary || c.kind == Kind::pack || c.kind == Kind::unpack || (multi && !c.all_lengths && r.below(4) != 0)) return;
  for (const std::string& n : c.names) {
    if (!c.all_lengths && !r.flag()) continue;
    std::int64_t len = c.sizes.at(n);
    if (!c.consistent && r.below(8) == 0) len = len > 0 ? len - 1 : 1;  // a wrong length
    c.lengths.emplace_back(n, len);
  }
  if (!c.consistent && r.below(8) == 0) c.lengths.emplace_back("zz_unused", 2);
}

void read_header(ByteReader& r, Case& c) {
  c.kind = static_cast<Kind>(r.below(num_kinds));
  c.dtype = all_dtypes[r.below(9)];
  const std::uint8_t flags = r.byte();
  c.consistent = (flags & 1) == 0;
  c.all_lengths = (flags & 2) != 0;
  c.huge = (flags & 4) != 0;
  c.run = (flags & 8) == 0;
  const std::uint8_t choice = r.byte();
  c.reduction = static_cast<Reduction>(choice % 7);
  c.unary = static_cast<UnaryOp>(choice % 13);
  c.binary = static_cast<BinaryOp>(choice % 6);
  const std::uint8_t choice2 = r.byte();
  c.copy = static_cast<Copy>(choice2 % 3);
  c.order = static_cast<ContractionOrder>((choice2 / 3) % 3);
}

}  // namespace

std::optional<Case> decode(const std::uint8_t* data, std::size_t size, std::optional<Kind> only) {
  ByteReader r(data, size);
  Case c;
  read_header(r, c);
  if (only) c.kind = *only;
  c.text = std::string(r.until('\0'));
  if (c.kind == Kind::unary) {
    c.text.clear();
    c.pattern.operands.emplace_back();
    for (unsigned d = r.below(5); d-- > 0;) c.pattern.operands[0].terms.emplace_back(ast::Named{"d" + std::to_string(d), {}});
    c.pattern.output = c.pattern.operands[0];
  } else {
    try {
      const bool packed = c.kind == Kind::pack || c.kind == Kind::unpack;
      c.pattern = indexed(c.kind) ? parse_indexed(c.text) : packed ? pack_as_pattern(parse_pack(c.text)) : parse(c.text);
      check(c.pattern, op_of(c.kind));
    } catch (const PatternError&) {
      return std::nullopt;
    }
  }
  for (const ast::Operand& o : c.pattern.operands) collect_names(o, c);
  collect_names(c.pattern.output, c);
  for (const std::string& n : c.names) c.sizes[n] = draw_length(r, c.huge);
  const bool pack = c.kind == Kind::pack;
  if (!pack && c.kind != Kind::unpack) draw_ellipsis(r, c);
  try {
    if (pack || c.kind == Kind::unpack) draw_pack(r, c);
    std::vector<Shape> shapes;
    for (std::size_t i = 0; i < c.ellipsis.size(); ++i)  // a pack's inputs share its one operand
      shapes.push_back(shape_of(c.pattern.operands[pack ? 0 : i], c, c.ellipsis[i]));
    if (!c.consistent) perturb(r, c, shapes);
    for (const Shape& s : shapes) {
      c.inputs.push_back(draw_layout(r, s));
      c.offsets.push_back(r.below(3));
    }
  } catch (const ShapeError&) {
    return std::nullopt;  // lengths too large to lay out: nothing to plan
  }
  draw_lengths(r, c);
  c.seed = r.byte();
  c.fail_at = r.byte();
  return c;
}

Shape expected_output_shape(const Case& c) { return shape_of(c.pattern.output, c, c.out_ellipsis); }

OpSpec spec_of(const Case& c) {
  if (c.kind == Kind::pack) return OpSpec::pack();
  if (c.kind == Kind::unpack) return OpSpec::unpack(c.unpack_shapes, c.unpack_output);
  OpSpec s = OpSpec::of(op_of(c.kind), c.lengths);
  std::visit(
      [&](auto& o) {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ReduceOptions>) o.reduction = c.reduction;
        if constexpr (std::is_same_v<O, MapOptions>) {
          if (c.kind == Kind::binary) o.function = c.binary;
          if (c.kind == Kind::unary) o.function = c.unary;
        }
        if constexpr (std::is_same_v<O, RearrangeOptions> || std::is_same_v<O, RepeatOptions>) o.copy = c.copy;
        if constexpr (std::is_same_v<O, EinsumOptions>) o.order = c.order;
      },
      s.options);
  return s;
}

Plan plan_case(const Case& c) {
  return plan(spec_of(c), c.kind == Kind::unary ? nullptr : &c.pattern, c.inputs, c.dtype);
}

}  // namespace fuzz
