// Backward plans derived from forward plans (backward.hpp) and what they cost: the seeds'
// 6·N·P rule, each op's gradient expression, and per-element derivative counts. Running
// every gradient against a reference is tests/lib/test_gradients.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/cost.hpp"
#include "einexpr/codegen/lower.hpp"
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

Plan planned(OpSpec spec, const char* pattern, std::vector<Shape> shapes, DType dtype = DType::f32) {
  std::vector<Layout> layouts;
  for (Shape& s : shapes) layouts.push_back(Layout::contiguous(std::move(s)));
  const ast::Pattern p = checked(pattern, spec.op());
  return plan(spec, &p, layouts, dtype);
}

std::vector<std::string> expressions(const Plan& forward) {
  std::vector<std::string> out;
  for (const Gradient& g : gradients(forward)) out.push_back(g.expression);
  return out;
}

}  // namespace

TEST_CASE("a linear layer: forward 2·B·D·K, backward 4·B·D·K (the seeds' 6·N·P)", "[backward]") {
  struct Row {
    std::int64_t B, D, K;
  };
  for (const Row& r : {Row{1024, 256, 64}, Row{16384, 32768, 8192}}) {
    CAPTURE(r.B, r.D, r.K);
    const Plan forward = planned(OpSpec::einsum(), "b d, d k -> b k", {{r.B, r.D}, {r.D, r.K}});
    const Count bdk = Count::from_int64(r.B) * Count::from_int64(r.D) * Count::from_int64(r.K);
    const BackwardCost back = backward_cost(forward);
    CHECK(cost(forward).flops == Count(2) * bdk);
    CHECK(back.flops == Count(4) * bdk);
    CHECK(cost(forward).flops + back.flops == Count(6) * bdk);
    REQUIRE(back.gradients.size() == 2);
    CHECK(back.gradients[0].input == "operand 1");
    CHECK(back.gradients[0].expression == "einsum(dY, B, 'b k, d k -> b d')");
    CHECK(back.gradients[1].expression == "einsum(dY, A, 'b k, b d -> d k')");
    CHECK(back.gradients[0].cost.flops_formula.str() == "2·b·d·k");
    CHECK(back.bytes == back.gradients[0].cost.ideal_bytes() + back.gradients[1].cost.ideal_bytes());
  }
}

TEST_CASE("backward_cost and run_gradients take gradients already derived", "[backward]") {
  const Plan forward = planned(OpSpec::einsum(), "b d, d k -> b k", {{3, 4}, {4, 5}}, DType::f64);
  const std::vector<Gradient> grads = gradients(forward);
  const BackwardCost once = backward_cost(grads);
  CHECK(once.flops == backward_cost(forward).flops);
  CHECK(once.bytes == backward_cost(forward).bytes);
  REQUIRE(once.gradients.size() == 2);
  CHECK(once.gradients[1].expression == "einsum(dY, A, 'b k, b d -> d k')");

  const std::vector<Tensor> xs = {Tensor::randn({3, 4}, DType::f64, 1), Tensor::randn({4, 5}, DType::f64, 2)};
  const Tensor y = lower_cpu(forward).run(xs);
  const Tensor dy = Tensor::randn({3, 5}, DType::f64, 3);
  const std::vector<Tensor> a = run_gradients(forward, xs, y, dy);
  const std::vector<Tensor> b = run_gradients(forward, grads, xs, y, dy);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) CHECK(a[i].to_vector<double>() == b[i].to_vector<double>());
  // Gradients of another plan, reading an input this one lacks: an error, not a wild read.
  const Plan unary = planned(OpSpec::einsum(), "b d -> d", {{3, 4}}, DType::f64);
  const std::vector<Tensor> one = {xs[0]};
  const Tensor y1 = lower_cpu(unary).run(one);
  std::vector<Gradient> foreign = gradients(forward);
  foreign.resize(1);
  foreign[0].sources.back().input = 1;
  CHECK_THROWS_WITH(run_gradients(unary, foreign, one, y1, Tensor::randn({4}, DType::f64, 4)),
                    Catch::Contains("reads input 1, which this plan does not have"));
}

