#pragma once
// Plan: the immutable, printable, costable result of planning one expression.
//
// A plan is a list of values and the steps that make them. A value is a strided view
// (Layout) of one buffer; a buffer is an input's memory or a temporary the plan
// allocates, and has a dtype (index tensors are i64 or i32 beside f32 data; Plan::dtype is
// the data's). Values 0..n-1 are the inputs. Each step makes one new value, in a new
// temporary or (CopyStep into a slice, ScatterAddStep, JoinStep) in one an earlier step made:
//
//   ViewStep      dst views src's buffer with other shape/strides (moves nothing)
//   CopyStep      dst gets src's elements; src may broadcast (stride 0), so a repeat is a
//                 copy from a stride-0 view. dst is a new buffer, or a slice of a temporary
//                 that later copies fill too (a concatenation)
//   FillStep      dst (a new buffer) = one value everywhere (the zeros a scatter-add starts from)
//   GatherStep    get_at: dst = src at the integer indices `index` along one axis
//   ScatterAddStep  add_at: updates added into a temporary at the integer indices
//   JoinStep      dst views the buffer its parts (CopySteps into slices) filled; moves nothing
//   CrossEntropyStep  per-row loss of logits against integer targets, or its dlogits
//   ContractStep  dst[B.., m, n] = sum_k a[B.., m, k] * b[B.., k, n]: a batched GEMM whose
//                 m, n, k are one dim each; batch dims are any number, any strides
//   ReduceStep    dst = src reduced over some of its dims
//   MapStep       dst = f(src) or f(src0, src1), elementwise, srcs broadcast to dst's shape;
//                 or a GradOp: a backward pass's elementwise derivative
//   EmbedStep     dst (a new buffer) = zeros, with src written into a view of it (a
//                 gradient put back on a diagonal)
//   NormStep      dst = softmax, log_softmax, layer_norm or rms_norm of src along some of
//                 its dims, or the backward pass of one (from dY and Y or X)
//   RandomStep    dst (a new bool buffer) = dropout's keep mask, drawn from a 0-d i64 seed
//   MaskStep      dst = src · (mask ? scale : 0): dropout, and its gradient (src = dY)
//
// Axes are ids into the plan's AxisTable (axes.hpp): each value's dims name the axes they
// compose, and a ContractStep names the axes it sums.
//
// The output is one value; it may view an input's buffer (a view result shares storage).
// to_string(plan) is the format of `einexpr explain` and of golden tests.
//
// The contract between the planner and the lowerings (CPU and CUDA implement the same):
//   - Every value of a step may have any strides (0 allowed in sources: broadcast) and an
//     offset; a lowering must be correct for all of them and is fast where the planner
//     arranged unit strides. Destinations are values in temporaries made by that step;
//     their strides never overlap (but need not be contiguous).
//   - ContractStep: a is [B.., m, k], b is [B.., k, n], dst is [B.., m, n], B = batch_dims
//     dims. Kinds gemm / batched_gemm: the planner gives a and b a unit stride in one of
//     their last two dims (dst too), so a GEMM reads them in place.
//   - ReduceStep: dst has src's dims minus `axes`, in order. mean divides by the product
//     of the reduced lengths. sum/prod of no elements give 0/1; the planner rejects
//     max/min over no elements. var is torch.var's: the sum of squared deviations from
//     the mean over max(0, n - correction) (correction 1 by default, as torch; 0 is the
//     population variance), numerically stable (two passes per block of the row, blocks
//     combined by Chan's formula); std its square root; logsumexp max-subtracted,
//     m + log(sum exp(x - m)) with m the maximum (-inf where every x is -inf or there is
//     none, +inf where some x is +inf; NaN wins). var and std of no elements are NaN.
//   - Arithmetic: f64 in f64; f32 and the reduced floats (f16, bf16, fp8) in f32,
//     rounded to the dtype at the end of the step (round to nearest even), except that sums
//     (reduce sum / mean / prod, var's moments, logsumexp's sum of exponentials, the
//     normalizations' row sums, a generic contraction's dot products) accumulate in f64 and
//     round once: as accurate as numpy's pairwise sums or more (tests/lib/
//     test_reduce_accuracy.cpp); f64 sums of a run add in compensated blocks; i64/i32 in
//     int64 (exact; wraps like numpy on overflow). The planner rejects what a dtype cannot
//     do with DTypeError: einsum and maps on bool, mean/var/std/logsumexp on integers,
//     any/all on non-bool, sum/prod/mean on bool, float-only functions (exp, log, gelu...)
//     on integers.
//   - MapStep unary functions: relu max(x,0); gelu 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))
//     (torch's approximate='tanh'); exp; log; square; sqrt; rsqrt 1/sqrt(x); neg; abs;
//     sigmoid 1/(1+exp(-x)); tanh; silu x*sigmoid(x); reciprocal 1/x; gelu_erf
//     0.5x(1+erf(x/sqrt(2))) (torch's default nn.GELU()); erf; softplus log(1+exp(x)), and
//     x itself where x > 20 (torch's default beta=1, threshold=20). At -inf, gelu, gelu_erf
//     and silu give -0 (their limit; torch gives NaN). Binary: add sub mul div maximum
//     minimum (integer div truncates toward zero; integer division by zero gives 0, as numpy).
//     The CPU computes the transcendental ones with Sleef's vector functions; each
//     function's error bound in ULPs is in codegen/lower/cpu/vec_math.hpp.
//   - GatherStep: dst[p] = src'[p] where src' is src shifted by index[p]·stride along the
//     indexed axis: src and index have dst's shape (stride 0 along the dims they lack). An
//     index outside [0, length) is an IndexError naming the position and the value, raised
//     before anything is written. ScatterAddStep: for every position p of the updates' shape,
//     acc'[p] += updates[p], acc' = acc shifted by index[p]·stride; the same IndexError;
//     repeated indices add up (in an order that may differ from torch's for floats).
//   - CrossEntropyStep along dim `axis` of the logits (a row: one index of the other dims);
//     targets, dY and the loss have the logits' dims without it. lse is a row's log-sum-exp
//     (max-subtracted): forward loss = lse - logits[target]; backward dlogits =
//     dY·(exp(logits - lse) - onehot(target)), lse computed again from the row (which the
//     kernel then reads from cache: one read of the logits, one write). A row whose target is
//     ignore_index has loss 0 and gradient 0 (torch's reduction='none'); any other target
//     outside [0, classes) is an IndexError. Accumulates in f32 (f64 for f64).
//   - NormStep, along the dims `axes` (one row per index of the others): softmax
//     exp(x - m) / sum exp(x - m), m the row's maximum; log_softmax x - m - log sum
//     exp(x - m); layer_norm (x - mean) / sqrt(var + eps), var the population variance;
//     rms_norm x / sqrt(mean(x²) + eps). A row with NaN or +inf is NaN (as torch); softmax
//     of a row of -inf too. Backward (srcs dY, then Y for softmax and log_softmax, X for the
//     norms): y·(dY - sum(dY·y)); dY - exp(y)·sum(dY); r·(dY - mean(dY) - x̂·mean(dY·x̂)),
//     x̂ = (x - mean)·r, r = 1/sqrt(var + eps) (rms_norm: without the mean terms). Floats only.
//   - RandomStep: dst is contiguous; its element at row-major position i is
//     random::keep(seed, i, threshold) (codegen/random.hpp), seed the value the 0-d i64 source
//     holds when the step runs. MaskStep: src and dst floats of one dtype, mask bool, all of
//     dst's shape (any strides); dst = src · (mask ? scale : 0), in f32 (f64 for f64), rounded
//     once: torch's x · noise, so a NaN or inf of src that is dropped gives NaN, as there.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "einexpr/codegen/axes.hpp"
#include "einexpr/parser/ast.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

