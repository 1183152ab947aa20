// Backward costs through the real planners (planner.hpp): the gradient stages are parsed,
// checked and planned like any expression, then costed. (test_backward.cpp checks the same
// derivations with a stand-in planner, so a planner change cannot hide a derivation bug.)
#include <catch2/catch.hpp>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/planner.hpp"
#include "einexpr/parser/check.hpp"
#include "einexpr/parser/parse.hpp"

using namespace einexpr;

namespace {

ast::Pattern checked(const char* text, Op op) {
  ast::Pattern p = parse(text);
  check(p, op);
  return p;
}

Plan einsum_plan(const char* pattern, std::vector<Shape> shapes, DType dtype = DType::f32) {
  std::vector<Layout> layouts;
  for (Shape& s : shapes) layouts.push_back(Layout::contiguous(std::move(s)));
  return plan_einsum(checked(pattern, Op::einsum), std::span<const Layout>(layouts), dtype, {},
                     ContractionOrder::naive);
}

}  // namespace

TEST_CASE("planned: a linear layer's backward is 4·B·D·K, forward + backward 6·N·P", "[backward][planner]") {
  struct Row {
    std::int64_t B, D, K;
  };
  for (const Row& r : {Row{1024, 256, 64}, Row{16384, 32768, 8192}}) {
    CAPTURE(r.B, r.D, r.K);
    const Plan forward = einsum_plan("b d, d k -> b k", {{r.B, r.D}, {r.D, r.K}});
    const Count bdk = Count::from_int64(r.B) * Count::from_int64(r.D) * Count::from_int64(r.K);
    const BackwardCost back = backward_cost(forward);
    CHECK(cost(forward).flops == Count(2) * bdk);
    CHECK(back.flops == Count(4) * bdk);
    REQUIRE(back.gradients.size() == 2);
    CHECK(back.gradients[0].expression == "einsum(dY, B, 'b k, d k -> b d')");
    CHECK(back.gradients[1].expression == "einsum(dY, A, 'b k, b d -> d k')");
    CHECK(back.gradients[0].cost.flops_formula.str() == "2·b·d·k");
  }
}

TEST_CASE("planned: the seeds' two-layer model, layer by layer, backward = 2 x forward", "[backward][planner]") {
  const std::int64_t B = 16384, D = 32768, K = 8192;
  const Plan layer1 = einsum_plan("b d, d e -> b e", {{B, D}, {D, D}});
  const Plan layer2 = einsum_plan("b e, e k -> b k", {{B, D}, {D, K}});
  const Count forward = cost(layer1).flops + cost(layer2).flops;
  CHECK(forward.str() == "43980465111040");
  CHECK(backward_cost(layer1).flops + backward_cost(layer2).flops == Count(2) * forward);
}

TEST_CASE("planned: reduce, repeat and rearrange gradients", "[backward][planner]") {
  const Layout x = Layout::contiguous({2, 16, 8});
  const Plan sum = plan_reduce(checked("b s h -> b h", Op::reduce), x, DType::f32, Reduction::sum);
  const BackwardCost sum_back = backward_cost(sum);
  CHECK(sum_back.gradients.at(0).expression == "repeat(dY, 'b h -> b s h', s=16)");
  CHECK(sum_back.flops == Count(0));

  const Plan mean = plan_reduce(checked("b s h -> b h", Op::reduce), x, DType::f32, Reduction::mean);
  CHECK(backward_cost(mean).flops == Count(16));  // dY / 16 over the 2·8 outputs

  const Plan max = plan_reduce(checked("b s h -> b h", Op::reduce), x, DType::f32, Reduction::max);
  CHECK(backward_cost(max).flops == Count(2 * 256));

  const Plan rep = plan_repeat(checked("h w -> c h w", Op::repeat), Layout::contiguous({3, 5}), DType::f32, {{"c", 4}});
  const BackwardCost rep_back = backward_cost(rep);
  CHECK(rep_back.gradients.at(0).expression == "reduce(dY, 'c h w -> h w', 'sum')");
  CHECK(rep_back.flops == Count(60 - 15));

  const Plan split = plan_rearrange(checked("b (h d) -> b h d", Op::rearrange), Layout::contiguous({2, 32}),
                                    DType::f32, {{"h", 8}});
  const BackwardCost split_back = backward_cost(split);
  CHECK(split_back.gradients.at(0).expression == "rearrange(dY, 'b h d -> b (h d)')");
  CHECK(split_back.flops == Count(0));
  CHECK(split_back.bytes == Count(0 + 64 * 4));  // a view: dY read once, nothing written
}

TEST_CASE("planned: elementwise gradients", "[backward][planner]") {
  const std::int64_t n = 1024 * 1024;
  const Plan relu = plan_unary(UnaryOp::relu, Layout::contiguous({n}), DType::bf16);
  CHECK(backward_cost(relu).flops == Count(static_cast<std::uint64_t>(n)));
  const Plan gelu = plan_unary(UnaryOp::gelu, Layout::contiguous({n}), DType::bf16);
  CHECK(backward_cost(gelu).flops == Count(static_cast<std::uint64_t>(18 * n)));
}
