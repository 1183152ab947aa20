// Every gradient of rearrange, repeat, reduce and the maps runs (run_gradients on plans
// derived from the forward plan) and matches central finite differences of the naive f64
// reference: dX[k] = (L(X + h·e_k) - L(X - h·e_k)) / 2h with L(X) = sum(dY · f(X)). The ops
// linear in X are exact at h = 1; the others use a small h. einsum's gradients are checked
// against an exact naive gradient in test_einsum_table.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "einexpr/codegen/backward.hpp"
#include "einexpr/einexpr.hpp"
#include "reference.hpp"

using namespace einexpr;

namespace {

using Forward = std::function<reference::Result(const std::vector<Tensor>&)>;

Tensor f64(std::vector<double> v, const Shape& shape) { return Tensor::from_vector<double>(std::move(v), shape); }

double loss(const Forward& f, const std::vector<Tensor>& xs, const std::vector<double>& dy) {
  const reference::Result y = f(xs);
  double sum = 0;
  for (std::size_t i = 0; i < dy.size(); ++i) sum += dy[i] * y.values[i];
  return sum;
}

/// The finite-difference gradient of every input.
std::vector<reference::Result> numeric_gradients(const Forward& f, const std::vector<Tensor>& xs,
                                                 const std::vector<double>& dy, double h) {
  std::vector<reference::Result> out;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    reference::Result g{xs[i].shape(), {}};
    std::vector<double> v = xs[i].to_vector<double>();
    for (std::size_t k = 0; k < v.size(); ++k) {
      std::vector<Tensor> plus = xs, minus = xs;
      std::vector<double> vp = v, vm = v;
      vp[k] += h;
      vm[k] -= h;
      plus[i] = f64(vp, xs[i].shape());
      minus[i] = f64(vm, xs[i].shape());
      g.values.push_back((loss(f, plus, dy) - loss(f, minus, dy)) / (2 * h));
    }
    out.push_back(std::move(g));
  }
  return out;
}

/// Random f64 values of `shape`, kept at least `margin` from 0 (relu, abs and the
/// functions defined for positive x only differentiate cleanly there) and positive when asked.
Tensor values(const Shape& shape, std::uint64_t seed, double margin = 0, bool positive = false) {
  std::vector<double> v = Tensor::randn(shape, DType::f64, seed).to_vector<double>();
  for (double& x : v) {
    if (positive) x = std::fabs(x) + 0.5;
    else if (std::fabs(x) < margin) x = x < 0 ? -margin : margin;
  }
  return f64(std::move(v), shape);
}

struct Case {
  std::string what;
  OpSpec spec;
  std::string pattern;            // empty: a map of one argument without a pattern
  std::vector<Tensor> inputs;
  Forward reference;
  double h = 1, tolerance = 1e-10;
};

void check(const Case& c) {
  CAPTURE(c.what, c.pattern);
  const Compiled compiled(c.spec, c.pattern);
  const Tensor y = compiled.run(c.inputs);
  CHECK(reference::max_rel_error(y, c.reference(c.inputs)) < 1e-12);
  const Plan& plan = compiled.plan(c.inputs);
  const Tensor dy = Tensor::randn(y.shape(), DType::f64, 99);
  const std::vector<Tensor> got = run_gradients(plan, c.inputs, y, dy);
  const std::vector<reference::Result> want = numeric_gradients(c.reference, c.inputs, dy.to_vector<double>(), c.h);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(reference::max_rel_error(got[i], want[i]) < c.tolerance);
  }
  CHECK(backward_cost(plan).gradients.size() == c.inputs.size());
}

