// Resolution: pattern + input layouts + given lengths -> every axis's length and each
// operand as atoms. Every mismatch is a ShapeError naming the axis, both sizes and where.
#include "resolve.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

#include "einexpr/runtime/error.hpp"

namespace einexpr::detail {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

bool is_ellipsis(const ast::Term& t) { return std::holds_alternative<ast::Ellipsis>(t); }

/// The number of dims `...` stands for in an operand of `rank` dims.
int ellipsis_dims(const ast::Operand& operand, int rank, const std::string& where, const Shape& shape) {
  const auto fixed = static_cast<int>(std::count_if(operand.terms.begin(), operand.terms.end(),
                                                    [](const ast::Term& t) { return !is_ellipsis(t); }));
  const bool has = static_cast<int>(operand.terms.size()) != fixed;
  const std::string text = ast::to_string(operand);
  if (has && rank < fixed)
    throw ShapeError(where + " has " + str(rank) + " dims (shape " + shape_str(shape) + ") but '" + text +
                     "' needs at least " + str(fixed));
  if (!has && rank != fixed)
    throw ShapeError(where + " has " + str(rank) + " dims (shape " + shape_str(shape) + ") but '" + text +
                     "' names " + str(fixed));
  return has ? rank - fixed : 0;
}

/// Given lengths by name: each once, each >= 0, and each used somewhere.
class Given {
 public:
  explicit Given(const AxisLengths& lengths) {
    for (const auto& [name, len] : lengths) {
      if (len < 0) throw ShapeError("the length of axis " + name + " must be >= 0 (got " + str(len) + ")");
      if (!map_.emplace(name, len).second) throw ShapeError("the length of axis " + name + " is given twice");
    }
  }
  const std::int64_t* find(const std::string& name) {
    auto it = map_.find(name);
    if (it == map_.end()) return nullptr;
    used_.push_back(name);
    return &it->second;
  }
  void check_all_used(const std::string& pattern) const {
    for (const auto& [name, len] : map_)
      if (std::find(used_.begin(), used_.end(), name) == used_.end())
        throw ShapeError("the length of axis " + name + " is given (" + str(len) + ") but '" + pattern +
                         "' does not use " + name);
  }

 private:
  std::map<std::string, std::int64_t, std::less<>> map_;
  std::vector<std::string> used_;
};

/// Unique names for anonymous axes: "3", "3'1", "3'2", ...
class AnonymousNames {
 public:
  std::string next(std::int64_t length) {
    const int n = count_[length]++;
    return n == 0 ? str(length) : str(length) + "'" + str(n);
  }

 private:
  std::map<std::int64_t, int> count_;
};

std::string group_text(const ast::Group& g) { return ast::to_string(ast::Term{g}); }

/// Splits dim (length len, stride) into the group's atoms, whose lengths are all known.
void split_group(std::vector<AtomDim>& atoms, const std::vector<AtomDim>& parts, std::int64_t stride) {
  std::vector<AtomDim> out = parts;
  std::int64_t s = stride;
  for (std::size_t k = out.size(); k-- > 0;) {
    out[k].stride = s;
    s = checked_mul(s, out[k].length);
  }
  for (const AtomDim& a : out)
    if (a.length != 1 || std::isdigit(static_cast<unsigned char>(a.name[0])) == 0) atoms.push_back(a);
}

/// Resolves the lengths of a group's atoms from `known` (names) and their numbers, inferring
/// at most one; checks that their product is the dim's length.
std::vector<AtomDim> resolve_group(const ast::Group& g, std::int64_t len, const std::string& where,
                                   const std::function<const std::int64_t*(const std::string&)>& known,
                                   AnonymousNames& anon) {
  std::vector<AtomDim> parts;
  std::int64_t product = 1;
  int unknown = -1;
  std::vector<std::string> unknown_names;
  for (const ast::Atom& atom : g.atoms) {
    if (const auto* n = std::get_if<ast::Named>(&atom)) {
      if (const std::int64_t* l = known(n->name)) {
        parts.push_back({n->name, *l, 0});
        product = checked_mul(product, *l);
      } else {
        unknown = static_cast<int>(parts.size());
        unknown_names.push_back(n->name);
        parts.push_back({n->name, -1, 0});
      }
    } else if (const auto* a = std::get_if<ast::Anonymous>(&atom)) {
      parts.push_back({anon.next(a->length), a->length, 0});
      product = checked_mul(product, a->length);
    } else {
      throw ShapeError("'...' inside " + group_text(g) + " of " + where + " is not supported on this side");
    }
  }
  const std::string g_text = group_text(g);
  if (unknown_names.size() > 1) {
    std::string names;
    for (std::size_t i = 0; i < unknown_names.size(); ++i)
      names += (i == 0 ? "" : i + 1 == unknown_names.size() ? " and " : ", ") + unknown_names[i];
    throw ShapeError("cannot infer the lengths of " + names + " in " + g_text + " (" + where + ", length " +
                     str(len) + "): give all but one of them");
  }
  if (unknown >= 0) {
    if (product == 0 || len % product != 0)
      throw ShapeError(where + " has length " + str(len) + ", which " + g_text + " cannot split: " + str(len) +
                       " is not divisible by " + str(product));
    parts[static_cast<std::size_t>(unknown)].length = len / product;
  } else if (product != len) {
    std::string lens;
    for (const AtomDim& p : parts) lens += (lens.empty() ? "" : "·") + str(p.length);
    throw ShapeError(where + " has length " + str(len) + " but " + g_text + " = " + lens + " = " + str(product));
  }
  return parts;
}

}  // namespace

