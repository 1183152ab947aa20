// reduce var, std and logsumexp: against torch 1.13's values (generated once by
// tests/lib/data/make_reduce_torch.py and committed), against the naive f64 reference for
// every pattern, dtype and layout of test_reduce.cpp's kind, and their dtype errors, costs
// and gradients.
#include <cmath>

#include "check_op.hpp"
#include "data/reduce_torch_values.hpp"
#include "einexpr/codegen/backward.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::check_against_reference;

TEST_CASE("var, std and logsumexp match torch, infinities, NaN and corrections included", "[reduce][stats]") {
  for (const torch_values::ReduceCase& c : torch_values::reduce_cases) {
    CAPTURE(c.what, c.pattern, name(c.reduction), c.correction);
    const Tensor x = Tensor::from_doubles(c.input, c.shape, c.dtype);
    const Tensor y = reduce(x, c.pattern, c.reduction, {}, c.correction);
    REQUIRE(y.shape() == c.out_shape);
    CHECK(y.dtype() == c.dtype);
    const std::vector<double> got = y.to_vector<double>();
    const double tol = c.dtype == DType::f64 ? 1e-12 : 2e-6;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double want = c.expected[i];
      CAPTURE(i, got[i], want);
      if (std::isnan(want)) CHECK(std::isnan(got[i]));
      else if (std::isinf(want)) CHECK(got[i] == want);
      else CHECK(std::fabs(got[i] - want) <= tol * std::max(1.0, std::fabs(want)));
    }
  }
}

TEST_CASE("var, std and logsumexp match the f64 reference on every layout and float dtype", "[reduce][stats]") {
  struct Row {
    const char* pattern;
    Shape shape;
    AxisLengths lengths;
  };
  const Row rows[] = {
      {"b s h -> b h", {3, 5, 4}, {}},          {"b s h -> b s", {3, 5, 70}, {}},
      {"b h w c -> c", {2, 3, 4, 5}, {}},       {"b h w ->", {2, 3, 4}, {}},
      {"a b c -> c a", {2, 3, 4}, {}},          {"(a b) c -> b c", {6, 4}, {{"a", 2}}},
      {"a b -> a b", {3, 4}, {}},               {"b (s 2) h -> b s h", {2, 6, 3}, {}},
      {"a b -> b", {1300, 3}, {}},              {"a b -> a", {3, 1300}, {}},
  };
  for (const Row& row : rows)
    for (Reduction r : {Reduction::var, Reduction::std, Reduction::logsumexp})
      for (std::int64_t correction : {0, 1, 2}) {
        if (r == Reduction::logsumexp && correction != 1) continue;
        CAPTURE(row.pattern, shape_str(row.shape), name(r), correction);
        check_against_reference(
            {row.shape}, testing_support::float_dtypes, 64,
            [&](const auto& in) { return reduce(in[0], row.pattern, r, row.lengths, correction); },
            [&](const auto& in) { return reference::reduce(in[0], row.pattern, r, row.lengths, correction); });
      }
}

TEST_CASE("var, std and logsumexp are for floats, and a negative correction is an error", "[reduce][stats][errors]") {
  const Tensor i = Tensor::randn({3, 4}, DType::i64, 1), b = Tensor::randn({3, 4}, DType::boolean, 1);
  for (const char* r : {"var", "std", "logsumexp"}) {
    CAPTURE(r);
    CHECK_THROWS_MATCHES(reduce(i, "a b -> a", r), DTypeError,
                         testing_support::MessageHas({"needs a floating dtype", "i64"}));
    CHECK_THROWS_AS(reduce(b, "a b -> a", r), DTypeError);
  }
  const Tensor x = Tensor::randn({3, 4}, DType::f32, 1);
  CHECK_THROWS_MATCHES(reduce(x, "a b -> a", Reduction::var, {}, -1), Error,
                       testing_support::MessageHas({"correction must be 0 or more, not -1", "a b -> a"}));
}

TEST_CASE("var, std and logsumexp: FLOPs, plan text and gradients", "[reduce][stats][cost]") {
  const AxisLengths sizes = {{"b", 8}, {"s", 128}, {"h", 64}};
  const std::int64_t n_in = 8 * 128 * 64, n_out = 8 * 64;
  CHECK(cost_reduce("b s h -> b h", Reduction::var, sizes).flops == Count(4 * n_in));
  CHECK(cost_reduce("b s h -> b h", Reduction::std, sizes).flops == Count(4 * n_in + n_out));
  CHECK(cost_reduce("b s h -> b h", Reduction::logsumexp, sizes).flops == Count(4 * n_in));
  CHECK(cost_reduce("b s h -> b h", Reduction::var, sizes).flops_formula.str() == "4·b·h·s");
  CHECK_THAT(plan_from_sizes(OpSpec::reduce(Reduction::var, {}, 0), "b s h -> b h", sizes).str(),
             Catch::Contains("reduce.var(correction=0)"));
  CHECK(OpSpec::reduce(Reduction::std, {}, 0).str() == "reduce std (correction 0)");
  const Plan var = plan_from_sizes(OpSpec::reduce(Reduction::var), "b s h -> b h", sizes);
  const std::vector<Gradient> g = gradients(var);
  REQUIRE(g.size() == 1);
  CHECK(g[0].expression == "dY · 2·(X - mean(X))/(n - 1)");
  // the sum over s (n_in - n_out adds), its scaling to the mean (n_out), and 3 FLOPs per
  // input element (dY · c · (X - M))
  CHECK(backward_cost(var).flops == Count(n_in - n_out + n_out + 3 * n_in));
  // std: dY / Y first (n_out divides)
  const Plan sd = plan_from_sizes(OpSpec::reduce(Reduction::std), "b s h -> b h", sizes);
  CHECK(backward_cost(sd).flops == Count(n_in + n_out + 3 * n_in));
  const Plan lse = plan_from_sizes(OpSpec::reduce(Reduction::logsumexp), "b s h -> b h", sizes);
  CHECK(backward_cost(lse).flops == Count(3 * n_in));
  CHECK(gradients(lse)[0].expression == "dY · exp(X - Y)");
}
