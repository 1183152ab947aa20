#pragma once
// PEGTL actions for program_grammar.hpp: each fills ProgramBuilder, which collects the
// pieces of the line being read and, at the end of a declaration or statement, adds the
// finished ast::Item. The actions also check what the grammar cannot see: a length's range,
// the op's name against the table, the order of a call's arguments, and the pattern (parsed
// here, its errors moved into the file). They throw ProgramError at the offending byte.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <tao/pegtl.hpp>

#include "einexpr/parser/parse.hpp"
#include "einexpr/parser/program.hpp"
#include "program_grammar.hpp"
#include "program_messages.hpp"
#include "einexpr/parser/ops.hpp"
#include "program_source.hpp"

namespace einexpr::grammar::model {

struct ProgramBuilder {
  ProgramBuilder(std::string_view text_, std::string_view file_) : text(text_), file(file_), map(text_) {}

  std::string_view text;
  std::string_view file;
  SourceMap map;
  std::vector<ast::Item> items;  // finished, in source order

  // ---- the item being read ----
  ast::TensorKind kind = ast::TensorKind::input;
  ast::Identifier name;                 // the tensor a declaration or statement defines
  ast::Identifier axis;                 // the axis of the axis_def being read
  std::int64_t length = 0;              // and its length
  std::vector<ast::AxisDef> defs;       // an axes line's definitions, or a call's lengths
  std::vector<ast::Dim> dims;           // a declaration's dims
  std::vector<ast::Identifier> group;   // the composition being read
  bool in_group = false;
  std::optional<ast::Identifier> dtype;
  std::vector<ast::Identifier> names;   // an output or checkpoint line's names, or a call's tensors
  std::vector<std::optional<double>> literals;  // per call argument in names: a number's value
  std::vector<ast::Identifier> more_names;      // a split statement's further names
  ast::Identifier op_name;
  Op op = Op::einsum;
  std::optional<ast::PatternArg> pattern;
  std::optional<ast::StringArg> function;
  bool call = false;                    // the statement calls a block, not an op
  std::vector<ast::MeshDimDef> mesh_dims;  // a mesh line's dimensions
  ast::Identifier mesh_link;               // the dimension being read: its link
  std::vector<ast::ShardRule> rules;       // a shard line's rules
  ast::Identifier shard_axis;

  // ---- blocks ----
  std::optional<ast::BlockDecl> block;  // the block being read: its lines go into it
  bool block_open = false;              // its header line is complete
  std::set<std::string, std::less<>> blocks;  // the blocks defined so far (calls may follow)

  template <typename Input>
  std::size_t offset(const Input& in) const {
    return static_cast<std::size_t>(in.begin() - text.data());
  }
  template <typename Input>
  ast::Source source(const Input& in) const {
    const std::size_t begin = offset(in);
    return map.source(begin, begin + in.size());
  }
  template <typename Input>
  ast::Identifier identifier(const Input& in) const {
    return {in.string(), source(in)};
  }
  [[noreturn]] void fail(std::size_t at, const std::string& reason) const {
    throw ProgramError(reason, file, text, at);
  }
  void add(ast::Item item) {
    if (block_open) {
      into_block(std::move(item));
    } else {
      items.push_back(std::move(item));
    }
    call = false;
    defs.clear();
    dims.clear();
    dtype.reset();
    names.clear();
    literals.clear();
    more_names.clear();
    pattern.reset();
    function.reset();
  }
  // Inside a block: its statements and checkpoint lines; anything else is refused at its line.
  void into_block(ast::Item item) {
    const std::string in = " inside block '" + block->name.name + "' (its body holds statements and checkpoint lines)";
    if (auto* s = std::get_if<ast::Statement>(&item)) {
      if (!s->lengths.empty())
        fail(s->lengths.front().source.span.begin,
             "axis=length" + in + ": give the axis its length on an axes line, once for every layer");
      block->statements.push_back(std::move(*s));
      return;
    }
    if (auto* c = std::get_if<ast::CheckpointDecl>(&item)) {
      block->checkpoints.push_back(std::move(*c));
      return;
    }
    const std::size_t at = std::visit([](const auto& i) { return i.source.span.begin; }, item);
    if (const auto* d = std::get_if<ast::TensorDecl>(&item))
      fail(at, "a declaration" + in + ": declare '" + d->name.name + "' before the block, with the layer axis first "
               "('" + std::string(ast::name(d->kind)) + " " + d->name.name + ": " + block->axis.name +
               " ...') to give each layer its own slice");
    if (std::holds_alternative<ast::AxesDecl>(item)) fail(at, "an axes line" + in + ": give the axes before the block");
    if (std::holds_alternative<ast::OutputDecl>(item)) fail(at, "an output line" + in + ": name the outputs outside it");
    if (std::holds_alternative<ast::MeshDecl>(item) || std::holds_alternative<ast::ShardDecl>(item))
      fail(at, "a mesh or shard line" + in + ": the layout is the whole program's, given outside the block");
    fail(at, "a block call" + in + ": blocks do not call blocks");
  }
};

template <typename Rule>
struct action : tao::pegtl::nothing<Rule> {};

template <>
struct action<tensor_name> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.name = b.identifier(in); }
};

