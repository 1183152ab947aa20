// Elementwise maps: every function against std::, binary ops with named broadcasting.
#include "check_op.hpp"
#include "matchers.hpp"

#include <cmath>

using namespace einexpr;

TEST_CASE("unary maps match the formulas", "[map]") {
  for (UnaryOp op : all_unary_ops) {
    for (DType dtype : testing_support::float_dtypes) {
      for (reference::Layout layout : testing_support::all_layouts) {
        CAPTURE(name(op), name(dtype), reference::name(layout));
        Tensor x = reference::make_input({3, 5}, dtype, layout, 3);
        if (op == UnaryOp::log || op == UnaryOp::sqrt || op == UnaryOp::rsqrt) x = map(x, UnaryOp::abs);
        const Tensor y = map(x, op);
        CHECK(y.shape() == x.shape());
        const std::vector<double> in = x.to_vector<double>(), out = y.to_vector<double>();
        for (std::size_t i = 0; i < in.size(); ++i) {
          const double want = reference::unary(op, in[i]);
          const double tol = dtype == DType::f64 ? 1e-12 : dtype == DType::f32 ? 1e-5 : 1e-2;
          if (std::isinf(want)) CHECK(out[i] == want);
          else CHECK(std::fabs(out[i] - want) <= tol * std::max(1.0, std::fabs(want)));
        }
      }
    }
  }
}

TEST_CASE("integer maps: relu, abs, neg, square exact, and exp is a dtype error", "[map]") {
  const Tensor x = Tensor::randn({4, 6}, DType::i64, 9);
  for (UnaryOp op : {UnaryOp::relu, UnaryOp::abs, UnaryOp::neg, UnaryOp::square}) {
    CAPTURE(name(op));
    const std::vector<double> in = x.to_vector<double>(), out = map(x, op).to_vector<double>();
    for (std::size_t i = 0; i < in.size(); ++i) CHECK(out[i] == reference::unary(op, in[i]));
  }
  CHECK_THROWS_MATCHES(map(x, "exp"), DTypeError, testing_support::MessageHas({"needs a floating dtype"}));
  CHECK_THROWS_MATCHES(map(x, "expp"), Error, testing_support::MessageHas({"unknown function 'expp'"}));
}

TEST_CASE("binary maps broadcast by name", "[map]") {
  struct Row {
    const char* pattern;
    Shape a, b;
  };
  const std::vector<Row> rows = {
      {"b s h, h -> b s h", {2, 3, 4}, {4}},
      {"b s h, b s h -> b s h", {2, 3, 4}, {2, 3, 4}},
      {"i, j -> i j", {3}, {4}},
      {"b h, b -> b h", {3, 4}, {3}},
      {"i j, j i -> j i", {3, 4}, {4, 3}},
      {"... h, h -> ... h", {2, 3, 4}, {4}},
  };
  for (const Row& r : rows) {
    for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div, BinaryOp::maximum, BinaryOp::minimum}) {
      CAPTURE(r.pattern, name(op));
      testing_support::check_against_reference(
          {r.a, r.b}, {DType::f32, DType::f64, DType::i64}, 1,
          [&](const auto& in) { return map(in[0], in[1], r.pattern, op); },
          [&](const auto& in) { return reference::binary(in[0], in[1], r.pattern, op); });
    }
  }
}

TEST_CASE("a map sums nothing", "[map][errors]") {
  const Tensor x = Tensor::randn({2, 3}, DType::f32, 1);
  CHECK_THROWS_AS(map(x, x, "a b, a b -> a", "add"), PatternError);
}

TEST_CASE("a unary map's pattern permutes, splits and merges axes around the function", "[map]") {
  struct Row {
    const char* pattern;
    Shape shape;
    AxisLengths lengths;
  };
  const std::vector<Row> rows = {
      {"b s h -> b s h", {2, 3, 4}, {}},       {"b s h -> h b s", {2, 3, 4}, {}},
      {"b (h d) -> b h d", {2, 6}, {{"h", 2}}}, {"b h d -> b (h d)", {2, 3, 4}, {}},
      {"a b -> b 1 a", {3, 5}, {}},            {"... h -> h ...", {2, 3, 4}, {}},
      {"b h d -> (d b) h", {2, 3, 4}, {}},
  };
  for (const Row& r : rows)
    for (UnaryOp op : {UnaryOp::gelu, UnaryOp::exp, UnaryOp::neg, UnaryOp::softplus}) {
      CAPTURE(r.pattern, name(op));
      testing_support::check_against_reference(
          {r.shape}, testing_support::float_dtypes, 1,
          [&](const auto& in) {
            const Tensor y = map(in[0], r.pattern, op, r.lengths);
            CHECK_FALSE(y.same_storage(in[0]));
            return y;
          },
          [&](const auto& in) {
            reference::Result want = reference::rearrange(in[0], r.pattern, r.lengths);
            for (double& v : want.values) v = reference::unary(op, v);
            return want;
          });
    }
}

TEST_CASE("a unary map's pattern sums and repeats nothing", "[map][errors]") {
  const Tensor x = Tensor::randn({2, 3}, DType::f32, 1);
  CHECK_THROWS_MATCHES(map(x, "a b -> a", "exp"), PatternError,
                       testing_support::MessageHas({"axis 'b' of input 1 is not in the output", "a b -> a"}));
  CHECK_THROWS_MATCHES(map(x, "a b -> a b c", "exp"), PatternError,
                       testing_support::MessageHas({"output axis 'c' appears in no input"}));
  CHECK_THROWS_MATCHES(map(x, "a b, b -> a b", "exp"), ShapeError,
                       testing_support::MessageHas({"takes 1 operand, got 2 in the pattern and 1 tensor"}));
  CHECK_THROWS_MATCHES(map(x, "a b -> b a", "expp"), Error, testing_support::MessageHas({"unknown function 'expp'"}));
  CHECK_THROWS_MATCHES(map(Tensor::randn({2, 3}, DType::i64, 1), "a b -> b a", "exp"), DTypeError,
                       testing_support::MessageHas({"needs a floating dtype"}));
}

TEST_CASE("a unary map with a pattern: cost, gradient and the compiled form", "[map][cost]") {
  const AxisLengths sizes = {{"b", 4}, {"s", 8}, {"h", 16}};
  const Cost c = cost_map("b s h -> b h s", UnaryOp::gelu, sizes);
  CHECK(c.flops == Count(20 * 4 * 8 * 16));
  CHECK(c.bytes_read == Count(4 * 4 * 8 * 16));
  CHECK(cost_map("b s h -> b s h", UnaryOp::gelu_erf, sizes).flops == Count(5 * 4 * 8 * 16));
  const BackwardCost back = backward_cost(plan_from_sizes(OpSpec::map(UnaryOp::silu), "b s h -> b h s", sizes));
  REQUIRE(back.gradients.size() == 1);
  CHECK(back.flops == Count(9 * 4 * 8 * 16));  // dY · s(1 + X(1 - s)), laid out in X's dims (no FLOPs)
  CHECK(back.gradients[0].expression == "dY · silu'(X)");
  const Tensor x = Tensor::randn({4, 8, 16}, DType::f32, 3);
  const Compiled f = compile_map("b s h -> b h s", UnaryOp::tanh);
  CHECK(f(x).to_vector<float>() == map(x, "b s h -> b h s", "tanh").to_vector<float>());
  Tensor out = Tensor::zeros({4, 16, 8}, DType::f32);
  map_into(out, x, "b s h -> b h s", UnaryOp::tanh);
  CHECK(out.to_vector<float>() == f(x).to_vector<float>());
}
