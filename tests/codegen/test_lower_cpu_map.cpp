// lower_cpu's MapStep: every unary and binary function against its std:: definition in
// f64 (gelu against the tanh formula), on contiguous, transposed and broadcast operands,
// into contiguous and transposed outputs; integer arithmetic exactly (wrapping, truncating
// division, x / 0 = 0).
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "cpu_reference.hpp"
#include "einexpr/runtime/threads.hpp"
#include "plan_builder.hpp"
#include "unary_reference.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

using testing_support::unary_reference;

double binary_ref(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
    case BinaryOp::maximum: return std::max(a, b);
    case BinaryOp::minimum: return std::min(a, b);
  }
  return 0;
}

std::int64_t binary_ref_int(BinaryOp op, std::int64_t a, std::int64_t b) {
  switch (op) {
    case BinaryOp::add: return wrap_add(a, b);
    case BinaryOp::sub: return wrap_add(a, wrap_mul(b, -1));
    case BinaryOp::mul: return wrap_mul(a, b);
    case BinaryOp::div: return b == 0 ? 0 : b == -1 ? wrap_mul(a, -1) : a / b;
    case BinaryOp::maximum: return std::max(a, b);
    case BinaryOp::minimum: return std::min(a, b);
  }
  return 0;
}

const BinaryOp all_binary[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul,
                               BinaryOp::div, BinaryOp::maximum, BinaryOp::minimum};

bool positive_domain(UnaryOp op) { return op == UnaryOp::log || op == UnaryOp::sqrt || op == UnaryOp::rsqrt; }

/// How a [rows, cols] operand is laid out.
enum class In { contiguous, transposed, row_broadcast, col_broadcast, scalar };
const char* in_name(In m) {
  const char* names[] = {"contiguous", "transposed", "row_broadcast", "col_broadcast", "scalar"};
  return names[static_cast<int>(m)];
}

/// Values 2 * randn (or |2 * randn| + 0.05), laid out as `mode` says.
Tensor operand(std::int64_t rows, std::int64_t cols, In mode, DType dtype, std::uint64_t seed, bool positive) {
  if (is_integer(dtype)) {
    const Tensor t = Tensor::randn({cols, rows}, dtype, seed);
    if (mode == In::transposed) return t.transpose(0, 1);
    if (mode == In::contiguous) return Tensor::randn({rows, cols}, dtype, seed);
  }
  auto values = [&](std::int64_t n) {
    std::vector<double> v = Tensor::randn({n}, DType::f64, seed).to_vector<double>();
    for (double& x : v) x = positive ? std::abs(2 * x) + 0.05 : 2 * x;
    return Tensor::from_doubles(v, {n}, dtype);
  };
  switch (mode) {
    case In::contiguous: return values(rows * cols).view({rows, cols});
    case In::transposed: return values(rows * cols).view({cols, rows}).transpose(0, 1);
    case In::row_broadcast: return values(cols).as_strided({rows, cols}, {0, 1}, 0);
    case In::col_broadcast: return values(rows).as_strided({rows, cols}, {1, 0}, 0);
    case In::scalar: return values(1).as_strided({rows, cols}, {0, 0}, 0);
  }
  return {};
}

Tensor run_map(const std::vector<Tensor>& srcs, std::variant<UnaryOp, BinaryOp, GradOp> op, bool transposed_out) {
  PlanBuilder pb(srcs[0].dtype());
  std::vector<int> ins;
  for (const Tensor& s : srcs) ins.push_back(pb.input(s));
  const Shape& shape = srcs[0].shape();
  const Layout out = transposed_out ? make_layout(shape, {1, 0}) : make_layout(shape);
  return run_cpu(pb.finish(pb.map(ins, op, out)), srcs);
}

/// Compares elementwise with tolerance relative to max(|want|, 1).
void check_map(const Tensor& got, const std::vector<double>& want) {
  Expected e{want, {}};
  for (double w : want) e.magnitude.push_back(std::isfinite(w) ? std::max(std::abs(w), 1.0) : 1.0);
  check_close(got, e, 4);
}

}  // namespace

TEST_CASE("unary functions match their f64 definitions", "[lower_cpu][map]") {
  for (DType dtype : float_dtypes())
    for (UnaryOp op : all_unary_ops)
      for (In in : {In::contiguous, In::transposed, In::row_broadcast})
        for (bool transposed_out : {false, true}) {
          CAPTURE(name(dtype), name(op), in_name(in), transposed_out);
          const Tensor x = operand(6, 50, in, dtype, 21, positive_domain(op));
          const Tensor got = run_map({x}, op, transposed_out);
          std::vector<double> want;
          for (double v : x.to_vector<double>()) want.push_back(unary_reference(op, v));
          check_map(got, want);
        }
}

