// Elementwise maps: every function against std::, binary ops with named broadcasting.
#include "check_op.hpp"
#include "matchers.hpp"

#include <cmath>

using namespace einexpr;

TEST_CASE("unary maps match the formulas", "[map]") {
  const std::vector<UnaryOp> all = {UnaryOp::relu, UnaryOp::gelu,    UnaryOp::exp,  UnaryOp::log,   UnaryOp::square,
                                    UnaryOp::sqrt, UnaryOp::rsqrt,   UnaryOp::neg,  UnaryOp::abs,   UnaryOp::sigmoid,
                                    UnaryOp::tanh, UnaryOp::silu,    UnaryOp::reciprocal};
  for (UnaryOp op : all) {
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

TEST_CASE("integer maps: relu, abs, neg, square exact; exp is a dtype error", "[map]") {
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