std::vector<std::string> flatten(const std::vector<OutDim>& outs) {
  std::vector<std::string> all;
  for (const OutDim& o : outs) all.insert(all.end(), o.atoms.begin(), o.atoms.end());
  return all;
}


namespace {

/// The right side of rearrange / reduce / repeat as output dims; repeat's new atoms get
/// their lengths from `given` (or their number) and stride 0.
std::vector<OutDim> resolve_right(const ast::Operand& right, Op op, const std::vector<AtomDim>& left_atoms,
                                  int ellipsis, Given& given, AnonymousNames& anon,
                                  std::vector<AtomDim>& new_atoms) {
  auto known = [&](const std::string& n) {
    return std::any_of(left_atoms.begin(), left_atoms.end(), [&](const AtomDim& a) { return a.name == n; });
  };
  auto named_atom = [&](const std::string& n) -> std::string {
    if (known(n)) return n;
    if (op != Op::repeat) throw ShapeError("axis " + n + " is on the right side only");
    const std::int64_t* len = given.find(n);
    if (len == nullptr)
      throw ShapeError("repeat: the length of new axis " + n + " is not given (pass {\"" + n + "\", length})");
    if (std::none_of(new_atoms.begin(), new_atoms.end(), [&](const AtomDim& a) { return a.name == n; }))
      new_atoms.push_back({n, *len, 0});
    return n;
  };
  auto anonymous_atom = [&](std::int64_t len) {
    std::string n = anon.next(len);
    new_atoms.push_back({n, len, 0});
    return n;
  };
  std::vector<OutDim> outs;
  for (const ast::Term& t : right.terms) {
    if (const auto* n = std::get_if<ast::Named>(&t)) {
      outs.push_back({{named_atom(n->name)}, {n->name}});
    } else if (const auto* a = std::get_if<ast::Anonymous>(&t)) {
      if (a->length == 1) outs.push_back({{}, {"1"}});
      else outs.push_back({{anonymous_atom(a->length)}, {str(a->length)}});
    } else if (std::holds_alternative<ast::Unit>(t)) {
      outs.push_back({{}, {}});
    } else if (std::holds_alternative<ast::Ellipsis>(t)) {
      for (int j = 0; j < ellipsis; ++j) outs.push_back({{"…" + str(j)}, {"…" + str(j)}});
    } else {
      OutDim o;
      for (const ast::Atom& atom : std::get<ast::Group>(t).atoms) {
        if (const auto* gn = std::get_if<ast::Named>(&atom)) {
          o.atoms.push_back(named_atom(gn->name));
          o.name.push_back(gn->name);
        } else if (const auto* ga = std::get_if<ast::Anonymous>(&atom)) {
          if (ga->length != 1) o.atoms.push_back(anonymous_atom(ga->length));
          o.name.push_back(str(ga->length));
        } else {
          for (int j = 0; j < ellipsis; ++j) {
            o.atoms.push_back("…" + str(j));
            o.name.push_back("…" + str(j));
          }
        }
      }
      outs.push_back(std::move(o));
    }
  }
  return outs;
}

}  // namespace

