#pragma once
// Model programs: a layer or a model as named statements (grammar in
// parser/program_grammar.hpp, AST in program_ast.hpp).
//
//   # CS336 lecture 2: x --w1--> h1 --w2--> h2 -> loss
//   axes B=1024 D=256 E=256 K=64
//   input x: B D
//   param w1: D E
//   h1 = einsum(x, w1, "B D, D E -> B E")
//   sq = map(h1, "B E -> B E", "square")
//   loss = reduce(sq, "B E ->", "mean")
//
// One declaration or statement per line; '#' starts a comment; blank lines are free.
//   axes NAME=LEN ...            axis lengths, positive integers (overridable later)
//   input NAME: DIMS [DTYPE]     data (no gradient)
//   param NAME: DIMS [DTYPE]     trainable
//   output NAME ...              what the program returns (default: its last statement);
//                                anywhere in the file, naming any tensor of it
//   checkpoint NAME, ...         the statement results a training step keeps for its
//                                backward when it recomputes (program train / cost
//                                --recompute checkpoints): anywhere in the file
//   NAME = OP(TENSOR, ..., "PATTERN"[, "FUNCTION"][, AXIS=LEN ...])
//   NAME, NAME, ... = rearrange(TENSOR, "PATTERN")   a split: one name per output
//   mesh NAME=SIZE[@LINK] ...    the device mesh: "mesh dp=64@ib tp=8@nvlink" (once)
//   shard AXIS:MESHDIM ...       axes split over its dimensions: "shard B:dp H:tp F:tp", each
//                                axis defined above, each once (codegen/mesh.hpp costs it);
//                                AXIS:MESHDIM@NAME+NAME splits it in those statements' results
//                                only: "S:tp@ln1+h" (sequence parallelism)
//   NAME = dropout(TENSOR, P)    P in [0, 1), no pattern: training zeroes each element with
//                                probability P (a seeded mask, kept for the backward, 1 byte
//                                an element) and scales the rest by 1/(1-P); a run is the identity
//   block NAME(CARRY, ARG, ...) over AXIS     a layer written once: the lines up to "end"
//     STATEMENTS, checkpoint lines            (statements and checkpoint lines only) are
//   end                                       its body, applied once per layer of AXIS
//   NAME = BLOCK(TENSOR, ...)                 a call: layer 0 reads the first tensor as CARRY,
//                                             layer l the result of layer l-1 (the body's last
//                                             statement's), every layer the others as ARGs;
//                                             NAME is the last layer's result
// In a body, a declared tensor whose first dim is the block's AXIS ("param w: L D E") reads as
// the layer's slice (w is "D E" there); the program's other names defined before the block read
// whole; the body's names are its own (layer l's tensors are NAME[l].LOCAL once planned).
// A TENSOR argument may be a number (0.125, -1, 1e-5): a 0-d operand of the statement's dtype.
// DIMS: axis names separated by spaces, or compositions "(H K)" (a dim of length H·K); none
// for a scalar. DTYPE: f64 f32 f16 bf16 f8_e4m3 f8_e5m2 i64 i32 bool, last on the line.
// OP: einsum (1..64 tensors), rearrange, reduce (+ a reduction), repeat (one tensor each),
// map (one tensor + a unary function, or two + a binary one), softmax, log_softmax,
// layer_norm, rms_norm (one tensor; the pattern names the axes to normalize along in
// brackets, "B S [D]"; eps is default_eps: 1e-5 for layer_norm as torch's, 1e-6 for
// rms_norm; layer_norm(x, g, b, "B S [D]") and rms_norm(x, g, "B S [D]") add the affine
// part, g and b over the bracketed dims, which the pattern does not name), get_at, add_at, cross_entropy (the indexed axis in brackets, "[V] D, B S -> B S D";
// the indices an i64 or i32 tensor), dropout (above): the rows of the op registry (parser/ops.hpp);
// rearrange of several tensors concatenates ("B S1 D, B S2 D -> B (S1 + S2) D");
// FUNCTION: the reduction or function name; AXIS=LEN defines an axis for the
// whole program, as an axes line would.
//
// Names are checked without shapes (check order = source order, first fault reported):
//   - every tensor and axis is defined before it is used, and defined once: a program reads
//     top-down as it runs, no cycle can exist, and a name means one thing (a fault names
//     both places); axes, input, param, output and checkpoint are keywords, dtype names
//     name no axis;
//   - the op is in the table, with its number of tensors and its FUNCTION (a known name);
//   - the pattern has one operand per tensor and passes check(pattern, op); a unary map's
//     output is its input (map does not move axes); a call's AXIS=LEN appears in its pattern;
//   - output names defined tensors, each once; the program has a statement;
//   - checkpoint names statement results, each once;
//   - a block: its axis is defined, its parameters are new names, its body holds at least one
//     statement (no axis=length: the layers share the program's axes), its last statement
//     makes one tensor, its checkpoint lines name its statements; blocks do not nest; a call
//     names a block defined above with one tensor per parameter.
// Lengths are not checked against each other here (that needs shapes): codegen's
// plan_program (einexpr/codegen/program_plan.hpp) does, in one axis environment.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "einexpr/parser/program_ast.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

/// A malformed or inconsistent model program. what() reads
///   model.ein:6:16: unknown tensor 'w3'
///     h1 = einsum(x, w3, "B D, D E -> B E")
///                    ^
/// and, where a second place matters (a name defined twice, used before its definition),
///   model.ein:4:7: note: first defined here
///     param w1: D E
///           ^
/// Not a PatternError: that one's position() is an offset into a one-line pattern, where a
/// program's fault is a line and column in a file, with maybe a second place to show.
class ProgramError : public Error {
 public:
  /// A place in the program text: byte offset, 1-based line and column (in code points).
  struct Place {
    std::size_t offset = 0;
    std::size_t line = 0;
    std::size_t column = 0;
  };

  /// `reason` at byte `offset` of `text`, the contents of `file` ("" shows "<program>").
  ProgramError(std::string reason, std::string_view file, std::string_view text,
               std::size_t offset);
  /// The same, and a note ("first defined here") at byte `note_offset`.
  ProgramError(std::string reason, std::string_view file, std::string_view text,
               std::size_t offset, std::string note, std::size_t note_offset);
  /// At a node of a parsed program (and a note at another), for the passes after parsing.
  ProgramError(std::string reason, const ast::Program& program, const ast::Source& at);
  ProgramError(std::string reason, const ast::Program& program, const ast::Source& at,
               std::string note, const ast::Source& note_at);

  const std::string& file() const noexcept { return file_; }
  const Place& place() const noexcept { return place_; }
  /// The note and its place, if the error has one.
  const std::string& note() const noexcept { return note_; }
  const std::optional<Place>& note_place() const noexcept { return note_place_; }

 private:
  std::string file_;
  Place place_;
  std::string note_;
  std::optional<Place> note_place_;
};

/// Longest program accepted (bytes); longer texts are refused, not parsed.
inline constexpr std::size_t max_program_length = std::size_t{1} << 20;

/// Parses and checks a program (the rules above). Throws ProgramError; Program::outputs is
/// filled (the last statement if no output line names any).
ast::Program parse_program(std::string_view text, std::string_view file_name = "");

/// The checks of parse_program alone, for a program built in code (its statements' patterns
/// from parse()); fills program.outputs. Errors point at the nodes' Sources, which in a
/// built program may all be 1:1 of an empty text.
void check_program(ast::Program& program);

}  // namespace einexpr
