// Plans as text: the format of `einexpr explain` and of these golden tests. Each row plans a
// pattern on contiguous inputs of the given shapes and compares to_string(plan) exactly.
#include <catch2/catch.hpp>

#include <iostream>
#include <sstream>

#include "einexpr/codegen/pipeline.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/ops.hpp"
#include "einexpr/parser/parse.hpp"
#include "matchers.hpp"
#include "search_time.hpp"

using namespace einexpr;

namespace {

Plan plan_of(Op op, const std::string& text, const std::vector<Shape>& shapes, const AxisLengths& lengths = {},
             Copy copy = Copy::if_needed) {
  const bool indexed = op == Op::get_at || op == Op::add_at || op == Op::cross_entropy;
  if (indexed || op == Op::pack || (op == Op::rearrange && shapes.size() > 1)) {
    // Through the registry's grammar and plan(): an indexed op's index operand is i64.
    const ast::Pattern p = parse_pattern(op, text);
    std::vector<Layout> in;
    std::vector<DType> dtypes;
    for (const Shape& s : shapes) {
      in.push_back(Layout::contiguous(s));
      dtypes.push_back(indexed && static_cast<int>(dtypes.size()) == op_row(op).index_operand ? DType::i64
                                                                                                : DType::f32);
    }
    return plan(OpSpec::of(op, lengths), &p, in, std::span<const DType>(dtypes));
  }
  const ast::Pattern p = parse(text);
  check(p, op);
  std::vector<Layout> in;
  for (const Shape& s : shapes) in.push_back(Layout::contiguous(s));
  switch (op) {
    case Op::rearrange: return plan_rearrange(p, in[0], DType::f32, lengths, copy);
    case Op::reduce: return plan_reduce(p, in[0], DType::f32, Reduction::sum, lengths);
    case Op::repeat: return plan_repeat(p, in[0], DType::f32, lengths, copy);
    case Op::einsum: return plan_einsum(p, in, DType::f32, lengths);
    case Op::map: return plan_binary(p, BinaryOp::add, in, DType::f32, lengths);
    case Op::normalize: break;  // its patterns are parse_bracketed's (test_normalize.cpp)
    case Op::get_at: case Op::add_at: case Op::cross_entropy: case Op::pack: break;  // planned above
    case Op::unpack: break;  // its shapes are OpSpec::unpack's (test_indexed.cpp)
    case Op::dropout: break;  // its seed is an i64 (test_dropout.cpp)
  }
  return {};
}

struct Golden {
  Op op;
  const char* pattern;
  std::vector<Shape> shapes;
  AxisLengths lengths;
  const char* text;
};

// clang-format off
const std::vector<Golden> goldens = {
  {Op::rearrange, "b h w c -> b (h w) c", {{2, 3, 4, 5}}, {},
   "rearrange 'b h w c -> b (h w) c' (f32)\n"
   "  %0 = input 0 : [b=2, h=3, w=4, c=5] strides [60, 20, 5, 1]\n"
   "  %1 = view %0 : [b=2, (h w)=12, c=5] strides [60, 5, 1]  (view of input 0)\n"
   "  output %1 (a view: no data moved)\n"},
  {Op::rearrange, "b h w c -> (b c) h w", {{2, 3, 4, 5}}, {},
   "rearrange 'b h w c -> (b c) h w' (f32)\n"
   "  %0 = input 0 : [b=2, h=3, w=4, c=5] strides [60, 20, 5, 1]\n"
   "  %1 = view %0 : [b=2, c=5, h=3, w=4] strides [60, 1, 20, 5]  (view of input 0)\n"
   "  %2 = copy %1 : [b=2, c=5, h=3, w=4] strides [60, 12, 4, 1]  (new buffer #1, 120 elements)\n"
   "  %3 = view %2 : [(b c)=10, h=3, w=4] strides [12, 4, 1]  (view of buffer #1)\n"
   "  output %3\n"},
  {Op::reduce, "b s h -> b h", {{2, 3, 4}}, {},
   "reduce 'b s h -> b h' (f32)\n"
   "  %0 = input 0 : [b=2, s=3, h=4] strides [12, 4, 1]\n"
   "  %1 = reduce.sum %0 over [s] : [b=2, h=4] strides [4, 1]  (new buffer #1, 8 elements)\n"
   "  output %1\n"},
  {Op::reduce, "b (s 2) h -> h b", {{2, 6, 4}}, {},
   "reduce 'b (s 2) h -> h b' (f32)\n"
   "  %0 = input 0 : [b=2, (s 2)=6, h=4] strides [24, 4, 1]\n"
   "  %1 = view %0 : [b=2, s=3, 2=2, h=4] strides [24, 8, 4, 1]  (view of input 0)\n"
   "  %2 = reduce.sum %1 over [s 2] : [b=2, h=4] strides [1, 2]  (new buffer #1, 8 elements)\n"
   "  %3 = view %2 : [h=4, b=2] strides [2, 1]  (view of buffer #1)\n"
   "  output %3\n"},
  {Op::repeat, "h w -> c h w", {{2, 3}}, {{"c", 4}},
   "repeat 'h w -> c h w' (f32)\n"
   "  %0 = input 0 : [h=2, w=3] strides [3, 1]\n"
   "  %1 = view %0 : [c=4, h=2, w=3] strides [0, 3, 1]  (view of input 0)\n"
   "  output %1 (a view: no data moved)\n"},
  {Op::einsum, "b s1 h, b s2 h -> b s1 s2", {{2, 3, 4}, {2, 5, 4}}, {},
   "einsum 'b s1 h, b s2 h -> b s1 s2' (f32)\n"
   "  %0 = input 0 : [b=2, s1=3, h=4] strides [12, 4, 1]\n"
   "  %1 = input 1 : [b=2, s2=5, h=4] strides [20, 4, 1]\n"
   "  %2 = view %1 : [b=2, h=4, s2=5] strides [20, 1, 4]  (view of input 1)\n"
   "  %3 = contract.batched_gemm %0, %2 (batch dims 1) : [b=2, s1=3, s2=5] strides [15, 5, 1]  (new buffer #2, 30 elements)\n"
   "  output %3\n"},
  {Op::einsum, "i j, j k, k l -> i l", {{64, 4}, {4, 64}, {64, 4}}, {},
   "einsum 'i j, j k, k l -> i l' (f32)\n"
   "  %0 = input 0 : [i=64, j=4] strides [4, 1]\n"
   "  %1 = input 1 : [j=4, k=64] strides [64, 1]\n"
   "  %2 = input 2 : [k=64, l=4] strides [4, 1]\n"
   "  %3 = contract.gemm %1, %2 (batch dims 0) : [j=4, l=4] strides [4, 1]  (new buffer #3, 16 elements)\n"
   "  %4 = contract.gemm %0, %3 (batch dims 0) : [i=64, l=4] strides [4, 1]  (new buffer #4, 256 elements)\n"
   "  output %4\n"
   "  # contraction order (1 (2 3)): 4096 FLOPs (optimal: matrix chain, T ms); left to right ((1 2) 3): 65536\n"},
  {Op::einsum, "i j, j k -> k i", {{3, 4}, {4, 5}}, {},
   "einsum 'i j, j k -> k i' (f32)\n"
   "  %0 = input 0 : [i=3, j=4] strides [4, 1]\n"
   "  %1 = input 1 : [j=4, k=5] strides [5, 1]\n"
   "  %2 = contract.gemm %0, %1 (batch dims 0) : [i=3, k=5] strides [1, 3]  (new buffer #2, 15 elements)\n"
   "  %3 = view %2 : [k=5, i=3] strides [3, 1]  (view of buffer #2)\n"
   "  output %3\n"},
  {Op::einsum, "b (h d), h d k -> b k", {{2, 12}, {3, 4, 5}}, {},
   "einsum 'b (h d), h d k -> b k' (f32)\n"
   "  %0 = input 0 : [b=2, (h d)=12] strides [12, 1]\n"
   "  %1 = input 1 : [h=3, d=4, k=5] strides [20, 5, 1]\n"
   "  %2 = view %1 : [(h d)=12, k=5] strides [5, 1]  (view of input 1)\n"
   "  %3 = contract.gemm %0, %2 (batch dims 0) : [b=2, k=5] strides [5, 1]  (new buffer #2, 10 elements)\n"
   "  output %3\n"},
  {Op::einsum, "i i ->", {{3, 3}}, {},
   "einsum 'i i ->' (f32)\n"
   "  %0 = input 0 : [i=3, i=3] strides [3, 1]\n"
   "  %1 = view %0 : [i=3] strides [4]  (view of input 0)\n"
   "  %2 = reduce.sum %1 over [i] : [] strides []  (new buffer #1, 1 element)\n"
   "  output %2\n"},
  // The indexed ops: the index operand i64, viewed across the gathered dims (stride 0).
  {Op::get_at, "[v] d, b s -> b s d", {{7, 4}, {2, 3}}, {},
   "get_at '[v] d, b s -> b s d' (f32)\n"
   "  %0 = input 0 : [v=7, d=4] strides [4, 1]\n"
   "  %1 = input 1 : [b=2, s=3] strides [3, 1] (i64)\n"
   "  %2 = view %0 : [b=2, s=3, d=4] strides [0, 0, 1]  (view of input 0)\n"
   "  %3 = view %1 : [b=2, s=3, d=4] strides [3, 1, 0]  (view of input 1, i64)\n"
   "  %4 = gather %2 at %3 (7 rows, stride 4) : [b=2, s=3, d=4] strides [12, 4, 1]  (new buffer #2, 24 elements)\n"
   "  output %4\n"},
  {Op::add_at, "[v] d, b s, b s d -> [v] d", {{7, 4}, {2, 3}, {2, 3, 4}}, {},
   "add_at '[v] d, b s, b s d -> [v] d' (f32)\n"
   "  %0 = input 0 : [v=7, d=4] strides [4, 1]\n"
   "  %1 = input 1 : [b=2, s=3] strides [3, 1] (i64)\n"
   "  %2 = input 2 : [b=2, s=3, d=4] strides [12, 4, 1]\n"
   "  %3 = copy %0 : [v=7, d=4] strides [4, 1]  (new buffer #3, 28 elements)\n"
   "  %4 = view %3 : [b=2, s=3, d=4] strides [0, 0, 1]  (view of buffer #3)\n"
   "  %5 = view %1 : [b=2, s=3, d=4] strides [3, 1, 0]  (view of input 1, i64)\n"
   "  %6 = scatter_add %2 into %4 at %5 (7 rows, stride 4) : [v=7, d=4] strides [4, 1]  (into buffer #3)\n"
   "  output %6\n"},
  {Op::cross_entropy, "b s [v], b s -> b s", {{2, 3, 7}, {2, 3}}, {},
   "cross_entropy 'b s [v], b s -> b s' (f32)\n"
   "  %0 = input 0 : [b=2, s=3, v=7] strides [21, 7, 1]\n"
   "  %1 = input 1 : [b=2, s=3] strides [3, 1] (i64)\n"
   "  %2 = cross_entropy %0, %1 along dim 2 : [b=2, s=3] strides [3, 1]  (new buffer #2, 6 elements)\n"
   "  output %2\n"},
  // A concatenation and a pack: each input copied into its slice of one buffer, then joined.
  {Op::rearrange, "b s1 d, b s2 d -> b (s1 + s2) d", {{2, 3, 4}, {2, 5, 4}}, {},
   "rearrange 'b s1 d, b s2 d -> b (s1 + s2) d' (f32)\n"
   "  %0 = input 0 : [b=2, s1=3, d=4] strides [12, 4, 1]\n"
   "  %1 = input 1 : [b=2, s2=5, d=4] strides [20, 4, 1]\n"
   "  %3 = copy %0 : [b=2, s1=3, d=4] strides [32, 4, 1]  (new buffer #2, 64 elements)\n"
   "  %4 = copy %1 : [b=2, s2=5, d=4] strides [32, 4, 1] offset 12  (into buffer #2)\n"
   "  %2 = join %3, %4 : [b=2, (s1 + s2)=8, d=4] strides [32, 4, 1]  (view of buffer #2)\n"
   "  output %2\n"
   "  # concatenation (s1 + s2): 2 copies into one buffer\n"},
  {Op::pack, "b * d", {{2, 3, 2, 4}, {2, 4}}, {},
   "pack 'b * d' (f32)\n"
   "  %0 = input 0 : [b=2, *1.0=3, *1.1=2, d=4] strides [24, 8, 4, 1]\n"
   "  %1 = input 1 : [b=2, d=4] strides [4, 1]\n"
   "  %3 = copy %0 : [b=2, *1.0=3, *1.1=2, d=4] strides [28, 8, 4, 1]  (new buffer #2, 56 elements)\n"
   "  %4 = copy %1 : [b=2, d=4] strides [28, 1] offset 24  (into buffer #2)\n"
   "  %2 = join %3, %4 : [b=2, (*)=7, d=4] strides [28, 4, 1]  (view of buffer #2)\n"
   "  output %2\n"
   "  # pack: 2 copies into one buffer\n"},
};
// clang-format on

}  // namespace

