// Backward pass: gradient patterns derived as text, gradient expressions of hand-built
// forward plans, and their cost through a stand-in planner (toy_planner.hpp). The same
// costs through the real planner are in test_backward_plans.cpp.
#include <catch2/catch.hpp>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/runtime/error.hpp"
#include "support/plan_builder.hpp"
#include "toy_planner.hpp"

using namespace einexpr;
using ::test::PlanBuilder;

namespace {

Plan linear(std::int64_t B, std::int64_t D, std::int64_t K, DType dtype = DType::f32) {
  PlanBuilder b("einsum", "b d, d k -> b k", dtype, {{"b", B}, {"d", D}, {"k", K}});
  const int x = b.input("b d"), w = b.input("d k");
  return b.finish(b.contract(x, w, "", "b", "d", "k"));
}

Plan reduction(Reduction op, std::string pattern = "b s h -> b h") {
  PlanBuilder b("reduce", std::move(pattern), DType::f32, {{"b", 2}, {"s", 16}, {"h", 8}});
  return b.finish(b.reduce(b.input("b s h"), op, {1}));
}

Plan one_operand_einsum(const std::string& pattern, const std::string& out) {
  PlanBuilder b("einsum", pattern, DType::f32, {{"i", 3}, {"j", 4}});
  const int x = b.input("i j");
  return b.finish(out == "j" ? b.reduce(x, Reduction::sum, {0}) : b.copy(b.view(x, out)));
}

Plan unary(UnaryOp op, std::int64_t n) {
  PlanBuilder b("map", "", DType::bf16, {{"n", n}});
  return b.finish(b.map(op, b.input("n")));
}

std::vector<std::string> texts(const Plan& forward) {
  std::vector<std::string> out;
  for (const GradientExpr& g : gradient_expressions(forward)) out.push_back(g.str());
  return out;
}

}  // namespace

TEST_CASE("einsum gradient patterns: dY first, then the other operands, -> the operand", "[backward]") {
  struct Row {
    const char* pattern;
    std::size_t operand;
    const char* gradient;
  };
  const Row rows[] = {
      {"b d, d k -> b k", 0, "b k, d k -> b d"},
      {"b d, d k -> b k", 1, "b k, b d -> d k"},
      {"b s1 h, b s2 h -> b s1 s2", 0, "b s1 s2, b s2 h -> b s1 h"},
      {"b s1 h, b s2 h -> b s1 s2", 1, "b s1 s2, b s1 h -> b s2 h"},
      {"a b, b c, c d -> a d", 1, "a d, a b, c d -> b c"},
      {"a b, b c, c d -> a d", 2, "a d, a b, b c -> c d"},
      {" i  j ,j k->i k", 0, "i k, j k -> i j"},
      {"... i, i j -> ... j", 0, "... j, i j -> ... i"},
      {"i, i ->", 1, ", i -> i"},  // dY is a scalar: an operand with no axes
  };
  for (const Row& r : rows) {
    CAPTURE(r.pattern, r.operand);
    CHECK(einsum_gradient_pattern(r.pattern, r.operand) == r.gradient);
  }
  CHECK_THROWS_WITH(einsum_gradient_pattern("i j, j k -> i k", 2), Catch::Contains("has no operand 2"));
  CHECK_THROWS_WITH(einsum_gradient_pattern("i j, j k", 0), Catch::Contains("has no '->'"));
}

TEST_CASE("inverse patterns swap sides", "[backward]") {
  struct Row {
    const char* pattern;
    const char* inverse;
  };
  const Row rows[] = {{"b (h d) -> b h d", "b h d -> b (h d)"},
                      {"b s h -> b h", "b h -> b s h"},
                      {"c (h h2) (w w2) -> c h w", "c h w -> c (h h2) (w w2)"},
                      {"... (heads  hidden1) -> ... heads hidden1", "... heads hidden1 -> ... (heads hidden1)"},
                      {"h w -> c h w", "c h w -> h w"},
                      {"b () h -> b h", "b h -> b () h"}};
  for (const Row& r : rows) {
    CAPTURE(r.pattern);
    CHECK(swap_sides(r.pattern) == r.inverse);
  }
  CHECK_THROWS_WITH(swap_sides("a, b -> a b"), Catch::Contains("only a one-operand pattern can be inverted"));
  CHECK_THROWS_WITH(swap_sides("b (h d -> b h d"), Catch::Contains("unbalanced '('"));
}

