#pragma once
// A model program planned: one axis environment for the whole program, every tensor's
// shape and dtype, every statement's Plan (through the one plan() entry, on the layouts its
// inputs really have, views included), the buffers they live in and how long each lives.
// cost(ProgramPlan) (program_cost.hpp) accounts for it; lib's CompiledProgram runs it.
//
//   axes B=1024 D=256 E=256 K=64        the environment: B=1024 ... (overridable)
//   input x: B D                        tensor x [1024, 256] f32, an external buffer
//   param w1: D E                       tensor w1 [256, 256] f32, requires a gradient
//   h1 = einsum(x, w1, "B D, D E -> B E")   statement 0: Plan; h1 [1024, 256] in buffer 3
//
// The semantic rules (beyond parse_program's name checks), each a ProgramError at the place
// to blame, with a note at the other place where two disagree:
//   - every dim of a tensor a statement reads has the length its pattern gives it, from the
//     one environment: "axis 'D' is 128 (line 2) but dim 1 of 'h1' is 256 (E, line 6)";
//     an operand has as many dims as its tensor (an ellipsis takes the rest);
//   - the tensors of a statement have one dtype; a param's dtype is a float (it is trained);
//   - the planner's own rules (a reduction a dtype cannot do, a repeat's unknown length...).
// Lengths given from outside (ProgramOptions::axes, and the shapes of given tensors) replace
// the program's: an override names an axis the program defines; a given tensor's shape binds
// each of its single-axis dims, and two sources that disagree are an error naming both.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "einexpr/codegen/plan.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/program_ast.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

/// A tensor whose shape (and dtype) is given from outside: a run's input, read from `origin`.
struct GivenTensor {
  std::string name;    // an input or param of the program
  Shape shape;
  DType dtype = DType::f32;
  std::string origin;  // for messages: "x.npy", "the tensor given for 'x'"
};

struct ProgramOptions {
  AxisLengths axes = {};           // NAME=LEN overrides of axes the program defines
  DType dtype = DType::f32;        // of declared tensors without a dtype (and no given one)
  std::vector<GivenTensor> given = {};  // their shapes bind axes; their dtypes are the tensors'
  /// A training step's forward (cost, train): `y = dropout(x, p)` with p > 0 is two statements,
  /// y.mask (bool, drawn from a seed tensor y.seed the trainer sets each step) and y (x scaled
  /// where the mask keeps it), so the backward keeps the 1-byte mask. Not training (a run, as
  /// torch's eval()): dropout is the identity, y a view of x.
  bool training = true;
  /// One device's part of axes split over a device mesh (lib's mesh run; empty elsewhere): per
  /// axis, the first row this device holds (AxisPart::first) and the whole axis' length
  /// (AxisPart::total). A lookup (get_at, add_at) or a cross_entropy along such an axis takes
  /// it as its step's AxisPart, tagged with the statement's index (plan.hpp).
  std::vector<std::pair<std::string, AxisPart>> parts = {};
};

enum class TensorRole : unsigned char {
  input,     // declared `input`: data, no gradient
  param,     // declared `param`: trainable
  statement,  // the result of a statement
  constant,   // a number written in place of a tensor: 0-d, its value in ProgramTensor::value
  layer       // one layer's slice of a declared tensor stacked over a block's layer axis
              // ("param w: L D E" read in a block over L): a view of it, named "w[3]"
};
const char* name(TensorRole role) noexcept;

struct ProgramTensor {
  std::string name;
  TensorRole role = TensorRole::input;
  int statement = -1;         // statement results: the statement's index
  DType dtype = DType::f32;
  Shape shape;
  std::vector<std::string> dims;  // each dim as written: "B", "(H K)" (none for a scalar)
  int buffer = 0;             // the ProgramBuffer it lives in
  Layout layout;              // within that buffer (a view's strides and offset)
  bool requires_grad = false; // a param, or computed from one (floats only)
  double value = 0;           // a constant's value
  int stacked = -1;           // a layer slice: the declared tensor it is a slice of
  int layer = -1;             // and which layer (its offset there: layer · stride 0)
  int dropout = -1;           // a dropout's seed (a 0-d i64 constant the trainer sets before
                              // each step): which dropout of the program, 0, 1, ... in planning
                              // order (random::stream's k)
  ast::Source source;         // where it is declared or made
};