TEST_CASE("plans print as the golden text", "[planner][golden]") {
  for (const Golden& g : goldens) {
    CAPTURE(g.pattern);
    CHECK(testing_support::without_search_time(plan_of(g.op, g.pattern, g.shapes, g.lengths).str()) == g.text);
  }
}

TEST_CASE("every plan is valid and never reads an input's memory it was not given", "[planner]") {
  for (const Golden& g : goldens) {
    CAPTURE(g.pattern);
    const Plan p = plan_of(g.op, g.pattern, g.shapes, g.lengths);
    CHECK_NOTHROW(validate(p));
    for (const Value& v : p.values)
      if (p.buffers[static_cast<std::size_t>(v.buffer)].input >= 0)
        CHECK(v.layout.extent() <= Layout::contiguous(g.shapes[static_cast<std::size_t>(
                                       p.buffers[static_cast<std::size_t>(v.buffer)].input)]).numel());
  }
}

TEST_CASE("a batched contraction whose operands do not fit is copied once, the other read in place", "[planner]") {
  // b's stride sits between s and h in operand 2: h and s2 do not merge... they need not:
  // m, n, k are one axis each here, so only a missing unit stride forces a copy.
  const ast::Pattern p = parse("b s1 h, b s2 h -> b s1 s2");
  const std::vector<Layout> in = {Layout::contiguous({2, 3, 4}), Layout{{2, 5, 4}, {1, 8, 2}, 0}};
  const Plan plan = plan_einsum(p, in, DType::f32);
  int copies = 0;
  for (const Step& s : plan.steps) copies += std::holds_alternative<CopyStep>(s);
  CHECK(copies == 1);
}