TEST_CASE("binary functions match their f64 definitions with broadcast operands", "[lower_cpu][map]") {
  const std::pair<In, In> layouts[] = {{In::contiguous, In::contiguous}, {In::contiguous, In::row_broadcast},
                                       {In::scalar, In::transposed},     {In::col_broadcast, In::row_broadcast},
                                       {In::transposed, In::scalar},     {In::transposed, In::col_broadcast}};
  for (DType dtype : float_dtypes())
    for (BinaryOp op : all_binary)
      for (const auto& [la, lb] : layouts)
        for (bool transposed_out : {false, true}) {
          CAPTURE(name(dtype), name(op), in_name(la), in_name(lb), transposed_out);
          const Tensor a = operand(7, 40, la, dtype, 31, false), b = operand(7, 40, lb, dtype, 32, false);
          const Tensor got = run_map({a, b}, op, transposed_out);
          const auto x = a.to_vector<double>(), y = b.to_vector<double>();
          std::vector<double> want;
          for (std::size_t i = 0; i < x.size(); ++i) want.push_back(binary_ref(op, x[i], y[i]));
          check_map(got, want);
        }
}

TEST_CASE("integer maps are exact: relu abs neg square and every binary function", "[lower_cpu][map]") {
  for (DType dtype : {DType::i64, DType::i32}) {
    for (UnaryOp op : {UnaryOp::relu, UnaryOp::abs, UnaryOp::neg, UnaryOp::square})
      for (In in : {In::contiguous, In::transposed}) {
        CAPTURE(name(dtype), name(op), in_name(in));
        const Tensor x = operand(6, 50, in, dtype, 41, false);
        std::vector<std::int64_t> want;
        for (std::int64_t v : x.to_vector<std::int64_t>())
          want.push_back(op == UnaryOp::relu ? std::max<std::int64_t>(v, 0)
                         : op == UnaryOp::abs ? std::abs(v)
                         : op == UnaryOp::neg ? -v : v * v);
        check_exact(run_map({x}, op, in == In::transposed), want);
      }
    for (BinaryOp op : all_binary) {
      CAPTURE(name(dtype), name(op));
      const Tensor a = operand(6, 50, In::contiguous, dtype, 42, false);
      const Tensor b = operand(6, 50, In::transposed, dtype, 43, false);  // [-100, 100]: has zeros
      const auto x = a.to_vector<std::int64_t>(), y = b.to_vector<std::int64_t>();
      std::vector<std::int64_t> want;
      for (std::size_t i = 0; i < x.size(); ++i) want.push_back(as_dtype(binary_ref_int(op, x[i], y[i]), dtype));
      check_exact(run_map({a, b}, op, false), want);
    }
  }
}

TEST_CASE("integer division truncates toward zero, x / 0 is 0 and overflow wraps", "[lower_cpu][map]") {
  const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  const Tensor a = Tensor::from_vector<std::int64_t>({7, -7, 7, -7, 5, 0, lo, lo}, {8});
  const Tensor b = Tensor::from_vector<std::int64_t>({2, 2, -2, -2, 0, 0, -1, 1}, {8});
  CHECK(run_map({a, b}, BinaryOp::div, false).to_vector<std::int64_t>() ==
        std::vector<std::int64_t>{3, -3, -3, 3, 0, 0, lo, lo});
  CHECK(run_map({a}, UnaryOp::neg, false).to_vector<std::int64_t>()[6] == lo);
  const Tensor big = Tensor::from_vector<std::int32_t>({100000, -70000}, {2});
  CHECK(run_map({big, big}, BinaryOp::mul, false).to_vector<std::int32_t>() ==
        std::vector<std::int32_t>{1410065408, 605032704});
}

TEST_CASE("maximum and minimum propagate NaN", "[lower_cpu][map]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor a = Tensor::from_doubles({nan, 1, 2}, {3}), b = Tensor::from_doubles({0, nan, 3}, {3});
  for (BinaryOp op : {BinaryOp::maximum, BinaryOp::minimum}) {
    const auto got = run_map({a, b}, op, false).to_vector<double>();
    CHECK(std::isnan(got[0]));
    CHECK(std::isnan(got[1]));
    CHECK(got[2] == (op == BinaryOp::maximum ? 3 : 2));
  }
}

TEST_CASE("large maps are correct on more threads than cores", "[lower_cpu][map]") {
  const int before = num_threads();
  set_num_threads(4);
  for (DType dtype : {DType::f32, DType::bf16}) {
    CAPTURE(name(dtype));
    const Tensor a = operand(300, 400, In::transposed, dtype, 51, false);
    const Tensor b = operand(300, 400, In::row_broadcast, dtype, 52, false);
    const auto x = a.to_vector<double>(), y = b.to_vector<double>();
    std::vector<double> sum, gelu;
    for (std::size_t i = 0; i < x.size(); ++i) {
      sum.push_back(x[i] + y[i]);
      gelu.push_back(unary_reference(UnaryOp::gelu, x[i]));
    }
    check_map(run_map({a, b}, BinaryOp::add, false), sum);
    check_map(run_map({a}, UnaryOp::gelu, true), gelu);
  }
  set_num_threads(before);
}

TEST_CASE("maps a dtype cannot do are DTypeErrors that say why", "[lower_cpu][map]") {
  const Tensor i = Tensor::zeros({4}, DType::i64), flag = Tensor::zeros({4}, DType::boolean);
  CHECK_THROWS_AS(run_map({i}, UnaryOp::exp, false), DTypeError);
  CHECK_THROWS_WITH(run_map({i}, UnaryOp::gelu, false), Catch::Contains("'gelu' is not defined on integers"));
  CHECK_THROWS_WITH(run_map({flag, flag}, BinaryOp::add, false), Catch::Contains("not defined on bool"));
}
