// softmax, log_softmax, layer_norm and rms_norm along bracketed axes: against torch 1.13's
// values and its autograd gradients (generated once by tests/lib/data/make_norm_torch.py and
// committed), against the naive f64 reference on every float dtype and layout, the pattern's
// errors with their carets, the plan (one step), its FLOPs and the compiled and _into forms.
#include <cmath>

#include "check_op.hpp"
#include "data/norm_torch_values.hpp"
#include "einexpr/codegen/backward.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::MessageHas;

namespace {

/// "b [h] (q k)" -> {"b h (q k)", "b (q k)"}: the dims without brackets, and the dims kept.
std::pair<std::string, std::string> split_brackets(const std::string& pattern) {
  std::string dims, kept, token;
  bool in = false, token_in = false;
  int parens = 0;
  auto flush = [&] {
    if (token.empty()) return;
    dims += (dims.empty() ? "" : " ") + token;
    if (!token_in) kept += (kept.empty() ? "" : " ") + token;
    token.clear();
  };
  for (char c : pattern) {
    if (c == '[' || c == ']') {
      flush();
      in = c == '[';
      continue;
    }
    if (c == ' ' && parens == 0) {
      flush();
      continue;
    }
    parens += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (token.empty()) token_in = in;
    token += c;
  }
  flush();
  return {dims, kept};
}

/// |got - want| <= tol · max(|want|, floor), NaN where want is NaN, infinities equal.
void check_values(const std::vector<double>& got, const std::vector<double>& want, double tol, double floor) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i, got[i], want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else if (std::isinf(want[i])) CHECK(got[i] == want[i]);
    else CHECK(std::fabs(got[i] - want[i]) <= tol * std::max(std::fabs(want[i]), floor));
  }
}

}  // namespace

TEST_CASE("normalizations match torch: values, edge cases and autograd's gradients", "[normalize]") {
  for (const torch_values::NormCase& c : torch_values::norm_cases) {
    CAPTURE(c.what, c.pattern, name(c.normalization), c.eps);
    const Tensor x = Tensor::from_doubles(c.input, c.shape, c.dtype);
    const Tensor y = normalize(x, c.pattern, c.normalization, c.eps, c.lengths);
    REQUIRE(y.shape() == x.shape());
    CHECK(y.dtype() == c.dtype);
    const bool f64 = c.dtype == DType::f64;
    const double floor = c.normalization == Normalization::softmax ? 0.0 : 1.0;
    check_values(y.to_vector<double>(), c.expected, f64 ? 1e-12 : 2e-6, floor);
    if (c.dy.empty()) continue;
    const Compiled compiled(OpSpec::normalize(c.normalization, c.eps, c.lengths), c.pattern);
    const Tensor dy = Tensor::from_doubles(c.dy, c.shape, c.dtype);
    const std::span<const Tensor> in(&x, 1);
    const std::vector<Tensor> dx = run_gradients(compiled.plan(in), in, y, dy);
    REQUIRE(dx.size() == 1);
    double largest = 0;
    for (double v : c.dx) largest = std::max(largest, std::fabs(v));
    check_values(dx[0].to_vector<double>(), c.dx, f64 ? 1e-10 : 2e-5, largest);
  }
}