TEST_CASE("gradient expressions of einsums", "[backward]") {
  CHECK(texts(linear(4, 5, 6)) ==
        std::vector<std::string>{"einsum(dY, B, 'b k, d k -> b d')", "einsum(dY, A, 'b k, b d -> d k')"});

  PlanBuilder three("einsum", "a b, b c, c d -> a d", DType::f32, {{"a", 2}, {"b", 3}, {"c", 4}, {"d", 5}});
  const int x = three.input("a b"), y = three.input("b c"), z = three.input("c d");
  const Plan p3 = three.finish(three.contract(three.contract(x, y, "", "a", "b", "c"), z, "", "a", "c", "d"));
  CHECK(texts(p3) == std::vector<std::string>{"einsum(dY, B, C, 'a d, b c, c d -> a b')",
                                              "einsum(dY, A, C, 'a d, a b, c d -> b c')",
                                              "einsum(dY, A, B, 'a d, a b, b c -> c d')"});

  // j is summed inside A alone: its gradient is repeated over j.
  PlanBuilder alone("einsum", "i j, k -> i k", DType::f32, {{"i", 3}, {"j", 5}, {"k", 4}});
  const int a = alone.input("i j"), b = alone.input("k");
  const Plan pa = alone.finish(alone.contract(alone.reduce(a, Reduction::sum, {1}), b, "", "i", "()", "k"));
  const std::vector<GradientExpr> ga = gradient_expressions(pa);
  CHECK(ga[0].str() == "repeat(einsum(dY, B, 'i k, k -> i'), 'i -> i j', j=5)");
  CHECK(ga[0].stages.at(0).result.shape == Shape{3});
  CHECK(ga[1].str() == "einsum(dY, A, 'i k, i j -> k')");

  CHECK(texts(one_operand_einsum("i j -> j", "j")) == std::vector<std::string>{"repeat(dY, 'j -> i j', i=3)"});
  CHECK(texts(one_operand_einsum("i j -> j i", "j i")) == std::vector<std::string>{"rearrange(dY, 'j i -> i j')"});
  CHECK(texts(one_operand_einsum("i j -> i j", "i j")) == std::vector<std::string>{"dY"});

  PlanBuilder diag("einsum", "i i -> i", DType::f32, {{"i", 3}});
  const Plan pd = diag.finish(diag.copy(diag.view(diag.input("i i"), "i", {4})));
  CHECK_THROWS_WITH(gradient_expressions(pd), Catch::Contains("not supported") &&
                                                  Catch::Contains("operand 0 takes a diagonal (axis i twice)"));
}

