// check_program(): the name-level rules of a model program (listed in program.hpp), applied
// in source order; the first fault throws ProgramError, with a note where a second place
// matters (the first definition of a name defined twice, the later definition of a name
// used too early). Tensors and axes are two namespaces.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <variant>

#include "einexpr/parser/check.hpp"
#include "einexpr/parser/program.hpp"
#include "einexpr/parser/ops.hpp"

namespace einexpr {
namespace {

using ast::Identifier;
using ast::Source;

/// A Source at byte `offset` (ProgramError computes the line and column).
Source at_offset(std::size_t offset) { return {{offset, offset}, 0, 0}; }
Source in_pattern(const ast::PatternArg& arg, ast::Span span) {
  return at_offset(ast::file_offset(arg, span.begin));
}

/// 's', with control bytes as \xNN (a function string may hold any byte but '"' and '\n').
std::string quoted(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
      continue;
    }
    const char* hex = "0123456789ABCDEF";
    out += std::string("\\x") + hex[u >> 4] + hex[u & 15];
  }
  return out + "'";
}

std::string list(std::span<const std::string_view> names) {
  std::string s;
  for (std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

/// The names of one namespace: those defined so far, and where each is first defined
/// anywhere in the program.
struct Names {
  const char* kind;  // "tensor" or "axis"
  std::unordered_map<std::string, Source> so_far;
  std::unordered_map<std::string, Source> anywhere;
};

class ProgramChecker {
 public:
  explicit ProgramChecker(ast::Program& p) : p_(p) {}
  void run();

 private:
  [[noreturn]] void fail(const Source& at, const std::string& reason) const {
    throw ProgramError(reason, p_, at);
  }
  [[noreturn]] void fail(const Source& at, const std::string& reason, const Source& note_at,
                         const std::string& note) const {
    throw ProgramError(reason, p_, at, note, note_at);
  }
  void collect();
  void not_yet_defined(const Names& names, const Identifier& id) const;
  void define(Names& names, const Identifier& id);
  void use(const Names& names, const std::string& name, const Source& at,
           const Source* defining = nullptr) const;

  void check(const ast::AxesDecl& decl);
  void check(const ast::TensorDecl& decl);
  void check(const ast::OutputDecl& decl);
  void check(const ast::CheckpointDecl& decl);
  void check(const ast::Statement& s);
  void check(const ast::BlockDecl& b);
  void check(const ast::BlockCall& c);
  void check(const ast::MeshDecl& m);
  void check(const ast::ShardDecl& s);
  void tensor_count(const ast::Statement& s, const OpRow& row) const;
  void dropout(const ast::Statement& s) const;
  void function(const ast::Statement& s, const OpRow& row) const;
  void pattern(const ast::Statement& s) const;
  void pattern_axes(const ast::Statement& s) const;
  void outputs_count(const ast::Statement& s) const;
  void outputs();
  void checkpoints();

  ast::Program& p_;
  Names tensors_{"tensor", {}, {}};
  Names axes_{"axis", {}, {}};
  std::vector<Identifier> outputs_;
  std::vector<Identifier> checkpoints_;
  std::unordered_map<std::string, Source> results_;  // every statement's results, where made
  std::unordered_map<std::string, const ast::BlockDecl*> blocks_;  // defined so far
  std::vector<Identifier> last_;  // the last top-level statement's results (or block call's)
  const ast::MeshDecl* mesh_ = nullptr;            // the mesh line, once given
  std::unordered_map<std::string, Source> split_;  // axes a shard line lays out, where
};

// Where every name is first defined, for "used before its definition" notes.
void ProgramChecker::collect() {
  for (const ast::Item& item : p_.items) {
    if (const auto* a = std::get_if<ast::AxesDecl>(&item))
      for (const ast::AxisDef& d : a->axes) axes_.anywhere.emplace(d.name.name, d.name.source);
    if (const auto* t = std::get_if<ast::TensorDecl>(&item))
      tensors_.anywhere.emplace(t->name.name, t->name.source);
    if (const auto* s = std::get_if<ast::Statement>(&item)) {
      tensors_.anywhere.emplace(s->name.name, s->name.source);
      results_.emplace(s->name.name, s->name.source);
      for (const Identifier& n : s->more_names) results_.emplace(n.name, n.source);
      for (const Identifier& n : s->more_names) tensors_.anywhere.emplace(n.name, n.source);
      for (const ast::AxisDef& d : s->lengths) axes_.anywhere.emplace(d.name.name, d.name.source);
    }
    if (const auto* c = std::get_if<ast::BlockCall>(&item)) {
      tensors_.anywhere.emplace(c->name.name, c->name.source);
      results_.emplace(c->name.name, c->name.source);
    }
  }
}

void ProgramChecker::not_yet_defined(const Names& names, const Identifier& id) const {
  if (const auto first = names.so_far.find(id.name); first != names.so_far.end())
    fail(id.source, std::string(names.kind) + " " + quoted(id.name) + " is defined twice",
         first->second, "first defined here");
}

void ProgramChecker::define(Names& names, const Identifier& id) {
  not_yet_defined(names, id);
  names.so_far.emplace(id.name, id.source);
}

// `defining`: the name the current statement defines, for "used in its own definition".
void ProgramChecker::use(const Names& names, const std::string& name, const Source& at,
                         const Source* defining) const {
  if (names.so_far.count(name)) return;
  const auto later = names.anywhere.find(name);
  const std::string what = std::string(names.kind) + " " + quoted(name);
  if (later == names.anywhere.end())
    fail(at, "unknown " + what + (std::string_view(names.kind) == "axis" ? ": give it a length on an axes line"
                                                           : ": declare it with input or param"));
  if (defining && later->second == *defining) fail(at, what + " is used in its own definition");
  fail(at, what + " is used before its definition: a name is defined before it is used",
       later->second, "defined here");
}

void ProgramChecker::check(const ast::AxesDecl& decl) {
  for (const ast::AxisDef& d : decl.axes) {
    if (d.name.name.front() == '_' || d.name.name.back() == '_')
      fail(d.name.source, "axis name should not start or end with underscore: " + quoted(d.name.name));
    define(axes_, d.name);
  }
}

void ProgramChecker::check(const ast::TensorDecl& decl) {
  not_yet_defined(tensors_, decl.name);
  for (const ast::Dim& dim : decl.dims)
    for (const Identifier& axis : dim.axes) use(axes_, axis.name, axis.source);
  define(tensors_, decl.name);
}

void ProgramChecker::check(const ast::OutputDecl& decl) {
  outputs_.insert(outputs_.end(), decl.names.begin(), decl.names.end());
}

void ProgramChecker::check(const ast::CheckpointDecl& decl) {
  checkpoints_.insert(checkpoints_.end(), decl.names.begin(), decl.names.end());
}

void ProgramChecker::check(const ast::Statement& s) {
  const OpRow& row = op_row(s.op_name.name);
  not_yet_defined(tensors_, s.name);
  for (const Identifier& n : s.more_names) not_yet_defined(tensors_, n);
  if (row.op == Op::dropout) {
    dropout(s);
  } else {
    tensor_count(s, row);
  }
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    if (row.op == Op::dropout && i == 1) continue;  // its probability
    const Identifier& in = s.inputs[i];
    if (s.is_literal(i)) {
      if (static_cast<int>(i) == row.index_operand)
        fail(in.source, "number " + in.name + " in place of " + std::string(row.name) + "'s indices: give an i64 or "
                        "i32 tensor");
      continue;
    }
    use(tensors_, in.name, in.source, &s.name.source);
  }
  function(s, row);
  pattern(s);
  outputs_count(s);
  for (const ast::AxisDef& d : s.lengths) define(axes_, d.name);
  pattern_axes(s);
  define(tensors_, s.name);
  for (const Identifier& n : s.more_names) define(tensors_, n);
  last_ = {s.name};
  last_.insert(last_.end(), s.more_names.begin(), s.more_names.end());
}

// A block: its layer axis is defined; its parameters are new names; its body is checked as
// top-level statements are, in a scope of its own (the parameters, the program's names defined
// so far, its statements); its checkpoint lines name its statements; its result is one tensor.
void ProgramChecker::check(const ast::BlockDecl& b) {
  use(axes_, b.axis.name, b.axis.source);
  const Names outer = tensors_;
  const std::vector<Identifier> outer_last = last_;
  for (const Identifier& p : b.params) {
    if (const auto it = tensors_.so_far.find(p.name); it != tensors_.so_far.end()) {
      const bool param = std::any_of(b.params.begin(), b.params.end(), [&](const Identifier& q) {
        return q.source == it->second;
      });
      fail(p.source, param ? "block parameter " + quoted(p.name) + " is named twice"
                           : "block parameter " + quoted(p.name) + " is also a tensor of the program: give it "
                             "another name (a name means one thing)",
           it->second, param ? "first named here" : "defined here");
    }
    tensors_.so_far.emplace(p.name, p.source);
  }
  for (const ast::Statement& s : b.statements) {
    tensors_.anywhere.emplace(s.name.name, s.name.source);
    for (const Identifier& n : s.more_names) tensors_.anywhere.emplace(n.name, n.source);
  }
  for (const ast::Statement& s : b.statements) check(s);
  const ast::Statement& result = b.statements.back();
  if (!result.more_names.empty())
    fail(result.more_names.front().source,
         "block " + quoted(b.name.name) + " gives its last statement's result, one tensor: this split makes " +
             std::to_string(1 + result.more_names.size()) + "; add a statement after it");
  std::unordered_map<std::string, Source> seen;
  for (const ast::CheckpointDecl& c : b.checkpoints)
    for (const Identifier& n : c.names) {
      bool made = false;
      for (const ast::Statement& s : b.statements) {
        made = made || s.name.name == n.name;
        for (const Identifier& m : s.more_names) made = made || m.name == n.name;
      }
      if (!made)
        fail(n.source, "checkpoint " + quoted(n.name) + " in block " + quoted(b.name.name) +
                           " names none of its statements: a block's checkpoint lines name what each layer keeps");
      if (const auto [first, fresh] = seen.emplace(n.name, n.source); !fresh)
        fail(n.source, "tensor " + quoted(n.name) + " is a checkpoint twice", first->second, "first named here");
    }
  tensors_ = outer;
  last_ = outer_last;
  blocks_[b.name.name] = &b;
}

// A call: the block's parameters, one tensor each.
void ProgramChecker::check(const ast::BlockCall& c) {
  not_yet_defined(tensors_, c.name);
  const ast::BlockDecl& b = *blocks_.at(c.block.name);
  if (c.inputs.size() != b.params.size()) {
    std::string params;
    for (const Identifier& p : b.params) params += (params.empty() ? "" : ", ") + p.name;
    fail(c.inputs.size() > b.params.size() ? c.inputs[b.params.size()].source : c.block.source,
         "block " + quoted(b.name.name) + " takes " + std::to_string(b.params.size()) +
             (b.params.size() == 1 ? " tensor" : " tensors") + " (" + params + "), not " + std::to_string(c.inputs.size()),
         b.source, "defined here");
  }
  for (const Identifier& in : c.inputs) use(tensors_, in.name, in.source, &c.name.source);
  define(tensors_, c.name);
  last_ = {c.name};
}

// One mesh line; its dimensions named once.
void ProgramChecker::check(const ast::MeshDecl& m) {
  if (mesh_ != nullptr) fail(m.source, "a second mesh line: a program has one mesh", mesh_->source, "the first is here");
  std::unordered_map<std::string, Source> seen;
  for (const ast::MeshDimDef& d : m.dims)
    if (const auto [it, fresh] = seen.emplace(d.name.name, d.name.source); !fresh)
      fail(d.name.source, "mesh dimension " + quoted(d.name.name) + " is named twice", it->second, "first named here");
  mesh_ = &m;
}

// Each rule lays out an axis defined above over a dimension of the mesh line above; an axis once.
void ProgramChecker::check(const ast::ShardDecl& s) {
  if (mesh_ == nullptr) fail(s.source, "a shard line without a mesh line above it: 'mesh dp=8 tp=8', then 'shard B:dp H:tp'");
  for (const ast::ShardRule& r : s.rules) {
    use(axes_, r.axis.name, r.axis.source);
    if (std::none_of(mesh_->dims.begin(), mesh_->dims.end(), [&](const ast::MeshDimDef& d) { return d.name.name == r.dim.name; })) {
      std::string known;
      for (const ast::MeshDimDef& d : mesh_->dims) known += (known.empty() ? "" : ", ") + d.name.name;
      fail(r.dim.source, "the mesh has no dimension " + quoted(r.dim.name) + " (its dimensions: " + known + ")",
           mesh_->source, "the mesh is here");
    }
    if (!r.at.empty()) continue;  // a statement-level layout: checked against the statements when costed
    if (const auto [it, fresh] = split_.emplace(r.axis.name, r.axis.source); !fresh)
      fail(r.axis.source, "axis " + quoted(r.axis.name) + " is laid out twice", it->second, "first laid out here");
  }
}

// The op's number of tensors, and one pattern operand per tensor.
void ProgramChecker::tensor_count(const ast::Statement& s, const OpRow& row) const {
  const std::size_t n = s.inputs.size();
  if (n < row.min_inputs || n > row.max_inputs) {
    const std::string range = row.min_inputs == row.max_inputs
                                  ? std::to_string(row.min_inputs)
                                  : std::to_string(row.min_inputs) +
                                        (row.max_inputs == row.min_inputs + 1 ? " or " : " to ") +
                                        std::to_string(row.max_inputs);
    fail(n > row.max_inputs ? s.inputs[row.max_inputs].source : s.pattern.source,
         std::string(row.name) + " takes " + range + (row.max_inputs == 1 ? " tensor" : " tensors") +
             " before its pattern, not " + std::to_string(n));
  }
  if (row.op == Op::unpack)  // its outputs' "*" shapes are run-time arguments a statement has no place for
    fail(s.op_name.source, "unpack needs its outputs' shapes, which a statement cannot give: split the packed "
                           "axis by name instead, e.g. 'a, b = rearrange(p, \"B (S + T) D -> B S D, B T D\")'");
  if (row.grammar == Grammar::packed) return;  // "i j * k" stands for every tensor packed
  const auto& operands = s.pattern.pattern.operands;
  // a normalization's pattern names x alone; its gain and bias lie over the bracketed axes
  if (row.op == Op::normalize && operands.size() == 1) return;
  const std::string counts = "the pattern has " + std::to_string(operands.size()) +
                             (operands.size() == 1 ? " operand" : " operands") + " but " +
                             std::to_string(n) + (n == 1 ? " tensor is" : " tensors are") + " given";
  if (operands.size() > n) fail(in_pattern(s.pattern, operands[n].span), counts);
  if (operands.size() < n) fail(s.inputs[operands.size()].source, counts);
}

// "y = dropout(x, 0.1)": one tensor, then the probability of zeroing an element, in [0, 1).
void ProgramChecker::dropout(const ast::Statement& s) const {
  const std::string form = "dropout takes a tensor and the probability of zeroing each element: 'y = dropout(x, 0.1)'";
  if (!s.pattern.pattern.text.empty() && s.pattern.pattern.text != "..., -> ...")
    fail(s.pattern.source, "dropout takes no pattern in a model file (its output is its input): 'y = dropout(x, 0.1)'");
  if (s.inputs.size() != 2) fail(s.inputs.size() > 2 ? s.inputs[2].source : s.op_name.source, form);
  if (s.is_literal(0)) fail(s.inputs[0].source, form);
  if (!s.is_literal(1)) fail(s.inputs[1].source, form + "; the probability is a number");
  const double p = *s.literals[1];
  if (!(p >= 0 && p < 1))
    fail(s.inputs[1].source, "dropout's probability " + s.inputs[1].name +
                                 " is outside [0, 1): it is the chance that an element is zeroed");
}

// The string after the pattern: present exactly when the op takes one, and a known name.
void ProgramChecker::function(const ast::Statement& s, const OpRow& row) const {
  const std::string op(row.name);
  if (row.function == FunctionArg::none) {
    if (s.function) fail(s.function->source, op + " takes no string after its pattern");
    return;
  }
  const bool reduction = row.function == FunctionArg::reduction;
  const bool unary = s.inputs.size() == 1;
  if (!s.function)
    fail(at_offset(s.source.span.end - 1),
         reduction ? op + " needs a reduction after its pattern: " + op + "(x, \"b h -> b\", \"sum\")"
                   : op + " needs a function after its pattern: " + op + "(x, \"b h -> b h\", \"gelu\")");
  const auto names = reduction ? reduction_names() : unary ? unary_function_names() : binary_function_names();
  for (std::string_view n : names)
    if (n == s.function->text) return;
  const std::string kind = reduction ? "reduction" : unary ? "function of one tensor" : "function of two tensors";
  fail(at_offset(s.function->source.span.begin + 1),
       "unknown " + kind + " " + quoted(s.function->text) + ": " + list(names));
}

// The op's pattern rules (check()); a unary map's output is its input.
void ProgramChecker::pattern(const ast::Statement& s) const {
  const ast::Pattern& p = s.pattern.pattern;
  try {
    einexpr::check(p, s.op);
  } catch (const PatternError& e) {
    fail(at_offset(ast::file_offset(s.pattern, e.position())), e.reason());
  }
  if (s.op == Op::map && p.operands.size() == 1 &&
      ast::to_string(p.operands[0]) != ast::to_string(p.output))
    fail(in_pattern(s.pattern, p.output.span),
         "a map of one tensor moves no axis: its output is its input, '" +
             ast::to_string(p.operands[0]) + " -> " + ast::to_string(p.operands[0]) +
             "' (rearrange moves axes)");
}

// A split names one tensor per output; every other statement one.
void ProgramChecker::outputs_count(const ast::Statement& s) const {
  const std::size_t outputs = 1 + s.pattern.pattern.more_outputs.size();
  const std::size_t names = 1 + s.more_names.size();
  if (outputs == names) return;
  if (names > outputs)
    fail(s.more_names[outputs - 1].source,
         "the pattern has " + std::to_string(outputs) + (outputs == 1 ? " output" : " outputs") + " but " +
             std::to_string(names) + " tensors are named: one name per output");
  fail(s.name.source, "the pattern has " + std::to_string(outputs) + " outputs but " + std::to_string(names) +
                          (names == 1 ? " tensor is" : " tensors are") + " named: '" + s.name.name +
                          ", ... = " + s.op_name.name + "(...)' names one per output");
}

// Every axis name of the pattern is defined; every axis=length of the call is in the pattern.
void ProgramChecker::pattern_axes(const ast::Statement& s) const {
  std::unordered_map<std::string, bool> in_pattern_names;
  auto visit = [&](const ast::Named& n) {
    use(axes_, n.name, in_pattern(s.pattern, n.span));
    in_pattern_names[n.name] = true;
  };
  auto visit_operand = [&](const ast::Operand& o) {
    for (const ast::Term& t : o.terms) {
      if (const auto* n = std::get_if<ast::Named>(&t)) visit(*n);
      if (const auto* g = std::get_if<ast::Group>(&t))
        for (const ast::Atom& a : g->atoms)
          if (const auto* n = std::get_if<ast::Named>(&a)) visit(*n);
    }
  };
  for (const ast::Operand& o : s.pattern.pattern.operands) visit_operand(o);
  visit_operand(s.pattern.pattern.output);
  for (const ast::Operand& o : s.pattern.pattern.more_outputs) visit_operand(o);
  for (const ast::AxisDef& d : s.lengths)
    if (!in_pattern_names.count(d.name.name))
      fail(d.name.source, "axis " + quoted(d.name.name) +
                              " is not in the pattern: a call's axis=length is for an axis of its pattern");
}

// The output lines name defined tensors, each once; without them the last statement is the
// output. A program computes something: it has a statement.
void ProgramChecker::outputs() {
  std::unordered_map<std::string, Source> seen;
  for (const Identifier& o : outputs_) {
    if (!tensors_.anywhere.count(o.name)) fail(o.source, "output " + quoted(o.name) + " names no tensor");
    if (const auto [first, fresh] = seen.emplace(o.name, o.source); !fresh)
      fail(o.source, "tensor " + quoted(o.name) + " is an output twice", first->second, "first named here");
  }
  if (last_.empty()) fail(at_offset(p_.text.size()), "the program has no statement: nothing to compute");
  p_.outputs = outputs_.empty() ? last_ : outputs_;
}

// The checkpoint lines name statement results (an input's or param's memory is the
// caller's, never recomputed), each once.
void ProgramChecker::checkpoints() {
  std::unordered_map<std::string, Source> seen;
  for (const Identifier& c : checkpoints_) {
    if (!tensors_.anywhere.count(c.name)) fail(c.source, "checkpoint " + quoted(c.name) + " names no tensor");
    if (!results_.count(c.name))
      fail(c.source, "checkpoint " + quoted(c.name) + " is an input or param: only a statement's result is kept "
                     "for the backward or made again", tensors_.anywhere.at(c.name), "declared here");
    if (const auto [first, fresh] = seen.emplace(c.name, c.source); !fresh)
      fail(c.source, "tensor " + quoted(c.name) + " is a checkpoint twice", first->second, "first named here");
  }
  p_.checkpoints = checkpoints_;
}

void ProgramChecker::run() {
  collect();
  for (const ast::Item& item : p_.items) std::visit([this](const auto& i) { check(i); }, item);
  outputs();
  checkpoints();
}

}  // namespace

void check_program(ast::Program& program) { ProgramChecker(program).run(); }

}  // namespace einexpr