TEST_CASE("layer_norm and rms_norm with their affine part match torch: values and the gradients of x, gain, bias",
          "[normalize]") {
  for (const torch_values::AffineNormCase& c : torch_values::affine_norm_cases) {
    CAPTURE(c.what, c.pattern, name(c.normalization));
    const bool bias = !c.bias.empty();
    const Tensor x = Tensor::from_doubles(c.input, c.shape, c.dtype);
    const Tensor g = Tensor::from_doubles(c.gain, c.gain_shape, c.dtype);
    const Tensor b = bias ? Tensor::from_doubles(c.bias, c.gain_shape, c.dtype) : Tensor();
    const Tensor y = bias ? layer_norm(x, g, b, c.pattern, c.eps) : rms_norm(x, g, c.pattern, c.eps);
    REQUIRE(y.shape() == x.shape());
    const bool f64 = c.dtype == DType::f64;
    check_values(y.to_vector<double>(), c.expected, f64 ? 1e-12 : 2e-6, 1.0);
    const Compiled compiled(OpSpec::normalize(c.normalization, c.eps), c.pattern);
    std::vector<Tensor> in{x, g};
    if (bias) in.push_back(b);
    const Tensor dy = Tensor::from_doubles(c.dy, c.shape, c.dtype);
    const std::vector<Tensor> grads = run_gradients(compiled.plan(in), in, y, dy);
    REQUIRE(grads.size() == in.size());
    const std::vector<const std::vector<double>*> want = {&c.dx, &c.dgain, &c.dbias};
    for (std::size_t i = 0; i < grads.size(); ++i) {
      CAPTURE(i);
      REQUIRE(grads[i].shape() == in[i].shape());
      double largest = 0;
      for (double v : *want[i]) largest = std::max(largest, std::fabs(v));
      check_values(grads[i].to_vector<double>(), *want[i], f64 ? 1e-10 : 2e-5, largest);
    }
  }
  // the gain and bias must cover the bracketed dims, and softmax takes none
  const Tensor x = Tensor::randn({2, 3, 4});
  CHECK_THROWS_WITH(layer_norm(x, Tensor::randn({3}), Tensor::randn({4}), "b s [d]"),
                    Catch::StartsWith("layer_norm's gain (tensor 2) has shape [3] but the bracketed dims of x are [4]: "
                                      "one element per position along them"));
  CHECK(rms_norm(x, Tensor::randn({3, 4}), "b [s d]").shape() == x.shape());  // a gain over both bracketed dims
  CHECK_THROWS_WITH(apply(OpSpec::normalize(Normalization::softmax), {x, x}, "b s [d]"),
                    Catch::StartsWith("softmax takes one tensor, not 2"));
  CHECK_THROWS_WITH(apply(OpSpec::normalize(Normalization::rms_norm, 1e-6), {x, Tensor::randn({4}), Tensor::randn({4})}, "b s [d]"),
                    Catch::StartsWith("rms_norm takes 1 or 2 tensors (x, a gain), not 3"));
}

TEST_CASE("normalizations match the f64 reference on every float dtype and layout", "[normalize]") {
  struct Row {
    const char* pattern;
    Shape shape;
    AxisLengths lengths;
  };
  const Row rows[] = {
      {"b h q [k]", {2, 3, 4, 33}, {}},      {"b [h] w", {3, 5, 4}, {}},       {"[a] b", {70, 3}, {}},
      {"b [s d]", {2, 5, 6}, {}},            {"[b] h [w]", {3, 4, 5}, {}},     {"... [d]", {2, 3, 4, 9}, {}},
      {"[n]", {1300}, {}},                   {"b [(h d)] 1", {3, 12, 1}, {{"h", 3}}},
  };
  for (const Row& row : rows) {
    const std::pair<std::string, std::string> sides = split_brackets(row.pattern);  // no structured
    const std::string &dims = sides.first, &kept = sides.second;                    // binding: clang 14 captures none
    for (Normalization kind : {Normalization::softmax, Normalization::log_softmax, Normalization::layer_norm,
                               Normalization::rms_norm}) {
      const double eps = kind == Normalization::layer_norm ? 1e-5 : kind == Normalization::rms_norm ? 1e-6 : 0.0;
      CAPTURE(row.pattern, shape_str(row.shape), name(kind));
      testing_support::check_against_reference(
          {row.shape}, testing_support::float_dtypes, 64,
          [&](const auto& in) { return normalize(in[0], row.pattern, kind, eps, row.lengths); },
          [&](const auto& in) { return reference::normalize(in[0], dims, kept, kind, eps, row.lengths); });
    }
  }
}

