#pragma once
// Equality up to positions: stripped(x) is x with every Span and Source zeroed, and a
// pattern's text replaced by its canonical form, so that "parse(to_string(p)) equals p up
// to spans" is an ordinary ==. Used by the parser tests and the fuzz targets.
#include <variant>

#include "einexpr/parser/ast.hpp"
#include "einexpr/parser/program_ast.hpp"

namespace einexpr::test {

inline void strip(ast::Span& s) { s = {}; }
inline void strip(ast::Atom& a) { std::visit([](auto& x) { strip(x.span); }, a); }
inline void strip(ast::Term& t) {
  std::visit([](auto& x) { strip(x.span); }, t);
  if (auto* g = std::get_if<ast::Group>(&t))
    for (ast::Atom& a : g->atoms) strip(a);
}
inline void strip(ast::Operand& o) {
  strip(o.span);
  for (ast::Term& t : o.terms) strip(t);
}
inline void strip(ast::Pattern& p) {
  p.text = ast::to_string(p);
  strip(p.arrow);
  for (ast::Operand& o : p.operands) strip(o);
  strip(p.output);
  for (ast::Operand& o : p.more_outputs) strip(o);
  for (ast::Span& b : p.brackets) strip(b);  // which dims they hold is in the canonical text
}

inline void strip(ast::Source& s) { s = {}; }
inline void strip(ast::Identifier& i) { strip(i.source); }
inline void strip(ast::AxisDef& d) {
  strip(d.name);
  strip(d.source);
}
inline void strip(ast::AxesDecl& a) {
  for (ast::AxisDef& d : a.axes) strip(d);
  strip(a.source);
}
inline void strip(ast::TensorDecl& t) {
  strip(t.name);
  for (ast::Dim& d : t.dims) {
    for (ast::Identifier& i : d.axes) strip(i);
    strip(d.source);
  }
  if (t.dtype) strip(*t.dtype);
  strip(t.source);
}
inline void strip(ast::OutputDecl& o) {
  for (ast::Identifier& i : o.names) strip(i);
  strip(o.source);
}
inline void strip(ast::CheckpointDecl& c) {
  for (ast::Identifier& i : c.names) strip(i);
  strip(c.source);
}
inline void strip(ast::Statement& s) {
  strip(s.name);
  for (ast::Identifier& i : s.more_names) strip(i);
  strip(s.op_name);
  for (ast::Identifier& i : s.inputs) strip(i);
  strip(s.pattern.pattern);
  strip(s.pattern.source);
  if (s.function) strip(s.function->source);
  for (ast::AxisDef& d : s.lengths) strip(d);
  strip(s.source);
}
inline void strip(ast::BlockDecl& b) {
  strip(b.name);
  for (ast::Identifier& i : b.params) strip(i);
  strip(b.axis);
  for (ast::Statement& s : b.statements) strip(s);
  for (ast::CheckpointDecl& c : b.checkpoints) strip(c);
  strip(b.source);
  strip(b.end);
}
inline void strip(ast::BlockCall& c) {
  strip(c.name);
  strip(c.block);
  for (ast::Identifier& i : c.inputs) strip(i);
  strip(c.source);
}
inline void strip(ast::MeshDecl& m) {
  for (ast::MeshDimDef& d : m.dims) {
    strip(d.name);
    strip(d.link);
    strip(d.source);
  }
  strip(m.source);
}
inline void strip(ast::ShardDecl& s) {
  for (ast::ShardRule& r : s.rules) {
    strip(r.axis);
    strip(r.dim);
  }
  strip(s.source);
}
inline void strip(ast::Program& p) {
  p.file.clear();
  p.text.clear();
  for (ast::Item& item : p.items) std::visit([](auto& i) { strip(i); }, item);
  for (ast::Identifier& i : p.outputs) strip(i);
  for (ast::Identifier& i : p.checkpoints) strip(i);
}

template <typename T>
T stripped(T x) {
  strip(x);
  return x;
}

}  // namespace einexpr::test
