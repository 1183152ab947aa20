#pragma once
// Plan: the immutable, printable, costable result of planning one expression.
//
// A plan is a list of values and the steps that make them. A value is a strided view
// (Layout) of one buffer; a buffer is an input's memory or a temporary the plan
// allocates. Values 0..n-1 are the inputs. Each step makes one new value:
//
//   ViewStep      dst views src's buffer with other shape/strides (moves nothing)
//   CopyStep      dst (a new buffer) gets src's elements; src may broadcast (stride 0),
//                 so a repeat is a copy from a stride-0 view
//   ContractStep  dst[B.., m, n] = sum_k a[B.., m, k] * b[B.., k, n]: a batched GEMM whose
//                 m, n, k are one dim each; batch dims are any number, any strides
//   ReduceStep    dst = src reduced over some of its dims
//   MapStep       dst = f(src) or f(src0, src1), elementwise, srcs broadcast to dst's shape
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
//     rounded to the dtype at the end of the step (round to nearest even); i64/i32 in
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
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "einexpr/parser/ast.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

enum class Reduction : unsigned char { sum, mean, max, min, prod, any, all, var, std, logsumexp };
const char* name(Reduction reduction) noexcept;
/// "sum", "mean", "max", "min", "prod", "any", "all", "var", "std", "logsumexp"; throws
/// Error listing them otherwise.
Reduction parse_reduction(std::string_view text);

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

/// A dim's name as a product of factors: {"b"}, {"h","d"} for (h d), {"3"} for an
/// anonymous axis, {} for a unit axis, {"…0"} for the first dim an ellipsis stands for.
using AxisName = std::vector<std::string>;

struct PlanBuffer {
  int input = -1;              // >= 0: input `input`'s memory; -1: a temporary
  std::int64_t elements = 0;   // temporaries: size in elements
  friend bool operator==(const PlanBuffer&, const PlanBuffer&) = default;
};

struct Value {
  int buffer = 0;
  Layout layout;               // relative to the buffer's base
  std::vector<AxisName> axes;  // one per dim
  friend bool operator==(const Value&, const Value&) = default;
};

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
  std::vector<int> srcs;       // 1 (unary) or 2 (binary), each with dst's shape
  int dst = 0;
  std::variant<UnaryOp, BinaryOp> op;
  friend bool operator==(const MapStep&, const MapStep&) = default;
};
using Step = std::variant<ViewStep, CopyStep, ContractStep, ReduceStep, MapStep>;

struct Plan {
  std::string op;              // "rearrange", "reduce", "repeat", "einsum", "map", ...
  std::string pattern;         // as given (empty for unary maps)
  DType dtype = DType::f32;    // of every input, temporary and the output
  int num_inputs = 0;
  std::vector<PlanBuffer> buffers;  // buffers[i] for i < num_inputs is input i
  std::vector<Value> values;        // values[i] for i < num_inputs is input i as given
  std::vector<Step> steps;
  int output = 0;                   // index into values
  std::vector<std::string> notes;   // e.g. the einsum contraction order and its FLOPs

  const Value& output_value() const { return values.at(static_cast<std::size_t>(output)); }
  /// True when the output shares an input's buffer (no step moved any data).
  bool output_is_view() const;
  /// One line per value and step; = to_string(*this).
  std::string str() const;
  friend bool operator==(const Plan&, const Plan&) = default;
};

/// The plan, step by step, one line each, with shapes and strides.
std::string to_string(const Plan& plan);
std::string to_string(const Step& step, const Plan& plan);
/// "(h d)", "b", "()", "3".
std::string to_string(const AxisName& axis);

/// Checks the plan's invariants (indices in range, shapes of each step consistent,
/// views inside their buffers); throws InternalError naming the broken one.
void validate(const Plan& plan);

}  // namespace einexpr