/// Memory a program's tensors live in: an input's or param's own (external: the caller's),
/// or a statement's temporary. Views share their source's buffer.
struct ProgramBuffer {
  bool external = false;
  int tensor = -1;            // external: the input or param; else the statement's result, if
                              // this buffer holds it (-1: a temporary inside a statement)
  int statement = -1;         // not external: the statement whose plan makes it
  std::int64_t bytes = 0;
  int first_use = -1;         // the statements that make and last read it (-1: before the
  int last_use = -1;          // first); a program output's buffer: statements.size()
};

struct PlannedStatement {
  std::string name;           // the tensor it defines
  OpSpec spec;
  std::string pattern;        // canonical text
  Plan plan;                  // on the layouts its inputs have, in their dtype
  std::vector<int> inputs;    // tensor ids, in argument order
  int output = 0;             // tensor id
  std::vector<int> buffers;   // plan buffer i -> ProgramBuffer id
  ast::Source source;
  int call = -1;              // in a block's layer: the call (ProgramPlan::blocks), else -1
  int layer = -1;             // which layer
  int body = -1;              // its place among the layer's planned statements
};

/// A block call "h = layer(h0)" unrolled: `layers` runs of `per_layer` planned statements
/// from `first` on, layer l's named "h[l].NAME" (the call's own name "h" an alias of the last
/// layer's result). Each body statement is planned once per distinct input layout (layer 0
/// may read a strided carry), not once per layer; every layer reuses that plan.
struct ProgramBlock {
  std::string block;          // the block's name
  std::string name;           // the call's result ("h")
  std::string axis;           // the layer axis
  std::int64_t layers = 0;
  int first = 0;              // its first planned statement
  int per_layer = 0;          // planned statements per layer
  ast::Source source;         // the call
};

struct ProgramPlan {
  ast::Program program;                // as checked (messages point into its text)
  AxisLengths axes;                    // the environment, in definition order, overrides applied
  std::vector<ProgramTensor> tensors;  // declarations and statement results, in source order
  std::vector<PlannedStatement> statements;
  std::vector<ProgramBuffer> buffers;
  std::vector<int> outputs;            // tensor ids, as the program names them
  std::vector<ProgramBlock> blocks;    // the block calls, in order
  std::vector<std::pair<std::string, int>> aliases;  // a call's name -> its last layer's result
  std::vector<std::string> checkpoints;  // the checkpoint lines' tensors, a block's for each layer
  int plans_made = 0;                  // plan() calls: statements, less the layers that reused one
  int dropouts = 0;                    // the dropouts drawn in a step (seed tensors)

  /// The tensor called `name` (or an alias of it), or -1.
  int tensor(std::string_view name) const noexcept;
  const ProgramTensor& tensor(int id) const { return tensors.at(static_cast<std::size_t>(id)); }
  /// "B=1024 D=256 E=256 K=64"
  std::string axes_text() const;
  /// "'h1' [B=1024, E=256] f32": a tensor for messages and listings.
  std::string describe(int tensor) const;
};

/// The most statements a program plans, its blocks' layers unrolled: a call that would pass it
/// is a ProgramError at the call (a layer axis of a billion would otherwise take the memory).
inline constexpr std::int64_t max_program_statements = std::int64_t{1} << 15;

/// Plans a checked program (parse_program's result). Throws ProgramError at the place to
/// blame (the rules above), Error for an override naming no axis of the program or a given
/// tensor that names no input or param.
ProgramPlan plan_program(const ast::Program& program, const ProgramOptions& options = {});

}  // namespace einexpr