enum class Reduction : unsigned char { sum, mean, max, min, prod, any, all, var, std, logsumexp };
const char* name(Reduction reduction) noexcept;
/// "sum", "mean", "max", "min", "prod", "any", "all", "var", "std", "logsumexp"; throws
/// Error listing them otherwise.
Reduction parse_reduction(std::string_view text);

/// Normalizations along some dims (NormStep, defined in the contract above).
enum class Normalization : unsigned char { softmax, log_softmax, layer_norm, rms_norm };
const char* name(Normalization n) noexcept;
/// "softmax", "log_softmax", "layer_norm", "rms_norm"; throws Error listing them otherwise.
Normalization parse_normalization(std::string_view text);
/// layer_norm and rms_norm add an eps; softmax and log_softmax have none.
constexpr bool takes_eps(Normalization n) noexcept {
  return n == Normalization::layer_norm || n == Normalization::rms_norm;
}
/// The eps the public ops default to: torch's layer_norm 1e-5; rms_norm 1e-6 (LLaMA's); 0.
constexpr double default_eps(Normalization n) noexcept {
  return n == Normalization::layer_norm ? 1e-5 : n == Normalization::rms_norm ? 1e-6 : 0.0;
}

/// Elementwise functions of one argument (defined in the contract above).
enum class UnaryOp : unsigned char {
  relu, gelu, exp, log, square, sqrt, rsqrt, neg, abs, sigmoid, tanh, silu, reciprocal,
  gelu_erf, erf, softplus
};
/// Every UnaryOp, in declaration order.
inline constexpr UnaryOp all_unary_ops[] = {
    UnaryOp::relu, UnaryOp::gelu,    UnaryOp::exp,  UnaryOp::log,  UnaryOp::square,     UnaryOp::sqrt,
    UnaryOp::rsqrt, UnaryOp::neg,    UnaryOp::abs,  UnaryOp::sigmoid, UnaryOp::tanh,    UnaryOp::silu,
    UnaryOp::reciprocal, UnaryOp::gelu_erf, UnaryOp::erf, UnaryOp::softplus};