TEST_CASE("the contraction order can be asked for", "[planner]") {
  const ast::Pattern p = parse("i j, j k, k l -> i l");
  const std::vector<Layout> in = {Layout::contiguous({64, 4}), Layout::contiguous({4, 64}), Layout::contiguous({64, 4})};
  CHECK_THAT(plan_einsum(p, in, DType::f32, {}, ContractionOrder::naive).notes.at(0),
             Catch::Contains("contraction order ((1 2) 3)"));
  CHECK_THAT(plan_einsum(p, in, DType::f32, {}, ContractionOrder::greedy).notes.at(0),
             Catch::Contains("contraction order"));
  CHECK_THAT(plan_einsum(p, in, DType::f32).notes.at(0), Catch::Contains("contraction order (1 (2 3))"));
}

TEST_CASE("EINEXPR_DEBUG=plan prints the plan before and after the passes, =passes after each", "[planner]") {
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  setenv("EINEXPR_DEBUG", "plan", 1);
  const Plan p = plan_of(Op::rearrange, "a b -> b a", {{2, 3}});
  unsetenv("EINEXPR_DEBUG");
  std::cerr.rdbuf(old);
  CHECK(p.output_is_view());
  CHECK_THAT(captured.str(), Catch::Contains("[einexpr] plan as built:\nrearrange 'a b -> b a'") &&
                                 Catch::Contains("[einexpr] after the passes:\nrearrange 'a b -> b a'"));
  const Plan quiet = plan_of(Op::rearrange, "a b -> b a", {{2, 3}});
  CHECK(quiet == p);
  // =passes: the plan after each pass, named, in the pipeline's order.
  captured.str("");
  old = std::cerr.rdbuf(captured.rdbuf());
  setenv("EINEXPR_DEBUG", "passes", 1);
  (void)plan_of(Op::rearrange, "a b -> b a", {{2, 3}});
  unsetenv("EINEXPR_DEBUG");
  std::cerr.rdbuf(old);
  std::size_t at = captured.str().find("[einexpr] plan as built:");
  REQUIRE(at != std::string::npos);
  for (const PlanPass& pass : plan_passes()) {
    const std::size_t next = captured.str().find(std::string("[einexpr] after ") + pass.name + ":", at);
    CAPTURE(pass.name);
    REQUIRE(next != std::string::npos);
    at = next;
  }
  CHECK(plan_passes().size() == 3);
}
