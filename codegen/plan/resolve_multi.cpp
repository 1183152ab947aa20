// Resolution of einsum and map operands: ellipsis broadcasting across operands, lengths
// from plain dims then compositions, diagonals as summed strides. Every mismatch is a
// ShapeError naming the axis, both sizes and the operands.
#include <algorithm>

#include "einexpr/runtime/error.hpp"
#include "plan/resolve.hpp"
#include "plan/resolve_common.hpp"

namespace einexpr::detail {

using namespace resolving;

namespace {

std::string operand_name(std::size_t i) { return "operand " + str(static_cast<std::int64_t>(i + 1)); }

/// Where a length was seen: dim `dim` of operand `operand`, or what `label` says ("given").
/// Kept as numbers and spelled out only for an error, since every call resolves.
struct Where {
  int operand = -1, dim = -1;
  const char* label = nullptr;
  std::string text() const {
    return label ? label : operand_name(static_cast<std::size_t>(operand)) + " (dim " + str(dim) + ")";
  }
};

/// Lengths of named axes as the tensors and the given lengths say, with where each came from.
class MultiLengths {
 public:
  explicit MultiLengths(Given& given) : given_(given) {}
  const std::int64_t* find(const std::string& name) {
    if (auto it = map_.find(name); it != map_.end()) return &it->second.length;
    if (const std::int64_t* g = given_.find(name))
      return &map_.emplace(name, Seen{*g, Where{-1, -1, "given"}}).first->second.length;
    return nullptr;
  }
  /// Records that `name` has length `len` at `where`; `diagonal`: a second sighting in the
  /// same operand is a repeated axis (its diagonal needs equal lengths).
  void set(const std::string& name, std::int64_t len, const Where& where, bool diagonal = false) {
    const std::int64_t* g = given_.find(name);
    auto [it, fresh] = map_.emplace(name, Seen{len, where});
    if (!fresh && it->second.length != len) {
      const Seen& other = it->second;
      if (diagonal && other.where.operand == where.operand && !other.where.label)
        throw ShapeError("axis " + name + " is " + str(other.length) + " (dim " + str(other.where.dim) + ") and " +
                         str(len) + " (dim " + str(where.dim) + ") in operand " + str(where.operand + 1) +
                         ": a repeated axis takes the diagonal and needs equal lengths");
      throw ShapeError("axis " + name + " is " + str(other.length) + " in " + other.where.text() + " but " + str(len) +
                       " in " + where.text());
    }
    if (g != nullptr && *g != len)
      throw ShapeError("axis " + name + " is " + str(len) + " in " + where.text() + " but " + str(*g) + " was given");
  }
 private:
  struct Seen {
    std::int64_t length;
    Where where;
  };
  Given& given_;
  std::map<std::string, Seen, std::less<>> map_;
};

/// The broadcast lengths of the dims '...' stands for, right-aligned across operands.
Shape broadcast_ellipsis(const ast::Pattern& p, std::span<const Layout> inputs, const std::vector<int>& e) {
  const int E = *std::max_element(e.begin(), e.end());
  Shape L(static_cast<std::size_t>(E), 1);
  std::vector<int> from(static_cast<std::size_t>(E), -1);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::size_t start = 0;
    for (const ast::Term& t : p.operands[i].terms) {
      if (is_ellipsis(t)) break;
      ++start;
    }
    for (int k = 0; k < e[i]; ++k) {
      const auto j = static_cast<std::size_t>(E - e[i] + k);
      const std::int64_t len = inputs[i].shape[start + static_cast<std::size_t>(k)];
      if (len == 1) continue;
      if (L[j] != 1 && L[j] != len) {
        const auto& a = inputs[static_cast<std::size_t>(from[j])].shape;
        throw ShapeError("the dims '...' stands for do not broadcast: " + shape_str(a) + " in " +
                         operand_name(static_cast<std::size_t>(from[j])) + " and " + shape_str(inputs[i].shape) +
                         " in " + operand_name(i) + " (dim " + str(static_cast<std::int64_t>(start) + k) + ": " +
                         str(L[j]) + " vs " + str(len) + ")");
      }
      L[j] = len;
      from[j] = static_cast<int>(i);
    }
  }
  return L;
}

/// Adds an atom to an operand's view; an axis already there takes the diagonal.
void add_atom(AtomView& v, AtomDim atom) {
  const int i = v.index_of(atom.id);
  if (i < 0) {
    v.dims.push_back(std::move(atom));
    return;
  }
  v.dims[static_cast<std::size_t>(i)].stride = checked_add(v.dims[static_cast<std::size_t>(i)].stride, atom.stride);
}

std::vector<OutDim> resolve_output(const ast::Operand& out, const std::vector<AxisId>& ellipsis, AxisTable& table) {
  std::vector<OutDim> outs;
  auto need = [&](const std::string& n) {
    const AxisId id = table.find(n);
    if (id < 0) throw ShapeError("output axis " + n + " is in no operand");
    return id;
  };
  auto one = [&](std::int64_t length) {
    if (length != 1) throw ShapeError("anonymous axes other than 1 are not supported in an einsum output");
    return anonymous(table, 1);
  };
  for (const ast::Term& t : out.terms) {
    if (const auto* n = std::get_if<ast::Named>(&t)) {
      const AxisId id = need(n->name);
      outs.push_back({{id}, {id}});
    } else if (std::holds_alternative<ast::Ellipsis>(t)) {
      for (AxisId id : ellipsis) outs.push_back({{id}, {id}});
    } else if (const auto* g = std::get_if<ast::Group>(&t)) {
      OutDim o;
      for (const ast::Atom& a : g->atoms) {
        if (const auto* gn = std::get_if<ast::Named>(&a)) {
          const AxisId id = need(gn->name);
          o.atoms.push_back(id);
          o.name.push_back(id);
        } else if (std::holds_alternative<ast::Ellipsis>(a)) {
          o.atoms.insert(o.atoms.end(), ellipsis.begin(), ellipsis.end());
          o.name.insert(o.name.end(), ellipsis.begin(), ellipsis.end());
        } else {
          o.name.push_back(one(std::get<ast::Anonymous>(a).length));
        }
      }
      outs.push_back(std::move(o));
    } else if (const auto* a = std::get_if<ast::Anonymous>(&t)) {
      outs.push_back({{}, {one(a->length)}});
    } else {
      outs.push_back({{}, {}});
    }
  }
  return outs;
}

}  // namespace