/// Elementwise functions of two arguments.
enum class BinaryOp : unsigned char { add, sub, mul, div, maximum, minimum };
const char* name(UnaryOp op) noexcept;
const char* name(BinaryOp op) noexcept;
/// Throws Error listing the valid names.
UnaryOp parse_unary_op(std::string_view text);
BinaryOp parse_binary_op(std::string_view text);
/// A map's function for `operands` operands: a UnaryOp for one, a BinaryOp for two. Throws
/// Error for an unknown name (listing both kinds) or a function of the other arity.
std::variant<UnaryOp, BinaryOp> parse_map_function(std::string_view text, std::size_t operands);

struct PlanBuffer {
  int input = -1;              // >= 0: input `input`'s memory; -1: a temporary
  std::int64_t elements = 0;   // temporaries: size in elements
  DType dtype = DType::f32;    // of its elements (every value in it has this dtype)
  friend bool operator==(const PlanBuffer&, const PlanBuffer&) = default;
};

struct Value {
  int buffer = 0;
  Layout layout;               // relative to the buffer's base
  std::vector<DimAxes> dims;   // one per dim: the axes (ids in Plan::axes) it composes
  friend bool operator==(const Value&, const Value&) = default;
};

/// Elementwise functions of backward passes: what gradient plans compute per element
/// (backward.hpp). The first source is always dY; the others as each kind says.
struct GradOp {
  enum class Kind : unsigned char {
    scale,         // dY · scalar                                  srcs dY     (reduce mean)
    unary,         // dY · f'(v): v is Y where unary_gradient_reads_y(fn), else X
                   //                                              srcs dY, v  (map f)
    select_equal,  // X == Y ? dY : 0                              srcs dY, X, Y (reduce max, min)
    prod,          // dY · Y / X                                   srcs dY, Y, X (reduce prod)
    div_rhs,       // -dY · Y / B                                  srcs dY, Y, B (map div, operand 2)
    select,        // operand's share of `of` (maximum / minimum): dY where it alone wins,
                   // dY / 2 on a tie (torch's rule), else 0       srcs dY, A, B
    centered,      // dY · scalar · (X - M), M the mean             srcs dY, X, M (reduce var: dY;
                   //                                              std: dY / Y)
    softmax,       // dY · exp(X - Y)                              srcs dY, X, Y (reduce logsumexp)
  };
  Kind kind = Kind::scale;
  UnaryOp fn = UnaryOp::relu;        // unary: f
  BinaryOp of = BinaryOp::maximum;   // select: maximum or minimum
  int operand = 0;                   // select: 0 for A, 1 for B
  double scalar = 1;                 // scale, centered
  friend bool operator==(const GradOp&, const GradOp&) = default;
};
/// True when the derivative of f is cheapest from y = f(x) (exp, sigmoid, tanh, sqrt, rsqrt,
/// reciprocal), so a unary GradOp reads Y, else X.
bool unary_gradient_reads_y(UnaryOp fn) noexcept;
/// "scale", "d.relu", "select_equal", "d.maximum.a", ...: for printing.
std::string name(const GradOp& op);
/// How many sources a GradOp reads (dY included).
int arity(const GradOp& op) noexcept;

