#pragma once
// The command line's own syntax, turned into einexpr values: NAME=LEN lists, an
// expression's OP PATTERN [REDUCTION] NAME=LEN... arguments, roofline's
// "OP|PATTERN|NAME=LEN,..." expressions, dtypes and devices.
//
// A malformed argument (the text of the command line itself) throws UsageError: exit 2.
// A well-formed name that einexpr does not know (a dtype, a device, a reduction, an op)
// throws einexpr::Error from the library with the list of valid names: exit 1.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "einexpr/einexpr.hpp"

namespace einexpr::cli {

/// The command line is malformed: exit 2, one line on stderr.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// --recompute none|checkpoints|auto [--checkpoint NAME,...] [--memory-limit BYTES], as program
/// cost and program train read them (codegen/recompute.hpp).
struct RecomputeArgs {
  std::string mode;                      // "": the file's checkpoint lines, else none
  std::vector<std::string> checkpoints;  // --checkpoint: what checkpoints keeps (else the file's lines)
  bool checkpoints_given = false;        // checkpoints is the list even when empty (Python's [])
  std::string memory_limit;              // auto: "24MiB", "1500000"
  int search_budget = -1;                // auto: timelines for the branch and bound (-1: the default)
};
/// The options `a` names for `program`; UsageError for a mode that is not one, --checkpoint
/// without checkpoints, --memory-limit without auto (and auto without it).
std::optional<RecomputeOptions> recompute_options(const RecomputeArgs& a, const ast::Program& program);

/// "h=8" -> {"h", 8}. NAME is an identifier, LEN a non-negative decimal integer that fits
/// int64; a name given twice is an error. Throws UsageError naming the argument.
AxisLengths parse_lengths(const std::vector<std::string>& args);

/// An expression given by sizes: what cost, explain, bench and roofline take.
struct ExprSpec {
  std::string op;  // "einsum", "rearrange", "reduce", "repeat", "map"
  std::string pattern;
  Reduction reduction = Reduction::sum;
  std::int64_t correction = 1;  // reduce var / std
  std::string function;         // map: a unary function (one operand) or a binary one (two)
  double eps = -1;              // layer_norm / rms_norm (-1: the default)
  std::int64_t ignore_index = -100;  // cross_entropy
  double p = 0.5;                    // dropout
  AxisLengths sizes;            // given as NAME=LEN; with files, completed by plan_expr()
  std::vector<std::string> files;  // IN.npy per operand, in place of their axes' NAME=LEN
  std::vector<Shape> shapes;       // the files' shapes (headers only: no data is read)
  std::optional<DType> files_dtype;  // the files' dtype (all alike, an index operand's aside)
  std::vector<DType> file_dtypes;    // each file's own (an index operand's i64 / i32)

  /// What the planner takes (without lengths: plan_from_sizes picks the ones the pattern uses).
  /// A map's function is parsed here: Error for an unknown one or one of the other arity.
  OpSpec op_spec() const;
};

/// OP PATTERN [REDUCTION | FUNCTION] NAME=LEN...: `rest` is what follows the pattern. A
/// REDUCTION (the first of `rest` without '=') is allowed only for reduce, where it
/// defaults to sum; map needs a FUNCTION there. `correction` (-1: not given) is allowed
/// only for reduce var and std. An argument ending in ".npy" is an operand's file, in
/// operand order: its header gives that operand's shape and the dtype (as numpy's mmap
/// reads it, without the data), in place of NAME=LEN for its axes.

ExprSpec parse_expr_args(const std::string& op, const std::string& pattern, const std::vector<std::string>& rest,
                         std::int64_t correction = -1, double eps = -1, std::int64_t ignore_index = -100,
                         double p = -1);

/// The expression's plan: from its sizes, or from its files' shapes (then e.sizes gets every
/// named axis's length, for the title). Errors carry the pattern, the shapes and the files.
Plan plan_expr(ExprSpec& e, DType dtype);
/// --dtype when given, else the files' dtype, else f32.
DType expr_dtype(const std::string& text, const ExprSpec& e);

/// roofline's "OP|PATTERN|NAME=LEN,NAME=LEN", "reduce|PATTERN|REDUCTION|NAME=LEN,..." or
/// "map|PATTERN|FUNCTION|NAME=LEN,...".
ExprSpec parse_expr_text(const std::string& text);

/// A map's IN.npy [IN2.npy] [NAME=LEN...] arguments: NAME=LEN where the argument is an
/// identifier, '=' and digits, a file otherwise.
struct MapArgs {
  std::vector<std::string> files;
  AxisLengths lengths;
};
MapArgs split_map_args(const std::vector<std::string>& args);
/// rearrange's and the indexed ops' IN.npy... [NAME=LEN...] arguments: the first `files` (one
/// per pattern operand) are files, the rest lengths (UsageError for a malformed one).
struct FileArgs {
  std::vector<std::string> files;
  AxisLengths lengths;
};
FileArgs split_file_args(const std::vector<std::string>& args, std::size_t files);

/// dtype_from_name, which lists the valid names when it throws DTypeError.
DType parse_dtype(const std::string& text);

/// "cpu", "cuda", "cuda:N" -> a Device that can run here; DeviceError (exit 1) when the
/// build has no CUDA, no GPU is visible, or the index is out of range.
Device parse_run_device(const std::string& text);

/// Fails early (before reading or computing anything) when `path` cannot be an output
/// file: its directory is missing or it is a directory. Throws Error (exit 1).
void check_output_path(const std::string& path);

/// Reads and parses a model program file (parse_program, named by its path). Error (exit 1)
/// when it cannot be read or is longer than max_program_length; ProgramError when it is
/// malformed.
ast::Program read_program_file(const std::string& path);

/// softmax, log_softmax, layer_norm, rms_norm: the ops that take a bracketed pattern.
bool is_normalization(std::string_view op);
/// --eps when given (>= 0), else the normalization's default (layer_norm 1e-5, rms_norm 1e-6).
double eps_or_default(Normalization kind, double eps);

}  // namespace einexpr::cli
