#pragma once
// The AST of a model program (the language is in program.hpp): plain structs, no PEGTL
// types, every node with its Source (bytes, line and column in Program::text), so that any
// later pass can point a caret at a node, or at two (ProgramError's note).
//
//   axes B=1024 D=256 E=256                  AxesDecl{AxisDef B=1024, D=256, E=256}
//   input x: B D                             TensorDecl{input, x, dims [B] [D]}
//   param w1: D E bf16                       TensorDecl{param, w1, dims [D] [E], dtype bf16}
//   h1 = einsum(x, w1, "B D, D E -> B E")    Statement{h1, einsum, inputs x w1, pattern}
//   output h1                                OutputDecl{h1}
//   checkpoint h1                            CheckpointDecl{h1}
//   block layer(x) over L                    BlockDecl{layer, params x, axis L, body: the
//     y = map(x, w, "B D, D -> B D", "mul")    statements (and checkpoint lines) up to "end"}
//   end
//   h = layer(h0)                            BlockCall{h, layer, inputs h0}
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "einexpr/parser/ast.hpp"

namespace einexpr::ast {

/// Where a node is in a program's text: its bytes, and the line and column of its first
/// byte (both 1-based; the column counts code points, as the caret does).
struct Source {
  Span span;
  std::size_t line = 0;
  std::size_t column = 0;
  friend bool operator==(const Source&, const Source&) = default;
};

struct Identifier {  // a tensor, axis, op or dtype name as written
  std::string name;
  Source source;
  friend bool operator==(const Identifier&, const Identifier&) = default;
};

struct AxisDef {  // "B=1024" on an axes line, or "c=4" in a call
  Identifier name;
  std::int64_t length = 0;  // 1 .. INT64_MAX
  Source source;            // the whole "B=1024"
  friend bool operator==(const AxisDef&, const AxisDef&) = default;
};

struct AxesDecl {  // "axes B=1024 D=256": the program's axis lengths (overridable later)
  std::vector<AxisDef> axes;  // at least one
  Source source;
  friend bool operator==(const AxesDecl&, const AxesDecl&) = default;
};

enum class TensorKind : unsigned char {
  input,  // data: no gradient
  param   // trainable: gradients flow to it
};
const char* name(TensorKind kind) noexcept;

struct Dim {  // one dim of a declared tensor: "D", or the composition "(H K)" of length H·K
  std::vector<Identifier> axes;  // one name, or a composition's names in order (never empty)
  Source source;
  friend bool operator==(const Dim&, const Dim&) = default;
};

struct TensorDecl {  // "input x: B D" or "param w1: D E bf16"
  TensorKind kind = TensorKind::input;
  Identifier name;
  std::vector<Dim> dims;            // none: a scalar
  std::optional<Identifier> dtype;  // "bf16" as written (one of dtype_names); absent: default
  Source source;
  friend bool operator==(const TensorDecl&, const TensorDecl&) = default;
};

struct OutputDecl {  // "output loss h2": what the program returns (default: its last statement)
  std::vector<Identifier> names;  // at least one
  Source source;
  friend bool operator==(const OutputDecl&, const OutputDecl&) = default;
};

struct CheckpointDecl {  // "checkpoint h, y": the tensors the backward keeps when it recomputes
  std::vector<Identifier> names;  // at least one
  Source source;
  friend bool operator==(const CheckpointDecl&, const CheckpointDecl&) = default;
};

struct StringArg {  // a "..." argument other than the pattern: "mean", "gelu"
  std::string text;  // without the quotes
  Source source;     // the literal, quotes included
  friend bool operator==(const StringArg&, const StringArg&) = default;
};

struct PatternArg {  // the pattern argument, parsed
  Pattern pattern;   // pattern.text is the literal's contents; its spans are offsets in it
  Source source;     // the literal, quotes included
  friend bool operator==(const PatternArg&, const PatternArg&) = default;
};

/// Byte `offset` of a statement's pattern text as a byte offset into Program::text.
std::size_t file_offset(const PatternArg& arg, std::size_t offset) noexcept;

struct Statement {  // h1 = einsum(x, w1, "B D, D E -> B E")
  Identifier name;                     // the tensor it defines
  Op op = Op::einsum;                  // from the op table (parser/ops.cpp)
  Identifier op_name;                  // the op as written, for its position
  std::vector<Identifier> inputs;      // the tensor arguments, in order
  PatternArg pattern;
  std::optional<StringArg> function;   // reduce's reduction ("mean"), map's function ("gelu")
  std::vector<AxisDef> lengths;        // "c=4" arguments: axes this statement defines
  Source source;                       // the whole statement
  std::vector<Identifier> more_names;  // a split's further outputs: "q, k, v = rearrange(...)"
  /// Per input, a number given in its place ("map(s, 0.125, ...)": a 0-d operand of the
  /// statement's dtype; its Identifier is the number as written); empty when there is none.
  std::vector<std::optional<double>> literals;
  /// Whether input i is a number.
  bool is_literal(std::size_t i) const noexcept { return i < literals.size() && literals[i].has_value(); }
  friend bool operator==(const Statement&, const Statement&) = default;
};

/// "block layer(x, mask) over L" ... "end": statements applied once per layer of axis L, in
/// sequence (a scan). Layer l reads its first parameter from layer l-1's result (layer 0 from
/// the call's first argument); the others are the call's arguments, the same for every layer.
/// A declared tensor whose first dim is L ("param w: L D E") reads, inside the block, as its
/// layer's slice ("w" is D E in layer l); every other name of the program defined before the
/// block reads whole.
struct BlockDecl {
  Identifier name;
  std::vector<Identifier> params;           // at least one; the first is carried layer to layer
  Identifier axis;                          // the layer axis
  std::vector<Statement> statements;        // the body in order (at least one); the last one's
                                            // result is the block's
  std::vector<CheckpointDecl> checkpoints;  // checkpoint lines of the body (its statements)
  Source source;                            // the header line "block layer(x) over L"
  Source end;                               // the "end" line
  friend bool operator==(const BlockDecl&, const BlockDecl&) = default;
};

struct BlockCall {  // "h = layer(h0, mask)": the block over its axis, layer 0 first
  Identifier name;                 // the last layer's result
  Identifier block;
  std::vector<Identifier> inputs;  // one per block parameter
  Source source;
  friend bool operator==(const BlockCall&, const BlockCall&) = default;
};

struct MeshDimDef {  // "tp=8@nvlink"
  Identifier name;
  std::int64_t size = 1;
  Identifier link;          // empty name when none is given
  Source source;
  friend bool operator==(const MeshDimDef&, const MeshDimDef&) = default;
};

struct MeshDecl {  // "mesh dp=64@ib tp=8@nvlink": the devices the program is laid out over
  std::vector<MeshDimDef> dims;  // at least one
  Source source;
  friend bool operator==(const MeshDecl&, const MeshDecl&) = default;
};

struct ShardRule {  // "H:tp": axis H split over mesh dimension tp
  Identifier axis;
  Identifier dim;
  std::vector<Identifier> at;  // "S:tp@ln1+h": in these statements' results only (sequence parallelism)
  friend bool operator==(const ShardRule&, const ShardRule&) = default;
};

struct ShardDecl {  // "shard B:dp H:tp F:tp"
  std::vector<ShardRule> rules;  // at least one
  Source source;
  friend bool operator==(const ShardDecl&, const ShardDecl&) = default;
};

using Item = std::variant<AxesDecl, TensorDecl, OutputDecl, CheckpointDecl, Statement, BlockDecl, BlockCall, MeshDecl,
                          ShardDecl>;

struct Program {
  std::string file;                  // the file name for messages ("" if none was given)
  std::string text;                  // the program as given; every Source points into it
  std::vector<Item> items;           // declarations and statements, in source order
  std::vector<Identifier> outputs;   // the output lines' names in order, or else the last
                                     // statement's name (with that statement's Source)
  std::vector<Identifier> checkpoints;  // the checkpoint lines' names in order (statement results)
  friend bool operator==(const Program&, const Program&) = default;
};

/// The dtype names a declaration accepts, as einexpr spells them.
inline constexpr std::string_view dtype_names[] = {"f64",     "f32",     "f16", "bf16", "f8_e4m3",
                                                   "f8_e5m2", "i64",     "i32", "bool"};

/// Where tensor `name` is defined: the TensorDecl, Statement or BlockCall among
/// program.items (not a block's own statements), or nullptr. (A checked program defines
/// each name once.)
const Item* find_tensor(const Program& program, std::string_view name) noexcept;
/// The block called `name`, or nullptr.
const BlockDecl* find_block(const Program& program, std::string_view name) noexcept;
/// Where axis `name` gets its length: an AxisDef of an axes line or of a call, or nullptr.
const AxisDef* find_axis(const Program& program, std::string_view name) noexcept;
/// Every axis definition, axes lines and calls alike, in source order.
std::vector<const AxisDef*> axis_definitions(const Program& program);

/// Canonical text: one item per line in source order, single spaces, canonical patterns
/// (ast::to_string), no comments or blank lines. parse_program of it gives the same
/// program up to Sources and pattern spacing.
std::string to_string(const Program& program);
std::string to_string(const Item& item);

}  // namespace einexpr::ast