struct ViewStep {
  int src = 0, dst = 0;
  friend bool operator==(const ViewStep&, const ViewStep&) = default;
};
struct CopyStep {
  int src = 0, dst = 0;
  friend bool operator==(const CopyStep&, const CopyStep&) = default;
};
struct ContractStep {
  /// gemm: no batch dims; batched_gemm: batch dims; generic: a strided loop, for shapes a
  /// GEMM would waste (no contracted dim and a missing m or n: Hadamard-like products).
  enum class Kind : unsigned char { gemm, batched_gemm, generic };
  int a = 0, b = 0, dst = 0;
  int batch_dims = 0;          // leading dims of a, b and dst that are batch dims
  Kind kind = Kind::gemm;
  std::vector<AxisId> summed;  // the axes the k dim composes: summed here (empty: none,
                               // an outer or Hadamard product)
  friend bool operator==(const ContractStep&, const ContractStep&) = default;
};
struct ReduceStep {
  int src = 0, dst = 0;
  Reduction op = Reduction::sum;
  std::vector<int> axes;       // dims of src reduced; dst has the others, in order
  std::int64_t correction = 1; // var and std: the divisor is max(0, n - correction)
  friend bool operator==(const ReduceStep&, const ReduceStep&) = default;
};
struct MapStep {
  std::vector<int> srcs;       // 1 (unary), 2 (binary) or a GradOp's arity, each with dst's shape
  int dst = 0;
  std::variant<UnaryOp, BinaryOp, GradOp> op;
  friend bool operator==(const MapStep&, const MapStep&) = default;
};
/// dst (a new buffer) = `value` in every element.
struct FillStep {
  int dst = 0;
  double value = 0;
  friend bool operator==(const FillStep&, const FillStep&) = default;
};
/// One device's part of an axis split over a device mesh (lib's mesh run sets it on a device's
/// plans; the planner never does): the table of a gather or a scatter-add, or the logits of a
/// cross_entropy, hold the rows (classes) [first, first + length) of `total`. Indices are
/// checked against [0, total); one outside the part reads a row of zeros (gather), adds nothing
/// (scatter-add) or has no target logit here (cross_entropy, whose rows' statistics the kernel
/// completes over the devices through Workspace::collectives, `tag` naming the statement).
/// total 0: the whole axis (every plan but a mesh device's).
struct AxisPart {
  std::int64_t first = 0, total = 0;
  int tag = -1;
  bool split() const noexcept { return total > 0; }
  friend bool operator==(const AxisPart&, const AxisPart&) = default;
};
/// get_at's gather: dst[p] = element src[p] + index[p]·stride of src's buffer. src views the
/// table with dst's shape and without the indexed axis (stride 0 along the dims only the
/// indices have); index views the integer indices with dst's shape (stride 0 along the dims
/// only the table has); the indexed axis has `length` elements `stride` apart.
struct GatherStep {
  int src = 0, index = 0, dst = 0;
  std::int64_t length = 0, stride = 0;
  AxisPart part = {};
  friend bool operator==(const GatherStep&, const GatherStep&) = default;
};
/// add_at's scatter-add, in place: acc views a temporary (made by an earlier Copy or Fill)
/// with the updates' shape and without the indexed axis; index views the indices with that
/// shape. Element acc[p] + index[p]·stride gets updates[p] added. dst is the whole table: a
/// value of acc's buffer that this step makes.
struct ScatterAddStep {
  int acc = 0, index = 0, updates = 0, dst = 0;
  std::int64_t length = 0, stride = 0;
  AxisPart part = {};
  friend bool operator==(const ScatterAddStep&, const ScatterAddStep&) = default;
};
/// A concatenation's result: dst views the temporary its parts were copied into (each part
/// a CopyStep into a slice of it). Moves nothing; the parts are its sources.
struct JoinStep {
  std::vector<int> parts;
  int dst = 0;
  friend bool operator==(const JoinStep&, const JoinStep&) = default;
};
/// cross_entropy along dim `axis` of the logits (contract above). Forward srcs: logits,
/// targets; dst the loss. Backward srcs: dY, logits, targets, and optionally the forward's
/// loss (each row's log-sum-exp is loss + logits[target]: one pass); dst dlogits.
struct CrossEntropyStep {
  std::vector<int> srcs;
  int dst = 0;
  bool backward = false;
  int axis = 0;                       // the classes' dim of the logits
  std::int64_t ignore_index = -100;   // torch's default
  AxisPart part = {};                 // the classes'
  friend bool operator==(const CrossEntropyStep&, const CrossEntropyStep&) = default;
};
/// dst (a new buffer) is zeros except where its view `into` (same buffer, src's shape)
/// gets src's elements: a gradient written back onto a diagonal ("i i ->" backward).
struct EmbedStep {
  int src = 0, dst = 0;
  Layout into;                 // a view of dst's buffer with src's shape (strides may add up)
  friend bool operator==(const EmbedStep&, const EmbedStep&) = default;
};
/// dst = a normalization of srcs[0] along `axes`, or (backward) its dX from srcs dY and Y
/// (softmax, log_softmax) or X (layer_norm, rms_norm). Every src has dst's shape.
struct NormStep {
  std::vector<int> srcs;
  int dst = 0;
  Normalization kind = Normalization::softmax;
  bool backward = false;
  std::vector<int> axes;       // the dims normalized along (a row: one index of the others)
  double eps = 0;              // layer_norm, rms_norm: added to the variance / mean square
  friend bool operator==(const NormStep&, const NormStep&) = default;
};
/// dropout's mask: dst (a new contiguous bool buffer) true where an element is kept, drawn
/// from the seed the 0-d i64 value `seed` holds (contract above).
struct RandomStep {
  int seed = 0, dst = 0;
  double p = 0;                // the probability of false (dropped)
  friend bool operator==(const RandomStep&, const RandomStep&) = default;
};
/// dst = src · (mask ? scale : 0), elementwise; mask bool, every value of dst's shape.
struct MaskStep {
  int src = 0, mask = 0, dst = 0;
  double scale = 1;            // 1 / (1 - p)
  friend bool operator==(const MaskStep&, const MaskStep&) = default;
};
using Step = std::variant<ViewStep, CopyStep, ContractStep, ReduceStep, MapStep, EmbedStep, NormStep, FillStep,
                          GatherStep, ScatterAddStep, JoinStep, CrossEntropyStep, RandomStep, MaskStep>;