TEST_CASE("gradients past 10 operands take the forward's order backpropagated, and are right", "[backward]") {
  // Up to 10 operands every gradient's order is the exhaustive optimum; beyond, the
  // forward's order backpropagated, or greedy's where it is cheaper (kGradientExactLimit:
  // with a search each the n gradients took 4-30 times the forward's planning time). This
  // einsum is no matrix chain.
  const char* twelve =
      "x4 x5 x6, x8 x0 x6, x7 x3 x5, x0 x2 x8, x5 x7 x6, x3 x6 x4, x1 x3 x0, x3 x6 x2, x2 x6 x1, "
      "x1 x2 x4, x7 x2 x1, x0 x8 x1 -> x0 x1";
  const Plan forward = planned(OpSpec::einsum(), twelve, std::vector<Shape>(12, Shape{3, 3, 3}), DType::f64);
  REQUIRE(forward.notes.size() >= 1);  // the order's note first, then the contractions' copies
  CHECK_THAT(forward.notes[0], Catch::Contains("FLOPs (dynamic programming, "));  // the forward: exact programs
  const std::vector<Gradient> grads = gradients(forward);
  REQUIRE(grads.size() == 12);
  const auto forward_flops = cost(forward).flops;
  int backpropagated = 0;
  for (const Gradient& g : grads) {
    CAPTURE(g.expression);
    REQUIRE(g.plan.notes.size() >= 1);
    const std::string& note = g.plan.notes[0];
    CAPTURE(note);
    backpropagated += note.find("FLOPs (the forward's order, backpropagated, ") != std::string::npos;
    CHECK((note.find("FLOPs (the forward's order, backpropagated, ") != std::string::npos ||
           note.find("FLOPs (greedy, ") != std::string::npos));
    // Each step of the backpropagated order has the axes of a forward step; greedy's is cheaper.
    CHECK(cost(g.plan).flops <= forward_flops * 2);
  }
  CHECK(backpropagated > 0);
  // The einsum is linear in each operand X_i, so sum(dX_i * X_i) = sum(dY * Y) for every i.
  std::vector<Tensor> xs;
  for (std::uint64_t i = 0; i < 12; ++i) xs.push_back(Tensor::randn({3, 3, 3}, DType::f64, 10 + i));
  const Tensor y = lower_cpu(forward).run(xs);
  const Tensor dy = Tensor::randn({3, 3}, DType::f64, 30);
  const auto dot = [](const Tensor& a, const Tensor& b) {
    const std::vector<double> u = a.to_vector<double>(), v = b.to_vector<double>();
    REQUIRE(u.size() == v.size());
    double sum = 0;
    for (std::size_t k = 0; k < u.size(); ++k) sum += u[k] * v[k];
    return sum;
  };
  const double loss = dot(dy, y);
  CHECK(std::abs(loss) > 1e-3);  // random values: a zero here would make the checks below weak
  const std::vector<Tensor> dxs = run_gradients(forward, grads, xs, y, dy);
  REQUIRE(dxs.size() == 12);
  for (std::size_t i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(dot(dxs[i], xs[i]) == Approx(loss).epsilon(1e-10));
  }

  const char* eight = "x4 x5 x6, x8 x0 x6, x7 x3 x5, x0 x2 x8, x5 x7 x6, x3 x6 x4, x1 x3 x0, x3 x6 x2 -> x0 x1";
  for (const Gradient& g : gradients(planned(OpSpec::einsum(), eight, std::vector<Shape>(8, Shape{3, 3, 3})))) {
    CAPTURE(g.expression);
    REQUIRE(g.plan.notes.size() >= 1);  // the order's note first
    CHECK_THAT(g.plan.notes[0], Catch::Contains("FLOPs (optimal: exhaustive, "));
  }
}

TEST_CASE("the seeds' two-layer model, layer by layer: backward = 2 x forward", "[backward]") {
  const std::int64_t B = 16384, D = 32768, K = 8192;
  const Plan layer1 = planned(OpSpec::einsum(), "b d, d e -> b e", {{B, D}, {D, D}});
  const Plan layer2 = planned(OpSpec::einsum(), "b e, e k -> b k", {{B, D}, {D, K}});
  const Count forward = cost(layer1).flops + cost(layer2).flops;
  CHECK(forward.str() == "43980465111040");
  CHECK(backward_cost(layer1).flops + backward_cost(layer2).flops == Count(2) * forward);
}

TEST_CASE("gradient expressions of einsums: diagonals, scalars, private axes, broadcasts", "[backward]") {
  struct Row {
    const char* pattern;
    std::vector<Shape> shapes;
    std::vector<std::string> gradients;
  };
  const Row rows[] = {
      {"a b, b c, c d -> a d", {{2, 3}, {3, 4}, {4, 5}},
       {"einsum(dY, B, C, 'a d, b c, c d -> a b')", "einsum(dY, A, C, 'a d, a b, c d -> b c')",
        "einsum(dY, A, B, 'a d, a b, b c -> c d')"}},
      {"i, i ->", {{7}, {7}}, {"einsum(dY, B, ', i -> i')", "einsum(dY, A, ', i -> i')"}},
      {"i i ->", {{5, 5}}, {"einsum(dY, ' -> i i')"}},
      {"i j, k -> i k", {{3, 5}, {4}}, {"einsum(dY, B, 'i k, k -> i j')", "einsum(dY, A, 'i k, i j -> k')"}},
      {"... i, i j -> ... j", {{1, 3}, {3, 2}}, {"einsum(dY, B, '…0 j, i j -> …0 i')", "einsum(dY, A, '…0 j, …0 i -> i j')"}},
      {"b (h d), h d k -> b k", {{2, 6}, {2, 3, 4}},
       {"einsum(dY, B, 'b k, h d k -> b (h d)')", "einsum(dY, A, 'b k, b (h d) -> h d k')"}},
  };
  for (const Row& r : rows) {
    CAPTURE(r.pattern);
    CHECK(expressions(planned(OpSpec::einsum(), r.pattern, r.shapes)) == r.gradients);
  }
}

