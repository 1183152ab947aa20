// Sizes at the 64-bit limits: a plan refuses a temporary whose element count or byte count
// overflows (ShapeError, before anything is allocated), the CPU lowering never wraps
// elements x element size, and validate() keeps every view inside its buffer.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/parse.hpp"
#include "einexpr/runtime/error.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::MessageHas;

namespace {

ast::Pattern checked(const char* text, Op op) {
  ast::Pattern p = parse(text);
  check(p, op);
  return p;
}

constexpr std::int64_t p60 = std::int64_t{1} << 60;

}  // namespace

TEST_CASE("a temporary whose bytes overflow 64 bits is refused by the planner", "[limits]") {
  // 6 * 2^60 elements fit in int64; times 4 bytes they do not (once: wrapped to 2^63 bytes).
  const ast::Pattern p = checked("a b -> a b c", Op::repeat);
  CHECK_THROWS_MATCHES(plan_repeat(p, Layout::contiguous({2, 3}), DType::f32, {{"c", p60}}, Copy::always),
                       ShapeError, MessageHas({"a buffer of 6917529027641081856 elements of f32 (4 bytes each): "
                                               "its bytes overflow 64 bits"}));
  // As a stride-0 view it needs no buffer: planned, and costed exactly.
  const Plan view = plan_repeat(p, Layout::contiguous({2, 3}), DType::f32, {{"c", p60}});
  CHECK(view.output_is_view());
  CHECK(cost(view).bytes_planned == Count(0));
  // bool is one byte: the same elements fit.
  const Plan b = plan_repeat(p, Layout::contiguous({2, 3}), DType::boolean, {{"c", p60}}, Copy::always);
  CHECK(lower_cpu(b).temp_bytes.back() == std::size_t{6} * static_cast<std::size_t>(p60));
}

TEST_CASE("element counts that overflow are refused while planning", "[limits]") {
  const ast::Pattern merge = checked("a b -> (a b)", Op::rearrange);
  const Layout broadcast{{std::int64_t{1} << 62, 4}, {0, 0}, 0};
  CHECK_THROWS_MATCHES(plan_rearrange(merge, broadcast, DType::f32), ShapeError, MessageHas({"overflows 64 bits"}));
  const ast::Pattern outer = checked("i, j -> i j", Op::einsum);
  const Layout big{{std::int64_t{1} << 40}, {0}, 0};
  const Layout inputs[] = {big, big};
  CHECK_THROWS_MATCHES(plan_einsum(outer, inputs, DType::f32), ShapeError, MessageHas({"overflows 64 bits"}));
}

TEST_CASE("lower_cpu refuses a hand-made plan whose temporary bytes overflow", "[limits]") {
  const ast::Pattern p = checked("a b -> a b c", Op::repeat);
  Plan plan = plan_repeat(p, Layout::contiguous({2, 3}), DType::boolean, {{"c", p60}}, Copy::always);
  plan.dtype = DType::f64;  // the same elements, now 8 bytes each
  for (PlanBuffer& b : plan.buffers) b.dtype = DType::f64;
  CHECK_THROWS_MATCHES(lower_cpu(plan), ShapeError, MessageHas({"size overflows 64 bits: 6917529027641081856 * 8"}));
}

TEST_CASE("validate() keeps views of an input inside the input", "[limits]") {
  const ast::Pattern p = checked("a b -> b a", Op::rearrange);
  Plan plan = plan_rearrange(p, Layout::contiguous({2, 3}), DType::f32);
  REQUIRE(plan.output_is_view());
  validate(plan);
  plan.values.back().layout.offset = 5;  // its extent is now 5 + 2 + 3 + 1 = 11 elements of 6
  CHECK_THROWS_MATCHES(validate(plan), InternalError, MessageHas({"a view reaches past its input"}));
}

TEST_CASE("an input whose element count overflows is refused, however little memory it views", "[limits]") {
  // Found by fuzz_plan (UBSan in reduce_cpu's make_geometry: 2^62 * 2^31): a broadcast view
  // (strides 0) of 2^93 elements is a valid Tensor over one element; its pre-reduction in
  // an einsum overflowed counting the reduced elements. Planners now refuse such inputs.
  const Layout huge{{std::int64_t{1} << 62, std::int64_t{1} << 31}, {0, 0}, 0};
  const ast::Pattern r = checked("a b -> ", Op::reduce);
  CHECK_THROWS_MATCHES(plan_reduce(r, huge, DType::f32, Reduction::sum), ShapeError,
                       MessageHas({"the number of elements of shape [4611686018427387904, 2147483648] overflows 64 bits"}));
  const ast::Pattern e = checked("i, a b -> i", Op::einsum);
  const Layout inputs[] = {Layout::contiguous({2}), huge};
  CHECK_THROWS_MATCHES(plan_einsum(e, inputs, DType::f32), ShapeError, MessageHas({"overflows 64 bits"}));
  const ast::Pattern t = checked("a b -> b a", Op::rearrange);
  CHECK_THROWS_AS(plan_rearrange(t, huge, DType::f32), ShapeError);
}