/// The source values a step reads, in order.
std::vector<int> sources(const Step& step);
/// The value a step makes.
int destination(const Step& step) noexcept;
/// Calls f(int& v) on every value a step reads (then on its destination when `with_dst`).
void for_each_value(Step& step, const std::function<void(int&)>& f, bool with_dst);

/// What an einsum was ordered by (plan/contract.cpp); one operand: an empty path.
struct ContractionInfo {
  std::vector<std::vector<AxisId>> operands;  // each operand's distinct axes (diagonals taken)
  std::vector<AxisId> output;                 // the output's axes
  std::vector<std::pair<int, int>> path;      // node ids: 0..n-1 operands, then results in order
  friend bool operator==(const ContractionInfo&, const ContractionInfo&) = default;
};

/// Where a split's or an unpack's output lies in its input: the input's dim `whole` (an axis
/// of the plan) cut into parts of these lengths along it, the output being part `part`.
struct SliceInfo {
  AxisId whole = 0;
  std::vector<std::int64_t> parts;
  int part = 0;
  friend bool operator==(const SliceInfo&, const SliceInfo&) = default;
};

struct Plan {
  Op op = Op::einsum;          // what was planned (gradient plans: the op they compute)
  std::string pattern;         // for printing: as given, or derived from the axes
  DType dtype = DType::f32;    // of the data: inputs, temporaries and output but the index
                               // tensors, whose buffers say theirs (buffers[b].dtype)
  AxisTable axes;              // every axis the values name
  int num_inputs = 0;
  std::vector<PlanBuffer> buffers;  // buffers[i] for i < num_inputs is input i
  std::vector<Value> values;        // values[i] for i < num_inputs is input i as given
  std::vector<Step> steps;
  int output = 0;                   // index into values
  std::optional<ContractionInfo> contraction;  // every einsum planned from a pattern
  std::optional<SliceInfo> slice;              // a split's or an unpack's output
  std::vector<std::string> notes;   // e.g. the einsum contraction order and its FLOPs

  const Value& value(int v) const { return values.at(static_cast<std::size_t>(v)); }
  const Value& output_value() const { return value(output); }
  /// The dtype of value v's elements (its buffer's).
  DType dtype_of(int v) const { return buffers.at(static_cast<std::size_t>(value(v).buffer)).dtype; }
  /// True when the output shares an input's buffer (no step moved any data).
  bool output_is_view() const;
  /// One line per value and step; = to_string(*this).
  std::string str() const;
  friend bool operator==(const Plan&, const Plan&) = default;
};

/// The plan, step by step, one line each, with shapes and strides.
std::string to_string(const Plan& plan);
std::string to_string(const Step& step, const Plan& plan);

/// Checks the plan's invariants (indices in range, shapes of each step consistent,
/// views inside their buffers); throws InternalError naming the broken one.
void validate(const Plan& plan);

}  // namespace einexpr
