#pragma once
// Private to codegen's resolution (resolve.cpp, resolve_multi.cpp): the helpers both share.
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "einexpr/runtime/error.hpp"
#include "plan/resolve.hpp"

namespace einexpr::detail::resolving {

inline std::string str(std::int64_t v) { return std::to_string(v); }

inline bool is_ellipsis(const ast::Term& t) { return std::holds_alternative<ast::Ellipsis>(t); }

/// An operand written only with unit terms, "()" (or nothing): it also takes a 0-d tensor.
inline bool unit_only(const ast::Operand& operand) {
  return std::all_of(operand.terms.begin(), operand.terms.end(),
                     [](const ast::Term& t) { return std::holds_alternative<ast::Unit>(t); });
}

/// The number of dims `...` stands for in an operand of `rank` dims.
inline int ellipsis_dims(const ast::Operand& operand, int rank, const std::string& where, const Shape& shape) {
  const auto fixed = static_cast<int>(std::count_if(operand.terms.begin(), operand.terms.end(),
                                                    [](const ast::Term& t) { return !is_ellipsis(t); }));
  const bool has = static_cast<int>(operand.terms.size()) != fixed;
  const std::string text = ast::to_string(operand);
  if (has && rank < fixed)
    throw ShapeError(where + " has " + str(rank) + " dims (shape " + shape_str(shape) + ") but '" + text +
                     "' needs at least " + str(fixed));
  if (!has && rank != fixed && !(rank == 0 && unit_only(operand)))
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

/// A new anonymous axis (every occurrence of "3" is its own axis).
inline AxisId anonymous(AxisTable& table, std::int64_t length) {
  return table.add(Axis{str(length), length, AxisKind::anonymous});
}

/// The ids of the dims '...' stands for, "…0", "…1", ..., added with these lengths.
inline std::vector<AxisId> ellipsis_axes(AxisTable& table, const Shape& lengths) {
  std::vector<AxisId> ids;
  for (std::size_t j = 0; j < lengths.size(); ++j)
    ids.push_back(table.add(Axis{"…" + str(static_cast<std::int64_t>(j)), lengths[j], AxisKind::ellipsis}));
  return ids;
}

inline std::string group_text(const ast::Group& g) { return ast::to_string(ast::Term{g}); }

/// One atom of a group, its length resolved.
struct Part {
  const ast::Atom* atom;
  std::string name;      // a named atom's name, else empty
  std::int64_t length;
};

/// Splits a dim (stride `stride`) into the group's atoms (ids given, lengths known); an
/// anonymous 1 names the dim but is no atom.
inline void split_group(std::vector<AtomDim>& atoms, const std::vector<AtomDim>& parts, const AxisTable& table,
                        std::int64_t stride) {
  std::vector<AtomDim> out = parts;
  std::int64_t s = stride;
  for (std::size_t k = out.size(); k-- > 0;) {
    out[k].stride = s;
    s = checked_mul(s, out[k].length);
  }
  for (const AtomDim& a : out)
    if (a.length != 1 || table[a.id].kind != AxisKind::anonymous) atoms.push_back(a);
}

/// Resolves the lengths of a group's atoms from `known` (names) and their numbers, inferring
/// at most one; checks that their product is the dim's length.
inline std::vector<Part> resolve_group(const ast::Group& g, std::int64_t len, const std::string& where,
                                       const std::function<const std::int64_t*(const std::string&)>& known) {
  std::vector<Part> parts;
  std::int64_t product = 1;
  int unknown = -1;
  std::vector<std::string> unknown_names;
  for (const ast::Atom& atom : g.atoms) {
    if (const auto* n = std::get_if<ast::Named>(&atom)) {
      if (const std::int64_t* l = known(n->name)) {
        parts.push_back({&atom, n->name, *l});
        product = checked_mul(product, *l);
      } else {
        unknown = static_cast<int>(parts.size());
        unknown_names.push_back(n->name);
        parts.push_back({&atom, n->name, -1});
      }
    } else if (const auto* a = std::get_if<ast::Anonymous>(&atom)) {
      parts.push_back({&atom, "", a->length});
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
    for (const Part& p : parts) lens += (lens.empty() ? "" : "·") + str(p.length);
    throw ShapeError(where + " has length " + str(len) + " but " + g_text + " = " + lens + " = " + str(product));
  }
  return parts;
}

}  // namespace einexpr::detail::resolving