Forward rearranged(const std::string& p, AxisLengths l = {}) {
  return [=](const std::vector<Tensor>& x) { return reference::rearrange(x[0], p, l); };
}
Forward repeated(const std::string& p, AxisLengths l) {
  return [=](const std::vector<Tensor>& x) { return reference::repeat(x[0], p, l); };
}
Forward reduced(const std::string& p, Reduction r, AxisLengths l = {}, std::int64_t correction = 1) {
  return [=](const std::vector<Tensor>& x) { return reference::reduce(x[0], p, r, l, correction); };
}
Forward mapped(UnaryOp op) {
  return [=](const std::vector<Tensor>& x) {
    reference::Result r{x[0].shape(), x[0].to_vector<double>()};
    for (double& v : r.values) v = reference::unary(op, v);
    return r;
  };
}
/// f around a rearrange: the reference of map(x, pattern, f).
Forward mapped_pattern(const std::string& p, UnaryOp op, AxisLengths l = {}) {
  return [=](const std::vector<Tensor>& x) {
    reference::Result r = reference::rearrange(x[0], p, l);
    for (double& v : r.values) v = reference::unary(op, v);
    return r;
  };
}
Forward mapped2(const std::string& p, BinaryOp op) {
  return [=](const std::vector<Tensor>& x) { return reference::binary(x[0], x[1], p, op); };
}

}  // namespace

TEST_CASE("gradients of rearrange and repeat match finite differences", "[backward][gradients]") {
  const std::vector<Case> cases = {
      {"split", OpSpec::rearrange({{"h", 2}}), "b (h d) -> b h d", {values({2, 6}, 1)}, rearranged("b (h d) -> b h d", {{"h", 2}})},
      {"permute", OpSpec::rearrange(), "b h w c -> b c h w", {values({2, 3, 2, 4}, 2)}, rearranged("b h w c -> b c h w")},
      {"merge", OpSpec::rearrange(), "a b -> (b a)", {values({3, 4}, 3)}, rearranged("a b -> (b a)")},
      {"ellipsis", OpSpec::rearrange(), "... c -> c ...", {values({2, 3, 4}, 4)}, rearranged("... c -> c ...")},
      {"unit dims", OpSpec::rearrange(), "a () b -> b a", {values({3, 1, 2}, 5)}, rearranged("a () b -> b a")},
      {"0-d", OpSpec::rearrange(), "->", {values({}, 6)}, rearranged("->")},
      {"repeat new axis", OpSpec::repeat({{"c", 3}}), "h w -> c h w", {values({2, 3}, 7)}, repeated("h w -> c h w", {{"c", 3}})},
      {"repeat in a group", OpSpec::repeat(), "a -> (a 2)", {values({3}, 8)}, repeated("a -> (a 2)", {})},
      {"repeat, copied", OpSpec::repeat({{"c", 2}}, Copy::always), "a b -> a b c", {values({2, 3}, 9)},
       repeated("a b -> a b c", {{"c", 2}})},
  };
  for (const Case& c : cases) check(c);
}

TEST_CASE("gradients of every reduction match finite differences", "[backward][gradients]") {
  for (Reduction r : {Reduction::sum, Reduction::mean, Reduction::max, Reduction::min, Reduction::prod}) {
    const bool linear = r == Reduction::sum || r == Reduction::mean;
    const double h = linear ? 1 : 1e-6, tol = linear ? 1e-10 : 1e-6;
    const std::vector<Case> cases = {
        {"over s", OpSpec::reduce(r), "b s h -> b h", {values({2, 4, 3}, 10)}, reduced("b s h -> b h", r), h, tol},
        {"to a scalar", OpSpec::reduce(r), "a b c ->", {values({2, 3, 2}, 11)}, reduced("a b c ->", r), h, tol},
        {"inside a group", OpSpec::reduce(r, {{"a", 2}}), "(a b) c -> a", {values({6, 2}, 12)},
         reduced("(a b) c -> a", r, {{"a", 2}}), h, tol},
        {"kept permuted", OpSpec::reduce(r), "a b c -> c a", {values({3, 2, 4}, 13)}, reduced("a b c -> c a", r), h, tol},
    };
    CAPTURE(name(r));
    for (const Case& c : cases) check(c);
  }
}