TEST_CASE("a broadcast view whose element count overflows is refused while planning", "[limits]") {
  // Found by fuzz_plan (corpus/plan/crash_einsum_broadcast_view_count_overflow): in
  // '... i, ... ->' the first operand's '...' of length 1 is broadcast against the second's 2
  // before its private axis i (2^63 - 1) is summed: a view of 2 x (2^63 - 1) elements over
  // one input of 2^63 - 1, which validate() refused as an InternalError. Now a ShapeError.
  const ast::Pattern p = checked("... i, ... ->", Op::einsum);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const Layout inputs[] = {Layout{{1, max}, {max, 1}, 0}, Layout::contiguous({2})};
  CHECK_THROWS_MATCHES(plan_einsum(p, inputs, DType::i64), ShapeError,
                       MessageHas({"the number of elements of shape [2, 9223372036854775807] overflows 64 bits"}));
  // The same einsum at a length that fits plans, and validates.
  const Layout small[] = {Layout::contiguous({1, 3}), Layout::contiguous({2})};
  validate(plan_einsum(p, small, DType::i64));
}

TEST_CASE("an operand broadcast past int64 elements is refused before its groups are counted", "[limits]") {
  // Found by fuzz_plan (corpus/plan/crash_einsum_group_length_overflow): in
  // ' i, ..., , , ..., , -> ...' one '...' is [1, 2^63 - 1, 1] and the other [2^61, 1, 1], so
  // the output broadcasts to 2^61 x (2^63 - 1) elements. The contraction of those two counted
  // the lengths of a broadcast group (2^61 x (2^63 - 1)) before any view of it was made: a
  // signed overflow (UBSan). Now the ShapeError a view of that many elements gets.
  const ast::Pattern p = checked(" i, ..., , , ..., , -> ...", Op::einsum);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max(), big = std::int64_t{1} << 61;
  const Layout scalar = Layout::contiguous({});
  const Layout inputs[] = {Layout{{std::int64_t{1} << 32}, {6}, 0}, Layout{{1, max, 1}, {max, 1, 1}, 0}, scalar, scalar,
                           Layout{{big, 1, 1}, {4, 1, 1}, 0}, scalar, scalar};
  CHECK_THROWS_MATCHES(plan_einsum(p, inputs, DType::f64), ShapeError, MessageHas({"overflows 64 bits"}));
  // The same einsum at lengths that fit plans, and validates.
  const Layout small[] = {Layout::contiguous({5}), Layout::contiguous({1, 3, 1}), scalar, scalar,
                          Layout::contiguous({4, 1, 1}), scalar, scalar};
  validate(plan_einsum(p, small, DType::f64));
}

TEST_CASE("an operand whose '...' broadcasts it past int64 elements is refused where operands are resolved",
          "[limits]") {
  // Found by fuzz_plan (corpus/plan/crash_einsum_broadcast_operand_overflow), after the case
  // above was fixed: in '... k i, ..., b i jj k i i -> ' the first operand's '...' is
  // [3037000500, 1, 1] and the second's [1, 2, 2^40], so the first, seen with '...' broadcast,
  // counts 3037000500 x 2 x 2^40 elements: the contraction's merging of its m atoms multiplied
  // them past int64 (UBSan: contract.cpp merged()). Each operand as the planner sees it is now
  // counted once, where '...' is broadcast, with numpy's rule.
  const ast::Pattern p = checked("... k i   , ...  , b i jj k i i -> ", Op::einsum);
  const std::int64_t n = 3037000500, t40 = std::int64_t{1} << 40;
  const Layout inputs[] = {Layout{{n, 1, 1, 1, 1}, {1, n, 1, n, n}, 0}, Layout{{1, 2, t40}, {0, t40, 1}, 0},
                           Layout{{1, 1, 2, 1, 1, 1}, {2, 2, 1, 1, 1, 1}, 0}};
  CHECK_THROWS_MATCHES(plan_einsum(p, inputs, DType::f8_e5m2), ShapeError,
                       MessageHas({"operand 1", "'...' broadcast to [3037000500, 2, 1099511627776]",
                                   "overflows 64 bits"}));
  // The same einsum at lengths that fit plans, and validates.
  const Layout small[] = {Layout::contiguous({3, 1, 1, 1, 1}), Layout::contiguous({1, 2, 4}),
                          Layout::contiguous({1, 1, 2, 1, 1, 1})};
  validate(plan_einsum(p, small, DType::f64));
}
