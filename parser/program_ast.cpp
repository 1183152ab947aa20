// The model-program AST's helpers: canonical text (to_string), look-ups by name, and the
// pattern-to-file offset.
#include <string>
#include <variant>

#include "einexpr/parser/program_ast.hpp"

namespace einexpr::ast {

const char* name(TensorKind kind) noexcept { return kind == TensorKind::param ? "param" : "input"; }

std::size_t file_offset(const PatternArg& arg, std::size_t offset) noexcept {
  return arg.source.span.begin + 1 + offset;  // past the opening quote
}

const Item* find_tensor(const Program& program, std::string_view name) noexcept {
  for (const Item& item : program.items) {
    if (const auto* t = std::get_if<TensorDecl>(&item); t && t->name.name == name) return &item;
    if (const auto* s = std::get_if<Statement>(&item)) {
      if (s->name.name == name) return &item;
      for (const Identifier& n : s->more_names)
        if (n.name == name) return &item;
    }
    if (const auto* c = std::get_if<BlockCall>(&item); c && c->name.name == name) return &item;
  }
  return nullptr;
}

const BlockDecl* find_block(const Program& program, std::string_view name) noexcept {
  for (const Item& item : program.items)
    if (const auto* b = std::get_if<BlockDecl>(&item); b && b->name.name == name) return b;
  return nullptr;
}

std::vector<const AxisDef*> axis_definitions(const Program& program) {
  std::vector<const AxisDef*> defs;
  for (const Item& item : program.items) {
    if (const auto* a = std::get_if<AxesDecl>(&item))
      for (const AxisDef& d : a->axes) defs.push_back(&d);
    if (const auto* s = std::get_if<Statement>(&item))
      for (const AxisDef& d : s->lengths) defs.push_back(&d);
  }
  return defs;
}

const AxisDef* find_axis(const Program& program, std::string_view name) noexcept {
  for (const Item& item : program.items) {
    const std::vector<AxisDef>* defs = nullptr;
    if (const auto* a = std::get_if<AxesDecl>(&item)) defs = &a->axes;
    if (const auto* s = std::get_if<Statement>(&item)) defs = &s->lengths;
    if (defs)
      for (const AxisDef& d : *defs)
        if (d.name.name == name) return &d;
  }
  return nullptr;
}

namespace {

std::string text_of(const AxisDef& d) { return d.name.name + "=" + std::to_string(d.length); }

std::string text_of(const AxesDecl& decl) {
  std::string s = "axes";
  for (const AxisDef& d : decl.axes) s += " " + text_of(d);
  return s;
}

std::string text_of(const TensorDecl& decl) {
  std::string s = std::string(name(decl.kind)) + " " + decl.name.name + ":";
  for (const Dim& dim : decl.dims) {
    std::string axes;
    for (const Identifier& a : dim.axes) axes += (axes.empty() ? "" : " ") + a.name;
    s += " " + (dim.axes.size() == 1 ? axes : "(" + axes + ")");
  }
  if (decl.dtype) s += " " + decl.dtype->name;
  return s;
}

std::string text_of(const OutputDecl& decl) {
  std::string s = "output";
  for (const Identifier& n : decl.names) s += " " + n.name;
  return s;
}

std::string text_of(const CheckpointDecl& decl) {
  std::string s = "checkpoint";
  for (std::size_t i = 0; i < decl.names.size(); ++i) s += (i ? ", " : " ") + decl.names[i].name;
  return s;
}

std::string text_of(const Statement& st) {
  std::string s = st.name.name;
  for (const Identifier& n : st.more_names) s += ", " + n.name;
  s += " = " + st.op_name.name + "(";
  if (st.op == Op::dropout)  // "dropout(x, 0.1)": written without a pattern
    return s + st.inputs.at(0).name + ", " + (st.inputs.size() > 1 ? st.inputs[1].name : "?") + ")";
  for (const Identifier& in : st.inputs) s += in.name + ", ";
  s += "\"" + to_string(st.pattern.pattern) + "\"";
  if (st.function) s += ", \"" + st.function->text + "\"";
  for (const AxisDef& d : st.lengths) s += ", " + text_of(d);
  return s + ")";
}

std::string text_of(const BlockDecl& b) {
  std::string s = "block " + b.name.name + "(";
  for (std::size_t i = 0; i < b.params.size(); ++i) s += (i ? ", " : "") + b.params[i].name;
  s += ") over " + b.axis.name + "\n";
  for (const Statement& st : b.statements) s += "  " + text_of(st) + "\n";
  for (const CheckpointDecl& c : b.checkpoints) s += "  " + text_of(c) + "\n";
  return s + "end";
}

std::string text_of(const MeshDecl& m) {
  std::string s = "mesh";
  for (const MeshDimDef& d : m.dims)
    s += " " + d.name.name + "=" + std::to_string(d.size) + (d.link.name.empty() ? "" : "@" + d.link.name);
  return s;
}

std::string text_of(const ShardDecl& d) {
  std::string s = "shard";
  for (const ShardRule& r : d.rules) {
    s += " " + r.axis.name + ":" + r.dim.name;
    for (std::size_t i = 0; i < r.at.size(); ++i) s += (i ? "+" : "@") + r.at[i].name;
  }
  return s;
}

std::string text_of(const BlockCall& c) {
  std::string s = c.name.name + " = " + c.block.name + "(";
  for (std::size_t i = 0; i < c.inputs.size(); ++i) s += (i ? ", " : "") + c.inputs[i].name;
  return s + ")";
}

}  // namespace

std::string to_string(const Item& item) {
  return std::visit([](const auto& i) { return text_of(i); }, item);
}

std::string to_string(const Program& program) {
  std::string s;
  for (const Item& item : program.items) s += to_string(item) + "\n";
  return s;
}

}  // namespace einexpr::ast