MultiResolution resolve_multi(const ast::Pattern& p, std::span<const Layout> inputs, const AxisLengths& lengths) {
  if (p.operands.size() != inputs.size())
    throw ShapeError("the pattern '" + p.text + "' has " + str(static_cast<std::int64_t>(p.operands.size())) +
                     " operands but " + str(static_cast<std::int64_t>(inputs.size())) + " tensors were given");
  Given given(lengths);
  MultiLengths lens(given);
  std::vector<int> e;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    e.push_back(ellipsis_dims(p.operands[i], inputs[i].dim(), operand_name(i), inputs[i].shape));
  const Shape L = broadcast_ellipsis(p, inputs, e);
  const int E = static_cast<int>(L.size());
  // Pass 1: plain named dims fix lengths (and catch conflicts, diagonals included).
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::size_t d = 0;
    for (const ast::Term& t : p.operands[i].terms) {
      if (const auto* n = std::get_if<ast::Named>(&t))
        lens.set(n->name, inputs[i].shape[d], Where{static_cast<int>(i), static_cast<int>(d)}, true);
      d += is_ellipsis(t) ? static_cast<std::size_t>(e[i]) : 1;
    }
  }
  // Pass 2: operands as atoms, each named axis one id; a group's unknown part is inferred
  // from the rest.
  MultiResolution r;
  const std::vector<AxisId> ellipsis = ellipsis_axes(r.axes, L);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    AtomView v;
    v.buffer = static_cast<int>(i);
    std::vector<DimAxes> dims;
    const bool scalar = inputs[i].dim() == 0;  // a 0-d operand: its terms are all "()" (or none)
    std::size_t d = 0;
    for (const ast::Term& t : p.operands[i].terms) {
      const Where here{static_cast<int>(i), static_cast<int>(d)};
      const std::int64_t len = d < inputs[i].shape.size() ? inputs[i].shape[d] : scalar ? 1 : 0;
      const std::int64_t stride = d < inputs[i].strides.size() ? inputs[i].strides[d] : 0;
      if (const auto* n = std::get_if<ast::Named>(&t)) {
        const AxisId id = r.axes.named(n->name, len);
        add_atom(v, {id, len, stride});
        dims.push_back({id});
      } else if (std::holds_alternative<ast::Ellipsis>(t)) {
        for (int k = 0; k < e[i]; ++k, ++d) {
          const auto j = static_cast<std::size_t>(E - e[i] + k);
          const bool bcast = inputs[i].shape[d] == 1 && L[j] != 1;
          add_atom(v, {ellipsis[j], L[j], bcast ? 0 : inputs[i].strides[d]});
          dims.push_back({ellipsis[j]});
        }
        continue;
      } else if (const auto* g = std::get_if<ast::Group>(&t)) {
        const auto parts = resolve_group(*g, len, here.text(), [&](const std::string& n) { return lens.find(n); });
        std::vector<AtomDim> ids;
        DimAxes names;
        for (const Part& part : parts) {
          AxisId id = 0;
          if (part.name.empty()) {
            id = anonymous(r.axes, part.length);
          } else {
            lens.set(part.name, part.length, here);
            id = r.axes.named(part.name, part.length);
          }
          ids.push_back({id, part.length, 0});
          names.push_back(id);
        }
        std::vector<AtomDim> split;
        split_group(split, ids, r.axes, stride);
        for (AtomDim& a : split) add_atom(v, std::move(a));
        dims.push_back(names);
      } else {
        if (len != 1) throw ShapeError(here.text() + " has length " + str(len) + " but the pattern gives it length 1");
        if (std::holds_alternative<ast::Anonymous>(t)) dims.push_back({anonymous(r.axes, 1)});
        else if (!scalar) dims.push_back({});
      }
      ++d;
    }
    // Each operand as the planners see it, its '...' broadcast, is counted once here with
    // numpy's rule: an operand of a few elements can broadcast past int64 (3037000500 x 1 x 1
    // against 1 x 2 x 2^40), and every count made from its atoms (a group merged for a GEMM,
    // a loop's length) is then a product of a subset of lengths that fits (fuzz_plan: two
    // signed overflows in contract.cpp before this check).
    try {
      (void)v.numel();
    } catch (const ShapeError& err) {
      throw ShapeError(operand_name(i) + " " + shape_str(inputs[i].shape) +
                       (E > 0 ? " with '...' broadcast to " + shape_str(L) : std::string()) + ": " + err.what());
    }
    r.inputs.push_back(std::move(v));
    r.input_dims.push_back(std::move(dims));
  }
  r.output = resolve_output(p.output, ellipsis, r.axes);
  given.check_all_used(p.text);
  return r;
}

}  // namespace einexpr::detail
