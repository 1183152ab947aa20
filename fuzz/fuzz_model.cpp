// Fuzz target: the model-program parser. The input bytes are a program file, as a user
// writes it. Invariants (a violation aborts):
//   - parse_program throws nothing but ProgramError, whose place (and note's place) lies in
//     the text with the line and column the text implies, and whose message starts with
//     "file:line:col: reason" and carries the line with a caret;
//   - a parsed program keeps the text; every Source lies in it with its true line and
//     column, and every name's Source spells that name; a pattern's Source is its literal;
//   - the checks hold on what they accepted: each tensor argument is defined by an earlier
//     item, each pattern axis has a definition, each output names a tensor;
//   - to_string round-trips: parse_program(to_string(p)) equals p up to positions, and
//     to_string of that is the same text again;
//   - past the parser, planned, costed and run (model_run.hpp has those invariants).
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "ast_strip.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/parser/program.hpp"
#include "fuzz_support.hpp"
#include "model_run.hpp"

using namespace einexpr;

namespace {

constexpr const char* file_name = "fuzz.ein";

/// The place of byte `offset`, counted independently of SourceMap.
ProgramError::Place place_of(std::string_view text, std::size_t offset) {
  ProgramError::Place p{offset, 1, 1};
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++p.column;
    }
  }
  return p;
}

bool same(const ProgramError::Place& a, const ProgramError::Place& b) {
  return a.offset == b.offset && a.line == b.line && a.column == b.column;
}

void check_error(const ProgramError& e, std::string_view text) {
  const std::string what = e.what();
  FUZZ_CHECK(e.place().offset <= text.size(), "error offset " + std::to_string(e.place().offset) + " past the text");
  FUZZ_CHECK(same(e.place(), place_of(text, e.place().offset)), "wrong line:col in: " + what);
  if (e.note_place()) {
    FUZZ_CHECK(e.note_place()->offset <= text.size(), "note offset past the text");
    FUZZ_CHECK(same(*e.note_place(), place_of(text, e.note_place()->offset)), "wrong note line:col in: " + what);
  }
  const std::string head = std::string(file_name) + ":" + std::to_string(e.place().line) + ":" +
                           std::to_string(e.place().column) + ": " + e.reason() + "\n  ";
  FUZZ_CHECK(what.rfind(head, 0) == 0, "the message does not start with file:line:col: reason: " + what);
  FUZZ_CHECK(!e.reason().empty(), "an empty reason");
  FUZZ_CHECK(what.find('^') != std::string::npos, "no caret in: " + what);
}

struct SourceChecker {
  std::string_view text;

  void operator()(const ast::Source& s, const char* what) const {
    FUZZ_CHECK(s.span.begin <= s.span.end && s.span.end <= text.size(), std::string(what) + ": span out of the text");
    const ProgramError::Place p = place_of(text, s.span.begin);
    FUZZ_CHECK(p.line == s.line && p.column == s.column, std::string(what) + ": wrong line:col");
  }
  void operator()(const ast::Identifier& id, const char* what) const {
    (*this)(id.source, what);
    FUZZ_CHECK(text.substr(id.source.span.begin, id.source.span.end - id.source.span.begin) == id.name,
               std::string(what) + " '" + fuzz::escaped(id.name) + "' is not the text at its Source");
  }
  void operator()(const ast::AxisDef& d) const {
    (*this)(d.name, "axis name");
    (*this)(d.source, "axis definition");
    FUZZ_CHECK(d.length > 0, "a length that is not positive");
  }
};

