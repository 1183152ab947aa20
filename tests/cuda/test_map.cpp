// MapStep on the GPU against an f64 reference: every unary and binary function of
// plan.hpp, in float and integer dtypes, with broadcast (stride-0) and strided sources.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu_check.hpp"
#include "plan_builder.hpp"
#include "unary_reference.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

using testing_support::unary_reference;

double binary_ref(BinaryOp op, double a, double b, bool integer) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div:
      if (!integer) return a / b;
      return b == 0 ? 0 : static_cast<double>(static_cast<std::int64_t>(a) / static_cast<std::int64_t>(b));
    case BinaryOp::maximum: return a > b ? a : b;
    case BinaryOp::minimum: return a < b ? a : b;
  }
  return 0;
}

bool positive_only(UnaryOp op) {
  return op == UnaryOp::log || op == UnaryOp::sqrt || op == UnaryOp::rsqrt || op == UnaryOp::reciprocal;
}

void check_unary(UnaryOp op, DType d, const Shape& shape, const Strides& strides) {
  CAPTURE(name(op), name(d), shape, strides);
  std::function<double(double)> positive = [](double x) { return std::fabs(x) + 0.25; };
  const Input in = make_input(shape, strides, d, 51, 0, positive_only(op) ? positive : std::function<double(double)>{});
  PlanBuilder p(d, Op::map);
  const int x = p.input(shape, strides);
  std::vector<double> ref = values(in);
  for (double& v : ref) v = unary_reference(op, v);
  // the reference rounded to the dtype, as the GPU's result is
  ref = Tensor::from_doubles(ref, {static_cast<std::int64_t>(ref.size())}, d).to_vector<double>();
  run_poisoned(p.finish(p.unary(op, x)), {in.gpu}, ref, is_floating(d) ? 4 * tolerance(d) : 0);
}

}  // namespace

TEST_CASE("every unary function, in every float dtype", "[cuda][map]") {
  for (DType d : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::f8_e4m3}) {
    for (UnaryOp op : all_unary_ops) {
      check_unary(op, d, {37, 29}, {29, 1});
      check_unary(op, d, {37, 29}, {1, 37});  // a transposed source
    }
  }
}

TEST_CASE("the integer unary functions wrap like numpy", "[cuda][map]") {
  for (DType d : {DType::i64, DType::i32}) {
    for (UnaryOp op : {UnaryOp::relu, UnaryOp::square, UnaryOp::neg, UnaryOp::abs}) check_unary(op, d, {100}, {1});
  }
}

TEST_CASE("every binary function, with a broadcast operand", "[cuda][map]") {
  const BinaryOp ops[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul,
                          BinaryOp::div, BinaryOp::maximum, BinaryOp::minimum};
  for (DType d : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::i64, DType::i32}) {
    for (BinaryOp op : ops) {
      CAPTURE(name(d), name(op));
      // 'b s h, h -> b s h': b is [h] viewed as [b, s, h] with strides [0, 0, 1]
      const Shape shape{3, 7, 40};
      const Input a = make_input(shape, d, 61);
      const Input b = make_input({40}, {1}, d, 62);
      PlanBuilder p(d, Op::map);
      const int x = p.input(shape);
      const int y = p.input({40}, {1});
      const int yb = p.view(y, Layout{shape, {0, 0, 1}, 0});
      const std::vector<double> av = values(a), bv = values(b);
      std::vector<double> ref(av.size());
      for (std::size_t i = 0; i < av.size(); ++i) ref[i] = binary_ref(op, av[i], bv[i % 40], !is_floating(d));
      ref = Tensor::from_doubles(ref, {static_cast<std::int64_t>(ref.size())}, d).to_vector<double>();
      const bool exact = !is_floating(d) || op == BinaryOp::maximum || op == BinaryOp::minimum;
      run_poisoned(p.finish(p.binary(op, x, yb)), {a.gpu, b.gpu}, ref, exact ? 0 : 4 * tolerance(d));
    }
  }
}

TEST_CASE("integer division truncates toward zero and gives 0 for a zero divisor", "[cuda][map]") {
  for (DType d : {DType::i64, DType::i32}) {
    const std::vector<double> a = {7, -7, 7, -7, 5, 0, -100, 3};
    const std::vector<double> b = {2, 2, -2, -2, 0, 0, 7, -1};
    PlanBuilder p(d, Op::map);
    const int x = p.input({8});
    const int y = p.input({8});
    const Tensor ta = Tensor::from_doubles(a, {8}, d).to(cuda0), tb = Tensor::from_doubles(b, {8}, d).to(cuda0);
    run_poisoned(p.finish(p.binary(BinaryOp::div, x, y)), {ta, tb}, {3, -3, -3, 3, 0, 0, -14, -3}, 0);
  }
}

TEST_CASE("maximum and minimum propagate NaN", "[cuda][map]") {
  const double nan = std::nan("");
  const std::vector<double> a = {1, nan, nan, -2}, b = {nan, 3, nan, -5};
  for (BinaryOp op : {BinaryOp::maximum, BinaryOp::minimum}) {
    PlanBuilder p(DType::f32, Op::map);
    const int x = p.input({4});
    const int y = p.input({4});
    const Tensor ta = Tensor::from_doubles(a, {4}).to(cuda0), tb = Tensor::from_doubles(b, {4}).to(cuda0);
    const double last = op == BinaryOp::maximum ? -2 : -5;
    run_poisoned(p.finish(p.binary(op, x, y)), {ta, tb}, {nan, nan, nan, last}, 0);
  }
}
