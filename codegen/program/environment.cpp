// The axis environment: the program's axis definitions, replaced by overrides and by the
// shapes of given tensors, each length remembering where it came from.
#include "program/environment.hpp"

#include <variant>

#include "einexpr/parser/program.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::program_detail {

namespace {

std::string line_of(const ast::Source& s) { return "line " + std::to_string(s.line); }

std::string names_of(const ast::Program& p, ast::TensorKind kind) {
  std::string s;
  for (const ast::Item& item : p.items)
    if (const auto* t = std::get_if<ast::TensorDecl>(&item); t && t->kind == kind)
      s += (s.empty() ? "" : ", ") + t->name.name;
  return s.empty() ? "none" : s;
}

}  // namespace

std::string dim_text(const ast::Dim& dim) {
  std::string axes;
  for (const ast::Identifier& a : dim.axes) axes += (axes.empty() ? "" : " ") + a.name;
  return dim.axes.size() == 1 ? axes : "(" + axes + ")";
}

std::string dims_text(const ast::TensorDecl& decl) {
  std::string s;
  for (const ast::Dim& dim : decl.dims) s += (s.empty() ? "" : " ") + dim_text(dim);
  return s;
}

std::int64_t dim_length(const ast::Dim& dim, const Environment& env) {
  std::int64_t n = 1;
  for (const ast::Identifier& a : dim.axes) n = checked_mul(n, env.length(a.name));
  return n;
}

Environment::Environment(const ast::Program& program, const ProgramOptions& options) : program_(program) {
  for (const ast::AxisDef* d : ast::axis_definitions(program)) {
    order_.push_back(d->name.name);
    axes_[d->name.name] = {d->length, line_of(d->name.source), d->name.source};
  }
  override_axes(options.axes);
  for (const GivenTensor& g : options.given) {
    if (given_.count(g.name)) throw Error("tensor '" + g.name + "' is given twice");
    bind_given(g);
    given_[g.name] = &g;
  }
  infer_factors(options.given);
  for (const GivenTensor& g : options.given) check_given(g);
}

const AxisValue& Environment::at(const std::string& axis) const {
  const auto it = axes_.find(axis);
  if (it == axes_.end()) throw InternalError("program: axis '" + axis + "' has no length", __FILE__, __LINE__);
  return it->second;
}

AxisLengths Environment::lengths() const {
  AxisLengths out;
  for (const std::string& name : order_) out.emplace_back(name, axes_.at(name).length);
  return out;
}

void Environment::override_axes(const AxisLengths& axes) {
  for (const auto& [name, length] : axes) {
    const auto it = axes_.find(name);
    if (it == axes_.end()) {
      std::string known;
      for (const std::string& n : order_) known += (known.empty() ? "" : ", ") + n;
      throw Error("unknown axis '" + name + "' in " + name + "=" + std::to_string(length) +
                  ": the program's axes are " + known);
    }
    if (length <= 0)
      throw Error("axis '" + name + "' given as " + name + "=" + std::to_string(length) +
                  ": an axis length is positive");
    it->second.length = length;
    it->second.origin = "given as " + name + "=" + std::to_string(length);
    it->second.fixed = true;
  }
}

const ast::TensorDecl& Environment::declaration(const std::string& name) const {
  const ast::Item* item = ast::find_tensor(program_, name);
  const auto* decl = item ? std::get_if<ast::TensorDecl>(item) : nullptr;
  if (decl == nullptr)
    throw Error("'" + name + "' names no input or param of the program" +
                (item ? std::string(": the program computes it") : std::string()) +
                " (inputs: " + names_of(program_, ast::TensorKind::input) +
                "; params: " + names_of(program_, ast::TensorKind::param) + ")");
  return *decl;
}

// Each dim of one axis takes the given length; an override or another given tensor that
// says otherwise is an error naming both.
void Environment::bind_given(const GivenTensor& g) {
  const ast::TensorDecl& decl = declaration(g.name);
  const std::string what = std::string(ast::name(decl.kind)) + " " + g.name + ": " + dims_text(decl);
  if (g.shape.size() != decl.dims.size())
    throw ProgramError(g.origin + " has " + std::to_string(g.shape.size()) + " dims " + shape_str(g.shape) + " but " +
                           ast::name(decl.kind) + " '" + g.name + "' is declared with " +
                           std::to_string(decl.dims.size()) + (decl.dims.empty() ? "" : " (" + dims_text(decl) + ")"),
                       program_, decl.name.source);
  for (std::size_t d = 0; d < decl.dims.size(); ++d) {
    if (decl.dims[d].axes.size() != 1) continue;
    const std::string& axis = decl.dims[d].axes[0].name;
    AxisValue& v = axes_.at(axis);
    if (v.fixed && v.length != g.shape[d])
      throw ProgramError(g.origin + " gives axis '" + axis + "' length " + std::to_string(g.shape[d]) + " (dim " +
                             std::to_string(d) + " of " + what + ") but it is " + std::to_string(v.length) + " (" +
                             v.origin + ")",
                         program_, decl.dims[d].source);
    if (v.fixed) continue;
    if (g.shape[d] <= 0)
      throw ProgramError(g.origin + " gives axis '" + axis + "' length " + std::to_string(g.shape[d]) + " (dim " +
                             std::to_string(d) + " of " + what + "): an axis length is positive",
                         program_, decl.dims[d].source);
    v = {g.shape[d], "from " + g.origin, v.source, true};
  }
}