TEST_CASE("a normalization's pattern: brackets around whole dims, errors with a caret", "[normalize][errors]") {
  const Tensor x = Tensor::randn({2, 3, 4}, DType::f32, 1);
  struct Row {
    const char* pattern;
    const char* message;
    const char* where;
  };
  const Row rows[] = {
      {"a b c", "no brackets: name the axes to work along in brackets", "at position 5"},
      {"a [b [c]]", "brackets do not nest", "at position 5"},
      {"a [b c", "'[' is never closed", "at position 2"},
      {"a b] c", "']' without '['", "at position 3"},
      {"a [ ] b c", "empty brackets", "at position 2"},
      {"a (b [c])", "a bracket inside parentheses", "at position 5"},
      {"a b -> [c]", "'->' in a normalization's pattern", "at position 4"},
      {"a, b [c]", "',' in a normalization's pattern", "at position 1"},
      {"a a [c]", "axis 'a' appears twice", "at position 2"},
      {"a b [c d]", "has 3 dims (shape [2, 3, 4])", "in softmax('a b [c d]')"},
      {"a b [c#]", "unexpected character '#'", "at position 6"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.pattern);
    CHECK_THROWS_MATCHES(softmax(x, row.pattern), Error, MessageHas({row.message, row.where}));
  }
  CHECK_THROWS_MATCHES(layer_norm(Tensor::randn({2, 3}, DType::i64, 1), "a [b]"), DTypeError,
                       MessageHas({"layer_norm needs a floating dtype, not i64"}));
  CHECK_THROWS_MATCHES(layer_norm(x, "a b [c]", -1.0), Error, MessageHas({"eps must be a finite number >= 0"}));
  CHECK_THROWS_MATCHES(rms_norm(x, "a (b d) [c]"), ShapeError, MessageHas({"cannot infer the lengths of"}));
}

TEST_CASE("a normalization is one step: plan, FLOPs, gradient cost, compiled and _into", "[normalize][cost]") {
  const AxisLengths sizes = {{"b", 8}, {"h", 4}, {"q", 16}, {"k", 32}};
  const std::int64_t n = 8 * 4 * 16 * 32, rows = 8 * 4 * 16;
  const Plan p = plan_from_sizes(OpSpec::normalize(Normalization::softmax), "b h q [k]", sizes);
  CHECK(p.steps.size() == 1);
  CHECK_THAT(p.str(), Catch::Contains("normalize.softmax 'b h q [k]'") && Catch::Contains("softmax %0 along [k]"));
  const Cost c = cost(p);
  CHECK(c.flops == Count(5 * n + rows));
  CHECK(c.bytes_read == Count(4 * n));
  CHECK(c.bytes_written == Count(4 * n));
  CHECK(c.flops_formula.str() == "5·b·h·k·q + b·h·q");
  CHECK(cost_normalize("b h q [k]", Normalization::layer_norm, sizes, DType::f32, 1e-5).flops == Count(5 * n + 3 * rows));
  CHECK(cost_normalize("b h q [k]", Normalization::rms_norm, sizes).flops == Count(3 * n + 3 * rows));
  CHECK(cost_normalize("b h q [k]", Normalization::log_softmax, sizes).flops == Count(5 * n + 2 * rows));
  const BackwardCost back = backward_cost(p);
  REQUIRE(back.gradients.size() == 1);
  CHECK(back.flops == Count(4 * n));
  CHECK(back.gradients[0].expression == "Y · (dY - sum(dY · Y)) along [k]");
  CHECK(backward_cost(plan_from_sizes(OpSpec::normalize(Normalization::layer_norm, 1e-5), "b h q [k]", sizes)).flops ==
        Count(11 * n + 4 * rows));
  const Tensor x = Tensor::randn({3, 5, 7}, DType::f32, 4);
  const Compiled f(OpSpec::normalize(Normalization::layer_norm, 1e-5), "a [b] c");
  const std::vector<float> want = layer_norm(x, "a [b] c").to_vector<float>();
  CHECK(f(x).to_vector<float>() == want);
  Tensor out = Tensor::zeros({3, 5, 7}, DType::f32);
  normalize_into(out, x, "a [b] c", Normalization::layer_norm, 1e-5);
  CHECK(out.to_vector<float>() == want);
  CHECK(OpSpec::normalize(Normalization::rms_norm, 1e-6).str() == "normalize rms_norm (eps 1e-06)");
}