TEST_CASE("gradient expressions of rearrange, reduce, repeat and maps", "[backward]") {
  struct Row {
    const char* what;
    Plan plan;
    const char* gradient;
  };
  PlanBuilder split("rearrange", "b (h d) -> b h d", DType::f32, {{"b", 2}, {"h", 8}, {"d", 4}});
  PlanBuilder merge("rearrange", "b h d -> b (h d)", DType::f32, {{"b", 2}, {"h", 8}, {"d", 4}});
  PlanBuilder rep("repeat", "h w -> c h w", DType::f32, {{"c", 4}, {"h", 3}, {"w", 5}});
  PlanBuilder mul("map", "b s h, h -> b s h", DType::f32, {{"b", 2}, {"s", 3}, {"h", 4}});
  const int ma = mul.input("b s h"), mb = mul.input("h");
  const Row rows[] = {
      {"rearrange split", split.finish(split.view(split.input("b (h d)"), "b h d")), "rearrange(dY, 'b h d -> b (h d)')"},
      {"rearrange merge", merge.finish(merge.view(merge.input("b h d"), "b (h d)")),
       "rearrange(dY, 'b (h d) -> b h d', h=8, d=4)"},
      {"reduce sum", reduction(Reduction::sum), "repeat(dY, 'b h -> b s h', s=16)"},
      {"reduce mean", reduction(Reduction::mean), "repeat(dY / 16, 'b h -> b s h', s=16)"},
      {"reduce max", reduction(Reduction::max), "where(X == Y, dY, 0)"},
      {"reduce min", reduction(Reduction::min), "where(X == Y, dY, 0)"},
      {"reduce prod", reduction(Reduction::prod), "dY · Y / X"},
      {"repeat", rep.finish(rep.copy(rep.view(rep.input("h w"), "c h w", {0, 5, 1}))),
       "reduce(dY, 'c h w -> h w', 'sum')"},
      {"relu", unary(UnaryOp::relu, 10), "dY · (X > 0)"},
      {"gelu", unary(UnaryOp::gelu, 10), "dY · gelu'(X)"},
      {"mul, operand 1 broadcast", mul.finish(mul.map(BinaryOp::mul, ma, mul.view(mb, "b s h", {0, 0, 1}))),
       "reduce(dY · A, 'b s h -> h', 'sum')"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.what);
    const std::vector<GradientExpr> g = gradient_expressions(r.plan);
    CHECK(g.back().str() == r.gradient);
  }
  CHECK(texts(rows[10].plan).front() == "dY · B");
  CHECK_THROWS_WITH(gradient_expressions(reduction(Reduction::any)),
                    Catch::Contains("backward of reduce any is not defined"));
}

TEST_CASE("a linear layer: forward 2·B·D·K, backward 4·B·D·K (the seeds' 6·N·P)", "[backward]") {
  struct Row {
    std::int64_t B, D, K;
  };
  for (const Row& r : {Row{1024, 256, 64}, Row{16384, 32768, 8192}}) {
    CAPTURE(r.B, r.D, r.K);
    const Plan forward = linear(r.B, r.D, r.K);
    const Count bdk = Count::from_int64(r.B) * Count::from_int64(r.D) * Count::from_int64(r.K);
    const BackwardCost back = backward_cost(forward, test::toy_plan);
    CHECK(cost(forward).flops == Count(2) * bdk);
    CHECK(back.flops == Count(4) * bdk);
    CHECK(cost(forward).flops + back.flops == Count(6) * bdk);
    REQUIRE(back.gradients.size() == 2);
    CHECK(back.gradients[0].input == "operand 0");
    CHECK(back.gradients[0].expression == "einsum(dY, B, 'b k, d k -> b d')");
    CHECK(back.gradients[0].cost.flops_formula.str() == "2·b·d·k");
    CHECK(back.bytes == back.gradients[0].cost.ideal_bytes() + back.gradients[1].cost.ideal_bytes());
  }
}

TEST_CASE("backward costs of elementwise derivatives and scatters, per element", "[backward]") {
  const std::int64_t n = 1024 * 1024;
  const BackwardCost relu = backward_cost(unary(UnaryOp::relu, n), test::toy_plan);
  CHECK(relu.flops == Count(n));                // 1 per element
  CHECK(relu.bytes == Count(3 * n * 2));        // read dY and X, write dX (bf16)
  CHECK(relu.gradients[0].cost.bytes_formula.str() == "6·n");
  CHECK(backward_cost(unary(UnaryOp::gelu, n), test::toy_plan).flops == Count(18 * n));

  const BackwardCost max = backward_cost(reduction(Reduction::max), test::toy_plan);
  CHECK(max.flops == Count(2 * 256));           // compare + select per input element
  CHECK(max.bytes == Count((256 + 16 + 16 + 256) * 4));

  const BackwardCost mean = backward_cost(reduction(Reduction::mean), test::toy_plan);
  CHECK(mean.flops == Count(16));               // dY / 16, then a repeat (0 FLOPs)
  CHECK(mean.gradients[0].cost.steps.size() == 3);  // the scale, the broadcast view, the copy
  CHECK(mean.bytes == Count((16 + 16) * 4 + (16 + 256) * 4));

  const BackwardCost sum = backward_cost(reduction(Reduction::sum), test::toy_plan);
  CHECK(sum.flops == Count(0));
  CHECK(sum.bytes == Count((16 + 256) * 4));
}
