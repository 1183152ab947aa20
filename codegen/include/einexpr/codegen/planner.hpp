#pragma once
// The planners: pattern (already checked) + input layouts + axis lengths + dtype -> Plan.
// ShapeError names the axis and both sizes ("axis h is 64 in operand 1 but 32 in operand 2");
// the pattern's text is in the plan for printing.
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <variant>
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/order_options.hpp"
#include "einexpr/codegen/plan.hpp"
#include "einexpr/parser/ast.hpp"
#include "einexpr/runtime/dtype.hpp"
#include "einexpr/runtime/layout.hpp"

namespace einexpr {

/// Axis lengths given by name, in the order given: {{"h", 8}, {"w2", 20}}.
using AxisLengths = std::vector<std::pair<std::string, std::int64_t>>;

/// When a result may be a view of its input.
enum class Copy : unsigned char {
  if_needed,  // a view wherever the strides allow, else one copy (torch's reshape)
  never,      // always a view; ShapeError where the strides do not allow one
  always,     // always a new contiguous tensor
};

/// A map's function: one argument (UnaryOp) or two (BinaryOp).
using MapFunction = std::variant<UnaryOp, BinaryOp>;

/// The options of each op: one struct per Op, in OpOptions (below). An op that takes none
/// has an empty struct, so that every op is an alternative and every visit names it.
struct EinsumOptions {
  ContractionOrder order = ContractionOrder::optimal;
  OrderGoal goal;  // what the order minimizes
  friend bool operator==(const EinsumOptions&, const EinsumOptions&) = default;
};
struct RearrangeOptions {
  Copy copy = Copy::if_needed;
  int output = 0;  // a split "b (q + k) -> b q, b k": which output this plan makes
  friend bool operator==(const RearrangeOptions&, const RearrangeOptions&) = default;
};
struct ReduceOptions {
  Reduction reduction = Reduction::sum;
  std::int64_t correction = 1;  // var, std: divide by n - correction
  friend bool operator==(const ReduceOptions&, const ReduceOptions&) = default;
};
struct RepeatOptions {
  Copy copy = Copy::if_needed;
  friend bool operator==(const RepeatOptions&, const RepeatOptions&) = default;
};
struct MapOptions {
  MapFunction function = UnaryOp::relu;
  friend bool operator==(const MapOptions&, const MapOptions&) = default;
};
struct NormalizeOptions {
  Normalization kind = Normalization::softmax;
  double eps = 0;  // layer_norm, rms_norm (softmax and log_softmax: 0)
  friend bool operator==(const NormalizeOptions&, const NormalizeOptions&) = default;
};
struct GetAtOptions {
  friend bool operator==(const GetAtOptions&, const GetAtOptions&) = default;
};
struct AddAtOptions {
  friend bool operator==(const AddAtOptions&, const AddAtOptions&) = default;
};
struct CrossEntropyOptions {
  std::int64_t ignore_index = -100;  // a target of this value has loss 0 and gradient 0 (torch's)
  friend bool operator==(const CrossEntropyOptions&, const CrossEntropyOptions&) = default;
};
struct PackOptions {
  friend bool operator==(const PackOptions&, const PackOptions&) = default;
};
struct UnpackOptions {
  std::vector<Shape> shapes;  // each output's "*" dims (one may hold a -1: inferred)
  int output = 0;             // which output this plan makes
  friend bool operator==(const UnpackOptions&, const UnpackOptions&) = default;
};

/// dropout's plans: the whole op (x and a 0-d i64 seed -> y), or one of the two statements a
/// model program splits it into so that the backward keeps the mask (1 byte an element).
enum class DropoutPart : unsigned char {
  whole,  // (x, seed) -> y: a RandomStep, then a MaskStep
  mask,   // (x, seed) -> the keep mask, bool with x's shape (x read for its shape only)
  apply   // (x, mask) -> y = mask ? x / (1 - p) : 0
};
struct DropoutOptions {
  double p = 0.5;  // the probability that an element is zeroed, in [0, 1) (torch's default 0.5)
  DropoutPart part = DropoutPart::whole;
  friend bool operator==(const DropoutOptions&, const DropoutOptions&) = default;
};

/// The op registry's codegen half: one alternative per Op, in Op's order, so that a visit
/// (planning, printing, keys, gradients) that misses an op fails to compile.
using OpOptions = std::variant<RearrangeOptions, ReduceOptions, RepeatOptions, EinsumOptions, MapOptions,
                               NormalizeOptions, GetAtOptions, AddAtOptions, CrossEntropyOptions, PackOptions,
                               UnpackOptions, DropoutOptions>;
static_assert(std::variant_size_v<OpOptions> == std::size(all_ops), "OpOptions needs one alternative per Op");

/// Everything that says what to plan besides the pattern, the inputs' layouts and the
/// dtypes: the op's options and the axis lengths given by name. It is the plan cache's key
/// (with those three), and every caller (the ops, Compiled, the cost API, the CLI, the fuzz
/// targets, model programs) plans through plan() with one.
struct OpSpec {
  OpOptions options;
  AxisLengths lengths;  // axis lengths given by name

