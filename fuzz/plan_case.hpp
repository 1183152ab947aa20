#pragma once
// fuzz_plan's input, decoded. The bytes are
//
//   kind dtype flags choice choice2 | pattern text | '\0' | parameter bytes...
//
// kind: rearrange / reduce / repeat / einsum / binary map / unary map / get_at / add_at /
// cross_entropy / pack / unpack (the byte modulo 11; fuzz_order reads every case as an
// einsum, whatever the byte); flags: consistent
// shapes, every length given, enormous sizes allowed, run it; choice: the reduction or
// function; choice2: the copy policy and contraction order. The parameter bytes give every
// axis name's length (in order of first appearance), what "..." stands for in each operand,
// the perturbation of inconsistent shapes, each input's layout (contiguous, transposed,
// permuted, sliced, broadcast with stride 0, arbitrary strides) and which lengths are given.
// pack (pattern "i j * k") draws 1-4 inputs, each with its own "*" dims; unpack draws 1-4
// outputs' "*" shapes (one length sometimes -1, to infer) and which output to plan, its one
// input packed from them.
// Past the end of the input every byte reads as 0, so any input decodes to some case.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/ast.hpp"

namespace fuzz {

/// The indexed kinds (get_at, add_at, cross_entropy) parse with parse_indexed; their index
/// operand is planned as i64 and they plan, validate, cost and derive gradients (no run).
/// pack and unpack parse with parse_pack (as pack_as_pattern gives it: "*" is the "...").
enum class Kind : unsigned char {
  rearrange, reduce, repeat, einsum, binary, unary, get_at, add_at, cross_entropy, pack, unpack
};
constexpr unsigned num_kinds = 11;
/// The op a kind plans.
einexpr::Op op_of(Kind kind);
/// Whether a kind's pattern is an indexed one.
bool indexed(Kind kind);
const char* name(Kind kind);

struct Case {
  Kind kind = Kind::rearrange;
  einexpr::DType dtype = einexpr::DType::f32;
  bool consistent = true;   // the input shapes follow `sizes`; otherwise one is perturbed
  bool all_lengths = false; // every name's length is given (ops that take lengths)
  bool huge = false;        // sizes may be enormous (2^31, 2^62, INT64_MAX...): plan and cost only
  bool run = false;         // execute it when small enough
  einexpr::Reduction reduction = einexpr::Reduction::sum;
  einexpr::UnaryOp unary = einexpr::UnaryOp::relu;
  einexpr::BinaryOp binary = einexpr::BinaryOp::add;
  einexpr::Copy copy = einexpr::Copy::if_needed;
  einexpr::ContractionOrder order = einexpr::ContractionOrder::optimal;

  std::string text;                            // the pattern (empty for unary maps)
  einexpr::ast::Pattern pattern;               // parsed and checked
  std::map<std::string, std::int64_t> sizes;   // every name's length
  std::vector<std::string> names;              // in order of first appearance
  std::vector<einexpr::Shape> ellipsis;        // per operand: what its "..." stands for
  einexpr::Shape out_ellipsis;                 // their broadcast: what the output's "..." is
  std::vector<einexpr::Layout> inputs;         // offset 0, as the engine plans them
  std::vector<std::int64_t> offsets;           // element offsets for running
  einexpr::AxisLengths lengths;                // given to the planner
  std::uint8_t seed = 0;                       // for random input values
  std::uint8_t fail_at = 0;                    // allocation to fail in the injected run
  std::vector<einexpr::Shape> unpack_shapes;   // unpack: each output's "*" dims (maybe a -1)
  int unpack_output = 0;                       // unpack: the output planned
};

/// The einsums each target takes: fuzz_plan up to 10 operands (the exhaustive order search,
/// microseconds), fuzz_order 11 to 64 (the connected-subset program and the heuristic; check()
/// refuses more than 64).
constexpr std::size_t max_plan_einsum_operands = 10;
constexpr std::size_t max_order_einsum_operands = 64;

/// Decodes the bytes. nullopt when the pattern does not parse or check (the parser has
/// its own target), or when the shapes drawn overflow before planning. `only` given: the
/// case is of that kind whatever the kind byte says (fuzz_order: einsum).
std::optional<Case> decode(const std::uint8_t* data, std::size_t size, std::optional<Kind> only = std::nullopt);

/// The number of tensors the case plans with (a pack's inputs are not the pattern's operands).
std::size_t num_inputs(const Case& c);

/// The output shape the pattern implies for a consistent case.
einexpr::Shape expected_output_shape(const Case& c);

/// What the case asks the planner (plan()).
einexpr::OpSpec spec_of(const Case& c);
/// Plans the case through plan() (may throw einexpr::Error).
einexpr::Plan plan_case(const Case& c);

/// Executes a small planned case: lower_cpu + run on random data, checked against the naive
/// reference, the public op, run_into and an injected allocation failure (plan_run.cpp).
/// `grads`: the plan's gradients when already derived (else null: derived here if needed).
void run_case(const Case& c, const einexpr::Plan& plan, const std::vector<einexpr::Gradient>* grads);

/// Every check on a decoded case (plan_check.cpp): plan, validate, output shape, layouts,
/// lowering, cost, gradients, the cost API and, when small, run_case. Both fuzz_plan and
/// fuzz_order call it. Returns the plan when the case planned.
std::optional<einexpr::Plan> check_case(const Case& c);
/// The case in words, for messages.
std::string describe(const Case& c);

}  // namespace fuzz
