// Costs from patterns and sizes alone: the seeds' numbers exactly, numpy.einsum_path's FLOP
// counts, planned bytes of views and copies, formulas, backward, and a measured run.
#include <catch2/catch.hpp>

#include "einexpr/einexpr.hpp"
#include "matchers.hpp"

using namespace einexpr;

TEST_CASE("the seeds' linear model: 2·B·D·K FLOPs, exactly", "[cost][seeds]") {
  CHECK(cost_einsum("b d, d k -> b k", {{"b", 1024}, {"d", 256}, {"k", 64}}).flops == Count(2 * 1024 * 256 * 64));
  const Cost big = cost_einsum("b d, d k -> b k", {{"b", 16384}, {"d", 32768}, {"k", 8192}}, DType::bf16);
  CHECK(big.flops.str() == "8796093022208");
  // forward + backward = 6·N·P: the backward is two contractions of 2·B·D·K each.
  const BackwardCost back = backward_cost(plan_from_sizes("einsum", "b d, d k -> b k",
                                                          {{"b", 16384}, {"d", 32768}, {"k", 8192}}, DType::bf16));
  CHECK(back.gradients.size() == 2);
  CHECK(back.flops == Count(2) * big.flops);
}

TEST_CASE("the seeds' two-layer model: (2·B·D·D) + (2·B·D·K) = 4.398e13", "[cost][seeds]") {
  const AxisLengths s = {{"b", 16384}, {"d", 32768}, {"e", 32768}, {"k", 8192}};
  const Count h1 = cost_einsum("b d, d e -> b e", s).flops;
  const Count h2 = cost_einsum("b e, e k -> b k", s).flops;
  CHECK((h1 + h2).str() == "43980465111040");
  // As one einsum the planner contracts w1·w2 first, which is cheaper, and says so.
  const Cost chain = cost_einsum("b d, d e, e k -> b k", s);
  CHECK(chain.flops < h1 + h2);
  CHECK(chain.flops <= chain.naive_flops);
}

TEST_CASE("the seeds' arithmetic intensities in bf16 against H100's 295.4", "[cost][seeds]") {
  const std::int64_t n = 1024 * 1024;
  const DeviceSpec& h100 = find_device("h100");
  CHECK(h100.accelerator_intensity(DType::bf16) == Approx(295.37).epsilon(1e-4));
  const Cost relu = cost_map(UnaryOp::relu, {n}, DType::bf16);
  CHECK(relu.intensity() == 0.25);
  CHECK_FALSE(roofline(relu, h100).compute_bound);
  CHECK(cost_map(UnaryOp::gelu, {n}, DType::bf16).intensity() == 5.0);
  const Cost dot = cost_einsum("i, i ->", {{"i", n}}, DType::bf16);
  CHECK(dot.flops_exact == Count(2 * n - 1));
  CHECK(dot.ideal_bytes() == Count(4 * n + 2));
  CHECK(dot.intensity_exact() == Approx(0.5).epsilon(1e-5));
  // Its gradients (once refused: a scalar output): dA = dY · B and dB = dY · A, n each.
  CHECK(backward_cost(plan_from_sizes("einsum", "i, i ->", {{"i", n}}, DType::bf16)).flops == Count(2 * n));
  const std::int64_t m = 1024;
  const Cost mv = cost_einsum("i, i j -> j", {{"i", m}, {"j", m}}, DType::bf16);
  CHECK(mv.flops_exact == Count(m * (2 * m - 1)));
  CHECK(mv.intensity_exact() == Approx(1.0).epsilon(3e-3));
  const Cost mm = cost_einsum("i j, j k -> i k", {{"i", m}, {"j", m}, {"k", m}}, DType::bf16);
  CHECK(mm.flops_exact == Count(m * m * (2 * m - 1)));
  CHECK(mm.intensity_exact() == Approx(341.1667).epsilon(1e-6));
  CHECK(mm.intensity_exact() > h100.accelerator_intensity(DType::bf16));
  CHECK(roofline(mm, h100).compute_bound);
}

TEST_CASE("two-operand einsum FLOPs equal numpy.einsum_path's count", "[cost]") {
  // numpy: product of every index's size, times 2 when an index is summed, else 1.
  // Sizes: b=3 s1=4 s2=5 h=6 i=7 j=8 k=9 l=10 m=2 n=3.
  const AxisLengths sizes = {{"b", 3}, {"s1", 4}, {"s2", 5}, {"h", 6}, {"i", 7},
                             {"j", 8}, {"k", 9},  {"l", 10}, {"m", 2}, {"n", 3}};
  struct Row {
    const char* pattern;
    std::uint64_t numpy_flops;
  };
  const std::vector<Row> rows = {
      {"i j, j k -> i k", 1008},          {"b s1 h, b s2 h -> b s1 s2", 720}, {"i, i ->", 14},
      {"i, j -> i j", 56},                {"i, i -> i", 7},                   {"i j, j -> i", 112},
      {"j, j k -> k", 144},               {"b i j, b j k -> b i k", 3024},    {"i j, k j -> i k", 1008},
      {"i j, i k -> j k", 1008},          {"i j, j k -> k i", 1008},          {"i j, i j -> i j", 56},
      {"i j, i j ->", 112},               {"i j, j i -> i", 112},             {"b i, b -> b i", 21},
      {"i j k, j k -> i", 1008},          {"i j k, k l -> i j l", 10080},     {"b h i j, b h j k -> b h i k", 18144},
      {"i j, k l -> i j k l", 5040},      {"m n, n -> m", 12},                {"b s1 h, h -> b s1", 144},
      {"i j, j k -> i j k", 504},         {"b i j, b j -> b i", 336},         {"i i, i -> i", 7},
  };
  for (const Row& r : rows) {
    CAPTURE(r.pattern);
    const Cost c = cost_einsum(r.pattern, sizes);
    CHECK(c.flops == Count(r.numpy_flops));
    CHECK(c.flops_numpy == Count(r.numpy_flops));  // (its naive count charges a Hadamard 2·: test_einsum_table)
  }
}