SingleResolution resolve_single(const ast::Pattern& pattern, Op op, const Layout& input,
                                const AxisLengths& lengths) {
  EINEXPR_ASSERT(pattern.operands.size() == 1, "resolve_single: one operand expected");
  const ast::Operand& left = pattern.operands[0];
  const int e = ellipsis_dims(left, input.dim(), "the input", input.shape);
  Given given(lengths);
  AnonymousNames anon;
  SingleResolution r;
  r.input.buffer = 0;
  std::vector<AtomDim>& atoms = r.input.dims;
  std::size_t d = 0;
  for (const ast::Term& t : left.terms) {
    const std::string where = "dim " + str(static_cast<std::int64_t>(d)) + " of the input";
    const std::int64_t len = d < input.shape.size() ? input.shape[d] : 0;
    const std::int64_t stride = d < input.strides.size() ? input.strides[d] : 0;
    if (const auto* n = std::get_if<ast::Named>(&t)) {
      if (const std::int64_t* g = given.find(n->name); g != nullptr && *g != len)
        throw ShapeError("axis " + n->name + " is " + str(len) + " in the input (" + where + ") but " + str(*g) +
                         " was given");
      atoms.push_back({n->name, len, stride});
      r.input_axes.push_back({n->name});
    } else if (const auto* a = std::get_if<ast::Anonymous>(&t)) {
      if (len != a->length)
        throw ShapeError("anonymous axis " + str(a->length) + " does not match " + where + ", of length " + str(len));
      if (a->length != 1) atoms.push_back({anon.next(a->length), len, stride});
      r.input_axes.push_back({str(a->length)});
    } else if (std::holds_alternative<ast::Unit>(t)) {
      if (len != 1) throw ShapeError("() stands for a dim of length 1 but " + where + " has length " + str(len));
      r.input_axes.push_back({});
    } else if (std::holds_alternative<ast::Ellipsis>(t)) {
      for (int j = 0; j < e; ++j, ++d) {
        atoms.push_back({"…" + str(j), input.shape[d], input.strides[d]});
        r.input_axes.push_back({"…" + str(j)});
      }
      continue;
    } else {
      const auto& g = std::get<ast::Group>(t);
      const auto parts = resolve_group(g, len, where, [&](const std::string& n) { return given.find(n); }, anon);
      split_group(atoms, parts, stride);
      AxisName names;
      for (const AtomDim& p : parts) names.push_back(display_name(p.name));
      r.input_axes.push_back(names);
    }
    ++d;
  }
  r.output = resolve_right(pattern.output, op, atoms, e, given, anon, r.new_atoms);
  given.check_all_used(pattern.text);
  return r;
}