TEST_CASE("gradients of var, std and logsumexp match finite differences", "[backward][gradients]") {
  for (Reduction r : {Reduction::var, Reduction::std, Reduction::logsumexp})
    for (std::int64_t c : {0, 1, 2}) {
      if (r == Reduction::logsumexp && c != 1) continue;
      CAPTURE(name(r), c);
      const std::vector<Case> cases = {
          {"over s", OpSpec::reduce(r, {}, c), "b s h -> b h", {values({2, 4, 3}, 14)},
           reduced("b s h -> b h", r, {}, c), 1e-6, 1e-6},
          {"to a scalar", OpSpec::reduce(r, {}, c), "a b c ->", {values({2, 3, 2}, 15)},
           reduced("a b c ->", r, {}, c), 1e-6, 1e-6},
          {"inside a group", OpSpec::reduce(r, {{"a", 2}}, c), "(a b) c -> a", {values({6, 2}, 16)},
           reduced("(a b) c -> a", r, {{"a", 2}}, c), 1e-6, 1e-6},
          {"kept permuted", OpSpec::reduce(r, {}, c), "a b c -> c a", {values({3, 5, 4}, 17)},
           reduced("a b c -> c a", r, {}, c), 1e-6, 1e-6},
      };
      for (const Case& k : cases) check(k);
    }
}

TEST_CASE("gradients of every elementwise function match finite differences", "[backward][gradients]") {
  for (UnaryOp op : all_unary_ops) {
    const bool positive = op == UnaryOp::log || op == UnaryOp::sqrt || op == UnaryOp::rsqrt || op == UnaryOp::reciprocal;
    CAPTURE(name(op));
    check({name(op), OpSpec::map(op), "", {values({3, 4}, 20, 0.05, positive)}, mapped(op), 1e-6, 1e-6});
    check({"with a pattern", OpSpec::map(op, {{"h", 2}}), "b (h d) -> h d b", {values({3, 4}, 21, 0.05, positive)},
           mapped_pattern("b (h d) -> h d b", op, {{"h", 2}}), 1e-6, 1e-6});
  }
  // softplus on both sides of torch's threshold (x > 20: x itself, derivative 1)
  std::vector<double> wide = values({3, 4}, 22).to_vector<double>();
  for (double& v : wide) v *= 15;
  check({"softplus, |x| up to ~40", OpSpec::map(UnaryOp::softplus), "", {f64(wide, {3, 4})}, mapped(UnaryOp::softplus),
         1e-6, 1e-6});
  for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div, BinaryOp::maximum, BinaryOp::minimum}) {
    CAPTURE(name(op));
    const bool div = op == BinaryOp::div;
    const std::vector<Case> cases = {
        {"same shape", OpSpec::map(op), "a b, a b -> a b", {values({3, 4}, 30), values({3, 4}, 31, 0, div)},
         mapped2("a b, a b -> a b", op), 1e-6, 1e-6},
        {"broadcast", OpSpec::map(op), "b s h, h -> b s h", {values({2, 3, 4}, 32), values({4}, 33, 0, div)},
         mapped2("b s h, h -> b s h", op), 1e-6, 1e-6},
        {"permuted", OpSpec::map(op), "a b, b a -> b a", {values({3, 2}, 34), values({2, 3}, 35, 0, div)},
         mapped2("a b, b a -> b a", op), 1e-6, 1e-6},
        {"0-d operand", OpSpec::map(op), "a b, () -> a b", {values({3, 2}, 36), values({}, 37, 0, div)},
         mapped2("a b, () -> a b", op), 1e-6, 1e-6},
    };
    for (const Case& c : cases) check(c);
  }
}

TEST_CASE("gradients a pattern cannot have: reduce any / all, bool", "[backward][gradients]") {
  const Tensor b = Tensor::zeros({2, 3}, DType::boolean);
  const Plan any = Compiled(OpSpec::reduce(Reduction::any), "a b -> a").plan(std::span<const Tensor>(&b, 1));
  CHECK_THROWS_WITH(gradients(any), Catch::Contains("backward on bool tensors is not defined"));
}