/// A statement's Sources, and the checks' promises: its tensors defined by earlier items
/// (`defined`), its pattern's axes defined.
template <typename Defined>
void check_statement(const ast::Program& p, const ast::Statement& s, const SourceChecker& at, Defined&& defined) {
  at(s.source, "statement");
  at(s.name, "statement name");
  at(s.op_name, "op name");
  at(s.pattern.source, "pattern");
  const ast::Span literal = s.pattern.source.span;
  const bool implied = s.op == Op::dropout && s.pattern.source == s.source;  // "dropout(x, 0.1)": none written
  FUZZ_CHECK(implied || at.text.substr(literal.begin, literal.end - literal.begin) == "\"" + s.pattern.pattern.text + "\"",
             "the pattern's Source is not its literal");
  for (const ast::AxisDef& d : s.lengths) at(d);
  for (const ast::Identifier& n : s.more_names) at(n, "statement name");
  FUZZ_CHECK(s.literals.empty() || s.literals.size() == s.inputs.size(), "the literals do not line up with the inputs");
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    const ast::Identifier& in = s.inputs[i];
    at(in, s.is_literal(i) ? "number argument" : "tensor argument");
    if (s.is_literal(i)) continue;  // a number: a constant, defined where it is written
    FUZZ_CHECK(defined(in.name), "tensor '" + in.name + "' is used but not defined before");
  }
  auto axis_defined = [&](const std::string& name) {
    FUZZ_CHECK(ast::find_axis(p, name), "axis '" + name + "' has no definition");
  };
  auto axes_defined = [&](const ast::Operand& operand) {
    for (const ast::Term& term : operand.terms) {
      if (const auto* n = std::get_if<ast::Named>(&term)) axis_defined(n->name);
      if (const auto* g = std::get_if<ast::Group>(&term))
        for (const ast::Atom& atom : g->atoms)
          if (const auto* n = std::get_if<ast::Named>(&atom)) axis_defined(n->name);
    }
  };
  for (const ast::Operand& operand : s.pattern.pattern.operands) axes_defined(operand);
  axes_defined(s.pattern.pattern.output);
}