TEST_CASE("gradient costs of rearrange, repeat, reduce and maps", "[backward]") {
  const Plan sum = planned(OpSpec::reduce(Reduction::sum), "b s h -> b h", {{2, 16, 8}});
  const BackwardCost sum_back = backward_cost(sum);
  CHECK(sum_back.gradients.at(0).expression == "repeat(dY, 'b h -> b s h')");
  CHECK(sum_back.flops == Count(0));
  CHECK(sum_back.bytes == Count(16 * 4));  // a broadcast view of dY: read once, nothing written

  const BackwardCost mean = backward_cost(planned(OpSpec::reduce(Reduction::mean), "b s h -> b h", {{2, 16, 8}}));
  CHECK(mean.gradients.at(0).expression == "repeat(dY / 16, 'b h -> b s h')");
  CHECK(mean.flops == Count(16));  // dY / 16 over the 2·8 outputs, then a broadcast view

  const BackwardCost max = backward_cost(planned(OpSpec::reduce(Reduction::max), "b s h -> b h", {{2, 16, 8}}));
  CHECK(max.gradients.at(0).expression == "where(X == Y, dY, 0)");
  CHECK(max.flops == Count(2 * 256));                     // compare + select per input element
  CHECK(max.bytes == Count((16 + 256 + 16 + 256) * 4));  // read dY, X, Y; write dX

  const BackwardCost rep = backward_cost(planned(OpSpec::repeat({{"c", 4}}), "h w -> c h w", {{3, 5}}));
  CHECK(rep.gradients.at(0).expression == "reduce(dY, 'c h w -> h w', 'sum')");
  CHECK(rep.flops == Count(60 - 15));

  const BackwardCost split = backward_cost(planned(OpSpec::rearrange({{"h", 8}}), "b (h d) -> b h d", {{2, 32}}));
  CHECK(split.gradients.at(0).expression == "rearrange(dY, 'b h d -> b (h d)')");
  CHECK(split.flops == Count(0));
  CHECK(split.bytes == Count(64 * 4));  // a view: dY read once, nothing written

  const std::int64_t n = 1024 * 1024;
  const BackwardCost relu = backward_cost(plan_unary(UnaryOp::relu, Layout::contiguous({n}), DType::bf16));
  CHECK(relu.flops == Count(n));          // 1 per element
  CHECK(relu.bytes == Count(3 * n * 2));  // read dY and X, write dX (bf16)
  CHECK(relu.gradients[0].cost.bytes_formula.str() == "6·…0");
  CHECK(backward_cost(plan_unary(UnaryOp::gelu, Layout::contiguous({n}), DType::bf16)).flops == Count(18 * n));

  const Plan mul = planned(OpSpec::map(BinaryOp::mul), "b s h, h -> b s h", {{2, 3, 4}, {4}});
  CHECK(expressions(mul) == std::vector<std::string>{"dY · B", "sum(dY · A)"});
  const BackwardCost mul_back = backward_cost(mul);
  CHECK(mul_back.gradients[1].cost.flops == Count(24 + (24 - 4)));  // the product, then the sum over b s

  CHECK_THROWS_WITH(gradients(planned(OpSpec::reduce(Reduction::any), "b s h -> b h", {{2, 16, 8}}, DType::boolean)),
                    Catch::Contains("not defined"));
}

TEST_CASE("the GELU gradient over contiguous rows, through the vector tanh, against its formula in long double", "[backward]") {
  for (DType dtype : {DType::f32, DType::f64}) {
    for (std::int64_t n : {1, 7, 2048, 5001}) {  // under, at and over the kernel's block of 2048
      CAPTURE(name(dtype), n);
      const Plan p = plan_unary(UnaryOp::gelu, Layout::contiguous({n}), dtype);
      Tensor x64 = Tensor::randn({n}, DType::f64, 11);
      for (std::int64_t i = 0; i < n; ++i) x64.data<double>()[i] *= 3;  // into tanh's saturation too
      const Tensor x = x64.to(dtype), dy = Tensor::randn({n}, DType::f64, 12).to(dtype);
      const Tensor y = lower_cpu(p).run(std::vector<Tensor>{x});
      const std::vector<Tensor> g = run_gradients(p, std::vector<Tensor>{x}, y, dy);
      REQUIRE(g.size() == 1);
      const Tensor got = g[0].to(DType::f64), xs = x.to(DType::f64), dys = dy.to(DType::f64);
      const long double k = 0.7978845608028654L, c = 0.044715L;
      const double tol = dtype == DType::f32 ? 2e-6 : 1e-14;
      for (std::int64_t i = 0; i < n; ++i) {
        const long double v = xs.data<double>()[i], d = dys.data<double>()[i];
        const long double t = std::tanh(k * (v + c * v * v * v));
        const long double want = d * (0.5L * (1 + t) + 0.5L * v * (1 - t * t) * k * (1 + 3 * c * v * v));
        CAPTURE(i, v, d);
        CHECK(std::abs(static_cast<long double>(got.data<double>()[i]) - want) <= tol * (std::abs(want) + std::abs(d)));
      }
    }
  }
}
