// Resolution: pattern + input layouts + given lengths -> every axis's length and each
// operand as atoms. Every mismatch is a ShapeError naming the axis, both sizes and where.
#include "plan/resolve.hpp"
#include "plan/resolve_common.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

#include "einexpr/runtime/error.hpp"

namespace einexpr::detail {

using namespace resolving;

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

}  // namespace einexpr::detail