/// Every Source of the program, and the checks' promises, hold.
void check_program(const ast::Program& p, std::string_view text) {
  FUZZ_CHECK(p.text == text && p.file == file_name, "the program does not keep its text and file");
  const SourceChecker at{text};
  for (const ast::Item& item : p.items) {
    if (const auto* a = std::get_if<ast::AxesDecl>(&item)) {
      at(a->source, "axes line");
      for (const ast::AxisDef& d : a->axes) at(d);
    } else if (const auto* t = std::get_if<ast::TensorDecl>(&item)) {
      at(t->source, "declaration");
      at(t->name, "tensor name");
      for (const ast::Dim& d : t->dims)
        for (const ast::Identifier& axis : d.axes) at(axis, "dim axis");
      if (t->dtype) at(*t->dtype, "dtype");
    } else if (const auto* o = std::get_if<ast::OutputDecl>(&item)) {
      for (const ast::Identifier& n : o->names) at(n, "output name");
    } else if (const auto* c = std::get_if<ast::CheckpointDecl>(&item)) {
      at(c->source, "checkpoint line");
      for (const ast::Identifier& n : c->names) at(n, "checkpoint name");
    } else if (const auto* b = std::get_if<ast::BlockDecl>(&item)) {
      at(b->source, "block line");
      at(b->name, "block name");
      at(b->axis, "block axis");
      at(b->end, "end line");
      FUZZ_CHECK(!b->params.empty() && !b->statements.empty(), "a block without parameters or statements");
      FUZZ_CHECK(ast::find_axis(p, b->axis.name), "block axis '" + b->axis.name + "' has no definition");
      for (const ast::Identifier& n : b->params) at(n, "block parameter");
      // its statements read its parameters, its earlier statements and the program's names above it
      for (std::size_t i = 0; i < b->statements.size(); ++i)
        check_statement(p, b->statements[i], at, [&](const std::string& name) {
          for (const ast::Identifier& n : b->params)
            if (n.name == name) return true;
          for (std::size_t j = 0; j < i; ++j) {
            if (b->statements[j].name.name == name) return true;
            for (const ast::Identifier& m : b->statements[j].more_names)
              if (m.name == name) return true;
          }
          const ast::Item* def = ast::find_tensor(p, name);
          return def && def < &item;
        });
      for (const ast::CheckpointDecl& c : b->checkpoints)
        for (const ast::Identifier& n : c.names) at(n, "checkpoint name");
    } else if (const auto* c = std::get_if<ast::BlockCall>(&item)) {
      at(c->source, "block call");
      at(c->name, "statement name");
      at(c->block, "block name");
      const ast::BlockDecl* b = ast::find_block(p, c->block.name);
      FUZZ_CHECK(b && static_cast<const void*>(b) < static_cast<const void*>(&item), "block '" + c->block.name + "' is called before its definition");
      FUZZ_CHECK(c->inputs.size() == b->params.size(), "a call with the wrong number of tensors");
      for (const ast::Identifier& in : c->inputs) {
        at(in, "tensor argument");
        const ast::Item* def = ast::find_tensor(p, in.name);
        FUZZ_CHECK(def && def < &item, "tensor '" + in.name + "' is used but not defined before");
      }
    } else if (const auto* m = std::get_if<ast::MeshDecl>(&item)) {
      at(m->source, "mesh line");
      FUZZ_CHECK(!m->dims.empty(), "a mesh line without dimensions");
      for (const ast::MeshDimDef& d : m->dims) {
        at(d.name, "mesh dimension");
        if (!d.link.name.empty()) at(d.link, "mesh link");
        FUZZ_CHECK(d.size >= 1, "a mesh dimension of size " + std::to_string(d.size));
      }
    } else if (const auto* sh = std::get_if<ast::ShardDecl>(&item)) {
      at(sh->source, "shard line");
      for (const ast::ShardRule& r : sh->rules) {
        at(r.axis, "shard axis");
        at(r.dim, "shard dimension");
        FUZZ_CHECK(ast::find_axis(p, r.axis.name), "shard axis '" + r.axis.name + "' has no definition");
      }
    } else {
      check_statement(p, std::get<ast::Statement>(item), at, [&](const std::string& name) {
        const ast::Item* def = ast::find_tensor(p, name);
        return def && def < &item;
      });
    }
  }
  FUZZ_CHECK(!p.outputs.empty(), "no output");
  for (const ast::Identifier& o : p.outputs) FUZZ_CHECK(ast::find_tensor(p, o.name), "output '" + o.name + "' is no tensor");
  for (const ast::Identifier& c : p.checkpoints) {
    const ast::Item* def = ast::find_tensor(p, c.name);
    FUZZ_CHECK(def && (std::holds_alternative<ast::Statement>(*def) || std::holds_alternative<ast::BlockCall>(*def)),
               "checkpoint '" + c.name + "' is no statement's result");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ast::Program p;
  try {
    p = parse_program(text, file_name);
  } catch (const ProgramError& e) {
    check_error(e, text);
    return 0;
  }
  check_program(p, text);
  fuzz::plan_cost_run(p, text, check_error);
  const std::string canonical = ast::to_string(p);
  if (canonical.size() > max_program_length) return 0;
  for (const ast::Item& item : p.items) {  // single spaces may lengthen a dense pattern past its limit
    if (const auto* s = std::get_if<ast::Statement>(&item))
      if (ast::to_string(s->pattern.pattern).size() > max_pattern_length) return 0;
    if (const auto* b = std::get_if<ast::BlockDecl>(&item))
      for (const ast::Statement& s : b->statements)
        if (ast::to_string(s.pattern.pattern).size() > max_pattern_length) return 0;
  }
  ast::Program q;
  try {
    q = parse_program(canonical, file_name);
  } catch (const ProgramError& e) {
    FUZZ_CHECK(false, "to_string gave \"" + fuzz::escaped(canonical) + "\", which does not parse: " + e.what());
  }
  FUZZ_CHECK(test::stripped(q) == test::stripped(p),
             "\"" + fuzz::escaped(text) + "\" and its to_string \"" + fuzz::escaped(canonical) + "\" differ");
  FUZZ_CHECK(ast::to_string(q) == canonical, "to_string is not idempotent on \"" + fuzz::escaped(canonical) + "\"");
  return 0;
}