  Op op() const noexcept { return static_cast<Op>(options.index()); }
  template <class T>
  const T* get_if() const noexcept { return std::get_if<T>(&options); }
  template <class T>
  T* get_if() noexcept { return std::get_if<T>(&options); }

  static OpSpec einsum(AxisLengths lengths = {}, OrderGoal goal = {},
                       ContractionOrder order = ContractionOrder::optimal) {
    return {EinsumOptions{order, goal}, std::move(lengths)};
  }
  static OpSpec rearrange(AxisLengths lengths = {}, Copy copy = Copy::if_needed, int output = 0) {
    return {RearrangeOptions{copy, output}, std::move(lengths)};
  }
  static OpSpec reduce(Reduction r, AxisLengths lengths = {}, std::int64_t correction = 1) {
    return {ReduceOptions{r, correction}, std::move(lengths)};
  }
  static OpSpec repeat(AxisLengths lengths = {}, Copy copy = Copy::if_needed) {
    return {RepeatOptions{copy}, std::move(lengths)};
  }
  static OpSpec map(MapFunction f, AxisLengths lengths = {}) { return {MapOptions{f}, std::move(lengths)}; }
  /// eps: layer_norm and rms_norm only (softmax and log_softmax ignore it).
  static OpSpec normalize(Normalization n, double eps = 0, AxisLengths lengths = {}) {
    return {NormalizeOptions{n, takes_eps(n) ? eps : 0.0}, std::move(lengths)};
  }
  static OpSpec get_at(AxisLengths lengths = {}) { return {GetAtOptions{}, std::move(lengths)}; }
  static OpSpec add_at(AxisLengths lengths = {}) { return {AddAtOptions{}, std::move(lengths)}; }
  static OpSpec cross_entropy(std::int64_t ignore_index = -100, AxisLengths lengths = {}) {
    return {CrossEntropyOptions{ignore_index}, std::move(lengths)};
  }
  static OpSpec pack() { return {PackOptions{}, {}}; }
  static OpSpec unpack(std::vector<Shape> shapes, int output = 0) { return {UnpackOptions{std::move(shapes), output}, {}}; }
  static OpSpec dropout(double p, DropoutPart part = DropoutPart::whole) { return {DropoutOptions{p, part}, {}}; }
  /// The default options of `op`.
  static OpSpec of(Op op, AxisLengths lengths = {});