template <>
struct action<more_name> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.more_names.push_back(b.identifier(in)); }
};

template <>
struct action<axis_name> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.axis = b.identifier(in); }
};

template <>
struct action<length> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    const auto [end, ec] = std::from_chars(in.begin(), in.end(), b.length);
    if (ec == std::errc::result_out_of_range)
      b.fail(b.offset(in), "axis length too large: at most 9223372036854775807");
    if (b.length == 0) b.fail(b.offset(in), "an axis length is positive, not 0");
  }
};

template <>
struct action<axis_def> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.defs.push_back({std::move(b.axis), b.length, b.source(in)});
  }
};

template <>
struct action<axes_decl> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.add(ast::AxesDecl{std::move(b.defs), b.source(in)});
  }
};

template <>
struct action<kw_input> {
  template <typename Input>
  static void apply(const Input& /*in*/, ProgramBuilder& b) { b.kind = ast::TensorKind::input; }
};

template <>
struct action<kw_param> {
  template <typename Input>
  static void apply(const Input& /*in*/, ProgramBuilder& b) { b.kind = ast::TensorKind::param; }
};

template <>
struct action<group_open> {
  template <typename Input>
  static void apply(const Input& /*in*/, ProgramBuilder& b) {
    b.in_group = true;
    b.group.clear();
  }
};

template <>
struct action<dim_axis> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    if (b.in_group)
      b.group.push_back(b.identifier(in));
    else
      b.dims.push_back({{b.identifier(in)}, b.source(in)});
  }
};

template <>
struct action<dim_group> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.in_group = false;
    b.dims.push_back({std::move(b.group), b.source(in)});
    b.group.clear();
  }
};

template <>
struct action<dtype> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.dtype = b.identifier(in); }
};

template <typename Decl>
struct tensor_decl_action {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.add(ast::TensorDecl{b.kind, std::move(b.name), std::move(b.dims), std::move(b.dtype),
                          b.source(in)});
  }
};
template <>
struct action<input_decl> : tensor_decl_action<input_decl> {};
template <>
struct action<param_decl> : tensor_decl_action<param_decl> {};

template <>
struct action<output_name> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.names.push_back(b.identifier(in)); }
};

template <>
struct action<output_decl> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.add(ast::OutputDecl{std::move(b.names), b.source(in)});
  }
};

template <>
struct action<checkpoint_name> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.names.push_back(b.identifier(in)); }
};

template <>
struct action<mesh_dim_name> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.axis = b.identifier(in);
    b.mesh_link = {};
  }
};

template <>
struct action<mesh_size> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    const auto [end, ec] = std::from_chars(in.begin(), in.end(), b.length);
    if (ec == std::errc::result_out_of_range || b.length > (std::int64_t{1} << 31))
      b.fail(b.offset(in), "a mesh dimension of " + in.string() + " devices: at most 2147483648");
    if (b.length == 0) b.fail(b.offset(in), "a mesh dimension's size is positive, not 0");
  }
};

template <>
struct action<mesh_link> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.mesh_link = b.identifier(in); }
};

template <>
struct action<mesh_dim_def> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.mesh_dims.push_back({std::move(b.axis), b.length, std::move(b.mesh_link), b.source(in)});
    b.mesh_link = {};
  }
};

template <>
struct action<mesh_decl> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.add(ast::MeshDecl{std::move(b.mesh_dims), b.source(in)});
    b.mesh_dims.clear();
  }
};

template <>
struct action<shard_axis> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.shard_axis = b.identifier(in); }
};

template <>
struct action<shard_dim> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.rules.push_back({std::move(b.shard_axis), b.identifier(in), {}}); }
};

template <>
struct action<shard_statement> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.rules.back().at.push_back(b.identifier(in)); }
};

template <>
struct action<shard_decl> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.add(ast::ShardDecl{std::move(b.rules), b.source(in)});
    b.rules.clear();
  }
};

template <>
struct action<checkpoint_decl> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.add(ast::CheckpointDecl{std::move(b.names), b.source(in)});
  }
};

template <>
struct action<kw_block> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    if (b.block)
      b.fail(b.offset(in), "a block inside block '" + b.block->name.name + "': blocks do not nest; close it with "
                           "'end' first");
    b.block.emplace();
  }
};

template <>
struct action<block_name> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    if (find_op_row(in.string_view()))
      b.fail(b.offset(in), "block '" + in.string() + "' has the name of an op: give it another");
    if (b.blocks.count(in.string_view())) b.fail(b.offset(in), "block '" + in.string() + "' is defined twice");
    b.block->name = b.identifier(in);
  }
};

template <>
struct action<block_param> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.block->params.push_back(b.identifier(in)); }
};

template <>
struct action<block_axis> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) { b.block->axis = b.identifier(in); }
};

template <>
struct action<block_decl> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    b.block->source = b.source(in);
    b.block_open = true;
  }
};