// A composite dim of a given tensor with exactly one axis that no override or tensor fixed
// takes that axis's length from the dim (the dim's length over the fixed axes' product, as
// rearrange infers one axis of a composition), until no dim has one left to infer. A dim
// that does not divide is left to check_given, which names every part.
void Environment::infer_factors(const std::vector<GivenTensor>& given) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const GivenTensor& g : given) {
      const ast::TensorDecl& decl = declaration(g.name);
      for (std::size_t d = 0; d < decl.dims.size() && d < g.shape.size(); ++d) {
        const ast::Dim& dim = decl.dims[d];
        if (dim.axes.size() < 2) continue;
        std::vector<const ast::Identifier*> open;
        std::int64_t known = 1;
        std::string parts;
        for (const ast::Identifier& a : dim.axes) {
          const AxisValue& v = at(a.name);
          if (!v.fixed) {
            open.push_back(&a);
            continue;
          }
          known = checked_mul(known, v.length);
          parts += (parts.empty() ? "" : " · ") + a.name + "=" + std::to_string(v.length);
        }
        if (open.size() != 1 || known <= 0 || g.shape[d] <= 0 || g.shape[d] % known != 0) continue;
        AxisValue& v = axes_.at(open.front()->name);
        v = {g.shape[d] / known,
             "from " + g.origin + ": dim " + std::to_string(d) + " " + dim_text(dim) + " = " +
                 std::to_string(g.shape[d]) + " over " + parts,
             v.source, true};
        changed = true;
      }
    }
  }
}

// Composite dims, checked once every given tensor has bound its axes; and the dtype.
void Environment::check_given(const GivenTensor& g) const {
  const ast::TensorDecl& decl = declaration(g.name);
  for (std::size_t d = 0; d < decl.dims.size(); ++d) {
    const ast::Dim& dim = decl.dims[d];
    if (dim.axes.size() == 1) continue;
    const std::int64_t want = dim_length(dim, *this);
    if (want == g.shape[d]) continue;
    std::string parts, open;
    std::int64_t known = 1;
    int n_open = 0;
    for (const ast::Identifier& a : dim.axes) {
      parts += (parts.empty() ? "" : ", ") + a.name + "=" + std::to_string(length(a.name)) + " (" + at(a.name).origin + ")";
      if (at(a.name).fixed)
        known = checked_mul(known, length(a.name));
      else
        open += (n_open++ ? ", " : "") + a.name;
    }
    std::string hint;
    if (n_open > 1)
      hint = "; give all but one of " + open + " a length (ProgramOptions::axes) and the last is inferred from the shape";
    else if (n_open == 1)
      hint = "; " + open + " cannot be inferred: " + std::to_string(g.shape[d]) + " is not a multiple of " +
             std::to_string(known) + " (the other axes' product)";
    throw ProgramError("dim " + std::to_string(d) + " of " + g.origin + " is " + std::to_string(g.shape[d]) +
                           " but it is " + dim_text(dim) + " = " + std::to_string(want) + ": " + parts + hint,
                       program_, dim.source);
  }
  if (decl.dtype && dtype_from_name(decl.dtype->name) != g.dtype)
    throw ProgramError(g.origin + " is " + std::string(name(g.dtype)) + " but " + std::string(ast::name(decl.kind)) +
                           " '" + g.name + "' is declared " + decl.dtype->name,
                       program_, decl.dtype->source);
}

Shape Environment::shape_of(const ast::TensorDecl& decl) const {
  Shape shape;
  for (const ast::Dim& dim : decl.dims) shape.push_back(dim_length(dim, *this));
  return shape;
}

DType Environment::dtype_of(const ast::TensorDecl& decl, DType fallback) const {
  if (const auto it = given_.find(decl.name.name); it != given_.end()) return it->second->dtype;
  return decl.dtype ? dtype_from_name(decl.dtype->name) : fallback;
}

}  // namespace einexpr::program_detail