  /// "einsum", "reduce mean", "map gelu", "rearrange (copy always)": for messages.
  std::string str() const;
  /// Appends a compact binary form of every field to `key` (the cache key).
  void append_key(std::string& key) const;
  friend bool operator==(const OpSpec&, const OpSpec&) = default;
};

/// The one planning entry: `pattern` (parsed and checked for spec.op(); null only for a map
/// of one argument without a pattern, which maps elementwise in the input's layout) on
/// inputs of these layouts and dtypes (one per input; a single dtype stands for every
/// input's). ShapeError / DTypeError for what the inputs cannot do.
Plan plan(const OpSpec& spec, const ast::Pattern* pattern, std::span<const Layout> inputs,
          std::span<const DType> dtypes);
Plan plan(const OpSpec& spec, const ast::Pattern* pattern, std::span<const Layout> inputs, DType dtype);

Plan plan_rearrange(const ast::Pattern& pattern, const Layout& input, DType dtype,
                    const AxisLengths& lengths = {}, Copy copy = Copy::if_needed);
/// `correction`: var and std divide by max(0, n - correction); no other reduction reads it.
/// Throws Error for a negative correction.
Plan plan_reduce(const ast::Pattern& pattern, const Layout& input, DType dtype,
                 Reduction reduction, const AxisLengths& lengths = {}, std::int64_t correction = 1);
Plan plan_repeat(const ast::Pattern& pattern, const Layout& input, DType dtype,
                 const AxisLengths& lengths = {}, Copy copy = Copy::if_needed);
Plan plan_einsum(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype,
                 const AxisLengths& lengths = {},
                 ContractionOrder order = ContractionOrder::optimal, const OrderGoal& goal = {});
/// Elementwise f(x): the output is a new contiguous tensor of x's shape.
Plan plan_unary(UnaryOp op, const Layout& input, DType dtype);
/// Elementwise f with a pattern: one operand ("b s h -> b s (h)": the output may permute,
/// merge or split dims as rearrange does, but sums and repeats nothing) or two, with named
/// broadcasting ("b s h, h -> b s h").
Plan plan_map(const ast::Pattern& pattern, MapFunction function, std::span<const Layout> inputs, DType dtype,
              const AxisLengths& lengths = {});
/// Elementwise f(x, y) with named broadcasting: "b s h, h -> b s h" (= plan_map).
Plan plan_binary(const ast::Pattern& pattern, BinaryOp op, std::span<const Layout> inputs,
                 DType dtype, const AxisLengths& lengths = {});

/// get_at: `pattern` "[v] d, b s -> b s d" gathers the table's rows at the integer indices
/// (i64 or i32, `index_dtype`); dtype is the table's.
Plan plan_get_at(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype, DType index_dtype,
                 const AxisLengths& lengths = {});
/// add_at: "[v] d, b s, b s d -> [v] d": the table plus the updates added at the indices.
Plan plan_add_at(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype, DType index_dtype,
                 const AxisLengths& lengths = {});
/// cross_entropy: "b s [v], b s -> b s": the loss per row of the logits against integer
/// targets (a logsumexp ReduceStep, then a CrossEntropyStep); floats only.
Plan plan_cross_entropy(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype,
                        DType index_dtype, std::int64_t ignore_index = -100, const AxisLengths& lengths = {});
/// Concatenation "b s1 d, b s2 d -> b (s1 + s2) d" (every input copied into its slice of one
/// buffer) or output `output` of a split "b (q + k) -> b q, b k" (a view where the strides
/// allow, as rearrange). The parts' lengths come from the inputs, or for a split from
/// `lengths` (all parts but one given; the last inferred).
Plan plan_concat(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype,
                 const AxisLengths& lengths = {}, Copy copy = Copy::if_needed, int output = 0);

/// einops' pack: the inputs joined along the dims the "*" of `pattern` (pack_as_pattern's
/// "..." ) stands for in each, flattened: a copy of each into its slice of one buffer, then a
/// JoinStep (a concatenation). Every input shares the dims around the "*".
Plan plan_pack(const ast::Pattern& pattern, std::span<const Layout> inputs, DType dtype);
/// einops' unpack, output `output`: the packed input's slice for that output, viewed with its
/// "*" dims `shapes[output]` (a view; shapes' -1 inferred as unpack infers it).
Plan plan_unpack(const ast::Pattern& pattern, const Layout& input, DType dtype, const std::vector<Shape>& shapes,
                 int output);

/// softmax, log_softmax, layer_norm or rms_norm of inputs[0] along the axes `pattern`
/// brackets (parse_bracketed's "b h q [k]"): one NormStep into a new buffer. layer_norm's
/// inputs[1] and inputs[2] and rms_norm's inputs[1] are the affine part, a gain (a map mul)
/// and a bias (a map add) whose dims are the bracketed dims of inputs[0] in order, as
/// torch's weight and bias over normalized_shape. DTypeError for a non-float dtype, Error for
/// a negative or non-finite eps or a softmax given more than one tensor, ShapeError for a gain
/// or bias of another shape.
Plan plan_normalize(const ast::Pattern& pattern, Normalization kind, std::span<const Layout> inputs, DType dtype,
                    const AxisLengths& lengths = {}, double eps = 0);

/// dropout (DropoutOptions): `inputs` x (a float) and, by part, the 0-d i64 seed (whole, mask)
/// or the bool mask of x's shape (apply). A RandomStep draws the mask from the seed (plan.hpp's
/// contract: the same mask on every device and thread count), a MaskStep applies it. p = 0 is
/// the identity (a view of x, as torch), except for part mask. `pattern` (may be null): x's
/// dims and the seed's none, "b s d, -> b s d". Error for p outside [0, 1), DTypeError for a
/// non-float x or a seed that is not i64, ShapeError for a seed that is not 0-d or a mask of
/// another shape.
Plan plan_dropout(const ast::Pattern* pattern, const DropoutOptions& options, std::span<const Layout> inputs,
                  std::span<const DType> dtypes);

/// The shape each operand of `pattern` has when its axes have `sizes` (compositions
/// multiply; anonymous axes are their number). Throws ShapeError naming a missing axis.
/// Used to cost expressions from sizes alone.
std::vector<Shape> operand_shapes(const ast::Pattern& pattern, const AxisLengths& sizes);

}  // namespace einexpr