template <>
struct action<end_decl> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    if (!b.block) b.fail(b.offset(in), "'end' without a block to end: a block starts 'block NAME(x) over L'");
    if (b.block->statements.empty())
      b.fail(b.offset(in), "block '" + b.block->name.name + "' has no statement: nothing to apply per layer");
    b.block->end = b.source(in);
    b.blocks.insert(b.block->name.name);
    b.block_open = false;
    ast::BlockDecl done = std::move(*b.block);
    b.block.reset();
    b.add(std::move(done));
  }
};

template <>
struct action<program> {
  template <typename Input>
  static void apply(const Input& /*in*/, ProgramBuilder& b) {
    if (b.block)
      b.fail(b.block->source.span.begin,
             "block '" + b.block->name.name + "' is not closed: end its body with a line 'end'");
  }
};

template <>
struct action<op_name> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    if (b.blocks.count(in.string_view())) {
      b.call = true;
      b.op_name = b.identifier(in);
      return;
    }
    const OpRow* row = find_op_row(in.string_view());
    if (!row)
      b.fail(b.offset(in), "unknown op '" + in.string() + "': the ops are " + op_row_names() +
                               (b.blocks.empty() ? std::string() : ", and the blocks defined above"));
    b.op = row->op;
    b.op_name = b.identifier(in);
  }
};

template <>
struct action<arg_tensor> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    const std::string what = "tensor argument '" + in.string() + "' after ";
    if (b.pattern)
      b.fail(b.offset(in), what + "the pattern: the tensors come first, 'op(x, y, \"pattern\")'");
    if (!b.defs.empty())
      b.fail(b.offset(in), what + "axis=length: the tensors come first, the lengths last");
    b.names.push_back(b.identifier(in));
    b.literals.push_back(std::nullopt);
  }
};

template <>
struct action<scalar_arg> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    const std::string what = "number " + in.string() + " after ";
    if (b.call)
      b.fail(b.offset(in), "number " + in.string() + " in a call of block '" + b.op_name.name +
                               "': a block takes tensors; a number goes into one of its statements");
    if (b.pattern)
      b.fail(b.offset(in), what + "the pattern: the operands come first, 'op(x, 0.5, \"pattern\")'; an axis length "
                                  "is axis=length");
    if (!b.defs.empty()) b.fail(b.offset(in), what + "axis=length: the operands come first, the lengths last");
    double value = 0;
    const auto [end, ec] = std::from_chars(in.begin(), in.end(), value);
    if (ec != std::errc() || end != in.end() || !std::isfinite(value))
      b.fail(b.offset(in), "number " + in.string() + " is out of range: a number operand is a finite double");
    b.names.push_back(b.identifier(in));
    b.literals.push_back(value);
  }
};

template <>
struct action<string_arg> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    const std::size_t at = b.offset(in);
    const std::string_view body = in.string_view().substr(1, in.size() - 2);
    if (b.call)
      b.fail(at, "a string in a call of block '" + b.op_name.name + "': a block takes tensors only, 'h = " +
                     b.op_name.name + "(x)'");
    if (!b.defs.empty()) b.fail(at, "a string after axis=length: the lengths come last");
    if (b.function)
      b.fail(at, "a third string: a call takes its pattern and at most one more string");
    if (b.pattern) {
      b.function = ast::StringArg{std::string(body), b.source(in)};
      return;
    }
    try {
      b.pattern = ast::PatternArg{parse_with(op_row(b.op).grammar, body), b.source(in)};
    } catch (const PatternError& e) {
      b.fail(at + 1 + e.position(), e.reason());  // the caret under the byte in the file
    }
  }
};

template <>
struct action<statement> {
  template <typename Input>
  static void apply(const Input& in, ProgramBuilder& b) {
    if (b.call) {
      if (!b.defs.empty())
        b.fail(b.defs.front().source.span.begin, "axis=length in a call of block '" + b.op_name.name +
                                                     "': a block takes tensors only");
      if (!b.more_names.empty())
        b.fail(b.more_names.front().source.span.begin,
               "block '" + b.op_name.name + "' gives one tensor: name one result, 'h = " + b.op_name.name + "(x)'");
      b.add(ast::BlockCall{std::move(b.name), std::move(b.op_name), std::move(b.names), b.source(in)});
      return;
    }
    if (!b.pattern && b.op == Op::dropout) {  // "dropout(x, 0.1)": x and its probability, elementwise
      b.pattern = ast::PatternArg{parse_with(Grammar::plain, "..., -> ..."), b.source(in)};
    }
    if (!b.pattern)
      b.fail(b.offset(in) + in.size() - 1,
             "expected a pattern string: 'name = " + b.op_name.name +
                 "(tensors, \"pattern\")'");
    bool any_literal = false;
    for (const auto& l : b.literals) any_literal = any_literal || l.has_value();
    std::vector<std::optional<double>> literals;
    if (any_literal) literals = std::move(b.literals);
    b.add(ast::Statement{std::move(b.name), b.op, std::move(b.op_name), std::move(b.names),
                         std::move(*b.pattern), std::move(b.function), std::move(b.defs),
                         b.source(in), std::move(b.more_names), std::move(literals)});
  }
};

}  // namespace einexpr::grammar::model
