// Resolution of rearrange, reduce and repeat: pattern + input layout + given lengths -> the
// AxisTable and the input as atoms. Every mismatch is a ShapeError naming the axis, both
// sizes and where.
#include <algorithm>
#include <functional>

#include "einexpr/runtime/error.hpp"
#include "plan/resolve.hpp"
#include "plan/resolve_common.hpp"

namespace einexpr::detail {

using namespace resolving;

namespace {

/// The right side of rearrange / reduce / repeat as output dims; repeat's new atoms get
/// their lengths from `given` (or their number) and stride 0.
class RightSide {
 public:
  RightSide(SingleResolution& r, Op op, Given& given, const std::vector<AxisId>& ellipsis)
      : r_(r), op_(op), given_(given), ellipsis_(ellipsis) {}

  std::vector<OutDim> resolve(const ast::Operand& right) {
    std::vector<OutDim> outs;
    for (const ast::Term& t : right.terms) {
      if (const auto* n = std::get_if<ast::Named>(&t)) {
        const AxisId id = named(n->name);
        outs.push_back({{id}, {id}});
      } else if (const auto* a = std::get_if<ast::Anonymous>(&t)) {
        const AxisId id = anonymous_atom(a->length);
        outs.push_back({a->length == 1 ? Axes{} : Axes{id}, {id}});
      } else if (std::holds_alternative<ast::Unit>(t)) {
        outs.push_back({{}, {}});
      } else if (std::holds_alternative<ast::Ellipsis>(t)) {
        for (AxisId id : ellipsis_) outs.push_back({{id}, {id}});
      } else {
        outs.push_back(group(std::get<ast::Group>(t)));
      }
    }
    return outs;
  }

 private:
  OutDim group(const ast::Group& g) {
    OutDim o;
    for (const ast::Atom& atom : g.atoms) {
      if (const auto* gn = std::get_if<ast::Named>(&atom)) {
        const AxisId id = named(gn->name);
        o.atoms.push_back(id);
        o.name.push_back(id);
      } else if (const auto* ga = std::get_if<ast::Anonymous>(&atom)) {
        const AxisId id = anonymous_atom(ga->length);
        if (ga->length != 1) o.atoms.push_back(id);
        o.name.push_back(id);
      } else {
        o.atoms.insert(o.atoms.end(), ellipsis_.begin(), ellipsis_.end());
        o.name.insert(o.name.end(), ellipsis_.begin(), ellipsis_.end());
      }
    }
    return o;
  }

  AxisId named(const std::string& n) {
    if (const AxisId id = r_.axes.find(n); id >= 0) return id;  // on the left, or new and seen before
    if (op_ != Op::repeat) throw ShapeError("axis " + n + " is on the right side only");
    const std::int64_t* len = given_.find(n);
    if (len == nullptr)
      throw ShapeError("repeat: the length of new axis " + n + " is not given (pass {\"" + n + "\", length})");
    const AxisId fresh = r_.axes.add(Axis{n, *len, AxisKind::named});
    r_.new_atoms.push_back({fresh, *len, 0});
    return fresh;
  }

  AxisId anonymous_atom(std::int64_t len) {
    const AxisId id = anonymous(r_.axes, len);
    if (len != 1) r_.new_atoms.push_back({id, len, 0});
    return id;
  }

  SingleResolution& r_;
  Op op_;
  Given& given_;
  const std::vector<AxisId>& ellipsis_;
};

}  // namespace

SingleResolution resolve_single(const ast::Pattern& pattern, Op op, const Layout& input,
                                const AxisLengths& lengths) {
  EINEXPR_ASSERT(pattern.operands.size() == 1, "resolve_single: one operand expected");
  const ast::Operand& left = pattern.operands[0];
  const int e = ellipsis_dims(left, input.dim(), "the input", input.shape);
  const bool scalar = input.dim() == 0;  // a 0-d input: its terms are all "()" (or none)
  Given given(lengths);
  SingleResolution r;
  r.input.buffer = 0;
  std::vector<AtomDim>& atoms = r.input.dims;
  std::vector<AxisId> ellipsis;
  std::size_t d = 0;
  for (const ast::Term& t : left.terms) {
    const std::string where = "dim " + str(static_cast<std::int64_t>(d)) + " of the input";
    const std::int64_t len = d < input.shape.size() ? input.shape[d] : scalar ? 1 : 0;
    const std::int64_t stride = d < input.strides.size() ? input.strides[d] : 0;
    if (const auto* n = std::get_if<ast::Named>(&t)) {
      if (const std::int64_t* g = given.find(n->name); g != nullptr && *g != len)
        throw ShapeError("axis " + n->name + " is " + str(len) + " in the input (" + where + ") but " + str(*g) +
                         " was given");
      const AxisId id = r.axes.add(Axis{n->name, len, AxisKind::named});
      atoms.push_back({id, len, stride});
      r.input_dims.push_back({id});
    } else if (const auto* a = std::get_if<ast::Anonymous>(&t)) {
      if (len != a->length)
        throw ShapeError("anonymous axis " + str(a->length) + " does not match " + where + ", of length " + str(len));
      const AxisId id = anonymous(r.axes, a->length);
      if (a->length != 1) atoms.push_back({id, len, stride});
      r.input_dims.push_back({id});
    } else if (std::holds_alternative<ast::Unit>(t)) {
      if (len != 1) throw ShapeError("() stands for a dim of length 1 but " + where + " has length " + str(len));
      if (!scalar) r.input_dims.push_back({});
    } else if (std::holds_alternative<ast::Ellipsis>(t)) {
      ellipsis = ellipsis_axes(r.axes, Shape(input.shape.begin() + static_cast<std::ptrdiff_t>(d),
                                             input.shape.begin() + static_cast<std::ptrdiff_t>(d) + e));
      for (int j = 0; j < e; ++j, ++d) {
        atoms.push_back({ellipsis[static_cast<std::size_t>(j)], input.shape[d], input.strides[d]});
        r.input_dims.push_back({ellipsis[static_cast<std::size_t>(j)]});
      }
      continue;
    } else {
      const auto& g = std::get<ast::Group>(t);
      const auto parts = resolve_group(g, len, where, [&](const std::string& n) { return given.find(n); });
      std::vector<AtomDim> ids;
      DimAxes names;
      for (const Part& p : parts) {
        const AxisId id = p.name.empty() ? anonymous(r.axes, p.length) : r.axes.add(Axis{p.name, p.length, AxisKind::named});
        ids.push_back({id, p.length, 0});
        names.push_back(id);
      }
      split_group(atoms, ids, r.axes, stride);
      r.input_dims.push_back(names);
    }
    ++d;
  }
  r.output = RightSide(r, op, given, ellipsis).resolve(pattern.output);
  given.check_all_used(pattern.text);
  return r;
}

}  // namespace einexpr::detail