namespace {

std::string operand_name(std::size_t i) { return "operand " + str(static_cast<std::int64_t>(i + 1)); }

/// Where a length was seen: dim `dim` of operand `operand`, or what `label` says ("given").
/// Kept as numbers and spelled out only for an error, since every call resolves.
struct Where {
  int operand = -1, dim = -1;
  const char* label = nullptr;
  std::string str() const {
    return label ? label : operand_name(static_cast<std::size_t>(operand)) + " (dim " + einexpr::detail::str(dim) + ")";
  }
};

/// Lengths of named axes as the tensors and the given lengths say, with where each came from.
class MultiLengths {
 public:
  explicit MultiLengths(Given& given) : given_(given) {}
  const std::int64_t* find(const std::string& name) {
    if (auto it = map_.find(name); it != map_.end()) return &it->second.length;
    if (const std::int64_t* g = given_.find(name)) return &map_.emplace(name, Seen{*g, Where{-1, -1, "given"}}).first->second.length;
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
      throw ShapeError("axis " + name + " is " + str(other.length) + " in " + other.where.str() + " but " + str(len) +
                       " in " + where.str());
    }
    if (g != nullptr && *g != len)
      throw ShapeError("axis " + name + " is " + str(len) + " in " + where.str() + " but " + str(*g) + " was given");
  }
  std::map<std::string, std::int64_t, std::less<>> all() const {
    std::map<std::string, std::int64_t, std::less<>> out;
    for (const auto& [n, v] : map_) out.emplace(n, v.length);
    return out;
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

/// Adds an atom to an operand's view; a name already there takes the diagonal.
void add_atom(AtomView& v, AtomDim atom) {
  const int i = v.index_of(atom.name);
  if (i < 0) {
    v.dims.push_back(std::move(atom));
    return;
  }
  v.dims[static_cast<std::size_t>(i)].stride = checked_add(v.dims[static_cast<std::size_t>(i)].stride, atom.stride);
}

std::vector<OutDim> resolve_output(const ast::Operand& out, int E, MultiLengths& lens) {
  std::vector<OutDim> outs;
  auto need = [&](const std::string& n) {
    if (lens.find(n) == nullptr) throw ShapeError("output axis " + n + " is in no operand");
    return n;
  };
  for (const ast::Term& t : out.terms) {
    if (const auto* n = std::get_if<ast::Named>(&t)) {
      outs.push_back({{need(n->name)}, {n->name}});
    } else if (std::holds_alternative<ast::Ellipsis>(t)) {
      for (int j = 0; j < E; ++j) outs.push_back({{"…" + str(j)}, {"…" + str(j)}});
    } else if (const auto* g = std::get_if<ast::Group>(&t)) {
      OutDim o;
      for (const ast::Atom& a : g->atoms) {
        if (const auto* gn = std::get_if<ast::Named>(&a)) {
          o.atoms.push_back(need(gn->name));
          o.name.push_back(gn->name);
        } else if (std::holds_alternative<ast::Ellipsis>(a)) {
          for (int j = 0; j < E; ++j) {
            o.atoms.push_back("…" + str(j));
            o.name.push_back("…" + str(j));
          }
        } else if (std::get<ast::Anonymous>(a).length != 1) {
          throw ShapeError("anonymous axes other than 1 are not supported in an einsum output");
        }
      }
      outs.push_back(std::move(o));
    } else if (const auto* a = std::get_if<ast::Anonymous>(&t)) {
      if (a->length != 1) throw ShapeError("anonymous axes other than 1 are not supported in an einsum output");
      outs.push_back({{}, {"1"}});
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
  // Pass 2: operands as atoms; a group's unknown part is inferred from the rest.
  MultiResolution r;
  AnonymousNames anon;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    AtomView v;
    v.buffer = static_cast<int>(i);
    std::vector<AxisName> axes;
    std::size_t d = 0;
    for (const ast::Term& t : p.operands[i].terms) {
      const Where here{static_cast<int>(i), static_cast<int>(d)};
      const std::int64_t len = d < inputs[i].shape.size() ? inputs[i].shape[d] : 0;
      const std::int64_t stride = d < inputs[i].strides.size() ? inputs[i].strides[d] : 0;
      if (const auto* n = std::get_if<ast::Named>(&t)) {
        add_atom(v, {n->name, len, stride});
        axes.push_back({n->name});
      } else if (std::holds_alternative<ast::Ellipsis>(t)) {
        for (int k = 0; k < e[i]; ++k, ++d) {
          const auto j = static_cast<std::size_t>(E - e[i] + k);
          const bool bcast = inputs[i].shape[d] == 1 && L[j] != 1;
          add_atom(v, {"…" + str(static_cast<std::int64_t>(j)), L[j], bcast ? 0 : inputs[i].strides[d]});
          axes.push_back({"…" + str(static_cast<std::int64_t>(j))});
        }
        continue;
      } else if (const auto* g = std::get_if<ast::Group>(&t)) {
        const auto parts = resolve_group(*g, len, here.str(), [&](const std::string& n) { return lens.find(n); }, anon);
        AxisName names;
        for (const AtomDim& part : parts) {
          if (!std::isdigit(static_cast<unsigned char>(part.name[0]))) lens.set(part.name, part.length, here);
          names.push_back(display_name(part.name));
        }
        std::vector<AtomDim> split;
        split_group(split, parts, stride);
        for (AtomDim& a : split) add_atom(v, std::move(a));
        axes.push_back(names);
      } else {
        if (len != 1) throw ShapeError(here.str() + " has length " + str(len) + " but the pattern gives it length 1");
        axes.push_back(std::holds_alternative<ast::Unit>(t) ? AxisName{} : AxisName{"1"});
      }
      ++d;
    }
    r.inputs.push_back(std::move(v));
    r.input_axes.push_back(std::move(axes));
  }
  for (int j = 0; j < E; ++j) lens.set("…" + str(j), L[static_cast<std::size_t>(j)], Where{-1, -1, "'...'"});
  r.output = resolve_output(p.output, E, lens);
  given.check_all_used(p.text);
  r.lengths = lens.all();
  return r;
}

}  // namespace einexpr::detail