TEST_CASE("a chain's planned order never costs more than the naive loop", "[cost]") {
  const AxisLengths sizes = {{"a", 64}, {"b", 8}, {"c", 64}, {"d", 8}, {"e", 64}, {"f", 3}};
  for (const char* p : {"a b, b c, c d -> a d", "a b, b c, c d, d e -> a e", "a b, a c, a d -> b c d",
                        "a b c, c d, d e f -> a b e f", "a, a b, b c, c d, d e -> e", "a b, b c, c a ->"}) {
    CAPTURE(p);
    const Cost c = cost_einsum(p, sizes);
    CHECK(c.flops <= c.naive_flops);
    CHECK(c.flops > Count(0));
  }
}

TEST_CASE("planned bytes: 0 for a view, twice the tensor for a copy", "[cost]") {
  const AxisLengths s = {{"b", 2}, {"h", 3}, {"w", 4}, {"c", 5}};
  const Cost view = cost_rearrange("b h w c -> b (h w) c", s, DType::f32);
  CHECK(view.bytes_planned == Count(0));
  CHECK(view.steps.size() == 1);
  CHECK(view.steps[0].is_view);
  const Cost copy = cost_rearrange("b h w c -> (b c) h w", s, DType::f32);  // b, c cannot merge: a copy
  CHECK(copy.bytes_planned == Count(2 * 120 * 4));
  CHECK(copy.flops == Count(0));
  CHECK(cost_reduce("b h w c -> b c", Reduction::sum, s).flops == Count(120 - 10));
  CHECK(cost_reduce("b h w c -> b c", Reduction::mean, s).flops == Count(120));
  CHECK(cost_repeat("b h -> b h k", {{"b", 2}, {"h", 3}, {"k", 4}}).flops == Count(0));
}

TEST_CASE("costs as formulas in the axis names", "[cost]") {
  const Cost c = cost_einsum("b s1 h, b s2 h -> b s1 s2", {{"b", 128}, {"s1", 100}, {"s2", 200}, {"h", 128}},
                             DType::bf16);
  CHECK(c.flops_formula.str() == "2·b·h·s1·s2");
  CHECK(c.bytes_formula.str() == "2·(b·h·s1 + b·h·s2 + b·s1·s2)");
  CHECK(c.flops == Count(2ull * 128 * 100 * 200 * 128));
}

TEST_CASE("cost errors name what is missing", "[cost][errors]") {
  CHECK_THROWS_MATCHES(cost_einsum("i j, j k -> i k", {{"i", 2}, {"j", 3}}), ShapeError,
                       testing_support::MessageHas({"the size of axis k is not given", "in einsum('i j, j k -> i k')"}));
  CHECK_THROWS_MATCHES(plan_from_sizes("transpose", "i j -> j i", {{"i", 2}, {"j", 3}}), Error,
                       testing_support::MessageHas({"unknown op 'transpose'"}));
  CHECK_THROWS_AS(cost_einsum("i j, j k -> i k", {{"i", 2}, {"j", 3}, {"k", -1}}), ShapeError);
}

TEST_CASE("a measured run reports FLOP/s, bandwidth and MFU beside its cost", "[cost][measure]") {
  const Compiled f = compile_einsum("i j, j k -> i k");
  const std::array<Tensor, 2> in{Tensor::randn({64, 32}, DType::f32, 1), Tensor::randn({32, 48}, DType::f32, 2)};
  MeasureOptions o;
  o.warmup = 1;
  o.min_repeats = 3;
  o.max_repeats = 3;
  o.min_seconds = 0;
  const RunReport r = measure_run(f, in, find_device("cpu"), o);
  CHECK(r.time.repeats == 3);
  CHECK(r.cost.flops == Count(2 * 64 * 32 * 48));
  CHECK(r.flops_per_s == Approx(r.cost.flops.to_double() / r.time.median_s));
  CHECK(r.mfu == Approx(r.flops_per_s / find_device("cpu").peak_for(DType::f32)));
  CHECK(r.str().find("GFLOP/s") != std::string::npos);
}
