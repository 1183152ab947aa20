// lower_cpu's ReduceStep: every reduction over inner, outer, middle, all and no axes, on
// contiguous, reversed, sliced and broadcast sources, into contiguous and reversed
// outputs; bool any/all; empty reductions; large ones on more threads than cores.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu_reference.hpp"
#include "einexpr/runtime/threads.hpp"
#include "plan_builder.hpp"
#include "sanitized.hpp"

using namespace einexpr;
using namespace einexpr::test;

namespace {

enum class In { contiguous, reversed, sliced, broadcast };
const char* in_name(In m) {
  const char* names[] = {"contiguous", "reversed", "sliced", "broadcast"};
  return names[static_cast<int>(m)];
}

std::vector<int> reversed_order(std::size_t rank) {
  std::vector<int> order;
  for (std::size_t d = rank; d-- > 0;) order.push_back(static_cast<int>(d));
  return order;
}

Tensor source(const Shape& shape, In mode, DType dtype, std::uint64_t seed) {
  const std::size_t last = shape.size() - 1;
  switch (mode) {
    case In::contiguous: return Tensor::randn(shape, dtype, seed);
    case In::reversed: {
      const Shape rev(shape.rbegin(), shape.rend());
      return Tensor::randn(rev, dtype, seed).permute(reversed_order(shape.size()));
    }
    case In::sliced: {  // first dim from 1, last dim every other element
      Shape big = shape;
      big[0] += 1;
      big[last] *= 2;
      return Tensor::randn(big, dtype, seed).slice(0, 1, big[0]).slice(static_cast<int>(last), 0, big[last], 2);
    }
    case In::broadcast: {  // dim 1 (or 0) has stride 0
      const std::size_t d = shape.size() > 1 ? 1 : 0;
      Shape base_shape = shape;
      base_shape[d] = 1;
      const Tensor base = Tensor::randn(base_shape, dtype, seed);
      Strides strides = base.strides();
      strides[d] = 0;
      return base.as_strided(shape, strides, 0);
    }
  }
  return {};
}

/// For each src element (logical order), its output's flat index: an odometer over the src
/// dims, each kept dim stepping the output by its row-major stride (no vectors per element:
/// they were most of the large-reduction test's time in the Debug sanitizer build).
std::vector<std::int64_t> output_index(const Shape& shape, const std::vector<int>& axes, Shape& out_shape) {
  std::vector<bool> reduced(shape.size(), false);
  for (int a : axes) reduced[static_cast<std::size_t>(a)] = true;
  out_shape.clear();
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d]) out_shape.push_back(shape[d]);
  std::vector<std::int64_t> step(shape.size(), 0);  // the output's stride along each src dim
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;)
    if (!reduced[d]) step[d] = stride, stride *= shape[d];
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  std::vector<std::int64_t> idx(shape.size(), 0);
  std::int64_t o = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    out[static_cast<std::size_t>(i)] = o;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) {
        o += step[d];
        break;
      }
      o -= (shape[d] - 1) * step[d];
      idx[d] = 0;
    }
  }
  return out;
}

std::int64_t count_of(const Shape& shape, const std::vector<int>& axes) {
  std::int64_t c = 1;
  for (int a : axes) c *= shape[static_cast<std::size_t>(a)];
  return c;
}

Expected reference(const Tensor& src, const std::vector<int>& axes, Reduction op) {
  Shape out_shape;
  const auto where = output_index(src.shape(), axes, out_shape);
  std::int64_t n_out = 1;
  for (std::int64_t s : out_shape) n_out *= s;
  const double inf = std::numeric_limits<double>::infinity();
  const double init = op == Reduction::prod ? 1 : op == Reduction::max ? -inf : op == Reduction::min ? inf : 0;
  Expected e{std::vector<double>(static_cast<std::size_t>(n_out), init), std::vector<double>(static_cast<std::size_t>(n_out), 0)};
  const auto x = src.to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    double& v = e.value[static_cast<std::size_t>(where[i])];
    if (op == Reduction::sum || op == Reduction::mean) v += x[i];
    if (op == Reduction::prod) v *= x[i];
    if (op == Reduction::max) v = std::max(v, x[i]);
    if (op == Reduction::min) v = std::min(v, x[i]);
    e.magnitude[static_cast<std::size_t>(where[i])] += std::abs(x[i]);
  }
  const auto count = static_cast<double>(count_of(src.shape(), axes));
  for (std::size_t o = 0; o < e.value.size(); ++o) {
    if (op == Reduction::mean) e.value[o] /= count, e.magnitude[o] /= count;
    if (op != Reduction::sum && op != Reduction::mean) e.magnitude[o] = std::abs(e.value[o]);
  }
  return e;
}

std::vector<std::int64_t> reference_int(const Tensor& src, const std::vector<int>& axes, Reduction op) {
  Shape out_shape;
  const auto where = output_index(src.shape(), axes, out_shape);
  std::int64_t n_out = 1;
  for (std::int64_t s : out_shape) n_out *= s;
  const bool high = op == Reduction::max || op == Reduction::any;
  const bool low = op == Reduction::min || op == Reduction::all;
  const std::int64_t init = op == Reduction::prod || op == Reduction::all ? 1 : 0;
  std::vector<std::int64_t> out(static_cast<std::size_t>(n_out), init);
  std::vector<bool> seen(out.size(), false);
  const auto x = src.to_vector<std::int64_t>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto o = static_cast<std::size_t>(where[i]);
    std::int64_t& v = out[o];
    if (op == Reduction::sum) v = wrap_add(v, x[i]);
    if (op == Reduction::prod) v = wrap_mul(v, x[i]);
    if (high) v = seen[o] ? std::max(v, x[i]) : x[i];
    if (low) v = seen[o] ? std::min(v, x[i]) : x[i];
    seen[o] = true;
  }
  for (auto& v : out) v = as_dtype(v, src.dtype());
  return out;
}

Tensor run_reduce(const Tensor& src, Reduction op, const std::vector<int>& axes, bool reversed_out) {
  Shape out_shape;
  output_index(src.shape(), axes, out_shape);
  PlanBuilder pb(src.dtype());
  const int in = pb.input(src);
  const Layout out = reversed_out ? make_layout(out_shape, reversed_order(out_shape.size())) : make_layout(out_shape);
  const Tensor got = run_cpu(pb.finish(pb.reduce(in, op, axes, out)), {src});
  CHECK(got.shape() == out_shape);
  return got;
}

void check_reduce(const Tensor& src, Reduction op, const std::vector<int>& axes, bool reversed_out) {
  const Tensor got = run_reduce(src, op, axes, reversed_out);
  if (is_integer(src.dtype()) || src.dtype() == DType::boolean) return check_exact(got, reference_int(src, axes, op));
  const auto count = static_cast<double>(std::max<std::int64_t>(count_of(src.shape(), axes), 1));
  check_close(got, reference(src, axes, op), op == Reduction::prod ? count : std::sqrt(count));
}

struct Case {
  Shape shape;
  std::vector<int> axes;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {{5, 7, 9}, {2}},       {{5, 7, 9}, {0}},    {{5, 7, 9}, {1}},       {{5, 7, 9}, {0, 2}},
      {{5, 7, 9}, {1, 2}},    {{5, 7, 9}, {0, 1}}, {{5, 7, 9}, {0, 1, 2}}, {{5, 7, 9}, {}},
      {{3, 4, 5, 6}, {1, 3}}, {{3, 4, 5, 6}, {0, 2}}, {{40}, {0}},         {{1, 6, 1}, {0, 2}},
  };
  return c;
}

}  // namespace

TEST_CASE("float reductions match an f64 loop over any axes and layouts", "[lower_cpu][reduce]") {
  const Reduction ops[] = {Reduction::sum, Reduction::mean, Reduction::max, Reduction::min, Reduction::prod};
  for (DType dtype : float_dtypes())
    for (const Case& c : cases())
      for (In in : {In::contiguous, In::reversed, In::sliced, In::broadcast})
        for (Reduction op : ops) {
          CAPTURE(name(dtype), c.shape, c.axes, in_name(in), name(op));
          const Tensor src = source(c.shape, in, dtype, 3);
          check_reduce(src, op, c.axes, false);
          check_reduce(src, op, c.axes, true);
        }
}

TEST_CASE("integer reductions are exact and wrap", "[lower_cpu][reduce]") {
  const Reduction ops[] = {Reduction::sum, Reduction::max, Reduction::min, Reduction::prod};
  for (DType dtype : {DType::i64, DType::i32})
    for (const Case& c : cases())
      for (In in : {In::contiguous, In::reversed, In::sliced, In::broadcast})
        for (Reduction op : ops) {
          CAPTURE(name(dtype), c.shape, c.axes, in_name(in), name(op));
          check_reduce(source(c.shape, in, dtype, 5), op, c.axes, in == In::reversed);
        }
}

TEST_CASE("bool reductions: any, all, max and min", "[lower_cpu][reduce]") {
  const Reduction ops[] = {Reduction::any, Reduction::all, Reduction::max, Reduction::min};
  for (const Case& c : cases())
    for (In in : {In::contiguous, In::reversed, In::sliced, In::broadcast})
      for (Reduction op : ops) {
        CAPTURE(c.shape, c.axes, in_name(in), name(op));
        check_reduce(source(c.shape, in, DType::boolean, 9), op, c.axes, false);
      }
  const Tensor ones = Tensor::ones({3, 5}, DType::boolean), zeros = Tensor::zeros({3, 5}, DType::boolean);
  CHECK(run_reduce(ones, Reduction::all, {1}, false).to_vector<std::int64_t>() == std::vector<std::int64_t>{1, 1, 1});
  CHECK(run_reduce(zeros, Reduction::any, {0, 1}, false).to_vector<std::int64_t>() == std::vector<std::int64_t>{0});
}

TEST_CASE("empty reductions give 0 for sum, 1 for prod, NaN for mean, false for any and true for all",
          "[lower_cpu][reduce]") {
  struct Row {
    DType dtype;
    Reduction op;
    double want;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Row> rows = {
      {DType::f32, Reduction::sum, 0},  {DType::f32, Reduction::prod, 1},  {DType::f32, Reduction::mean, nan},
      {DType::bf16, Reduction::sum, 0}, {DType::f64, Reduction::mean, nan}, {DType::i64, Reduction::sum, 0},
      {DType::i32, Reduction::prod, 1}, {DType::boolean, Reduction::any, 0}, {DType::boolean, Reduction::all, 1},
  };
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype), name(r.op));
    const Tensor got = run_reduce(Tensor::zeros({4, 0, 3}, r.dtype), r.op, {1}, false);
    REQUIRE(got.shape() == Shape{4, 3});
    for (double v : got.to_vector<double>()) CHECK((std::isnan(r.want) ? std::isnan(v) : v == r.want));
    CHECK(run_reduce(Tensor::zeros({0, 4}, r.dtype), r.op, {1}, false).shape() == Shape{0});
  }
}

TEST_CASE("large reductions are correct on more threads than cores", "[lower_cpu][reduce]") {
  const int before = num_threads();
  set_num_threads(4);
  const std::vector<Case> large = {
      {{2, 100000}, {1}},   // inner: fewer outputs than threads, the range is split
      {{300, 500}, {1}},    // inner: outputs shared among threads
      {{100000, 3}, {0}},   // outer: one tile, the range is split
      {{64, 1000, 8}, {1}}, // outer: tiles shared among threads
      {{1 << 18}, {0}},     // everything
      {{200, 300, 4}, {0, 2}},
  };
  // f64 runs f32's kernels at another width: left to the optimized builds under a sanitizer
  for (DType dtype : {DType::f32, DType::f64, DType::bf16, DType::i64})
    for (const Case& c : large) {
      if (::test::sanitized && dtype == DType::f64) continue;
      for (Reduction op : {Reduction::sum, Reduction::max}) {
        CAPTURE(name(dtype), c.shape, c.axes, name(op));
        check_reduce(source(c.shape, In::contiguous, dtype, 11), op, c.axes, false);
        check_reduce(source(c.shape, In::reversed, dtype, 12), op, c.axes, true);
      }
    }
  set_num_threads(before);
}

TEST_CASE("max and min propagate NaN", "[lower_cpu][reduce]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = Tensor::from_doubles({1, nan, 3, 4, 5, 6}, {2, 3});
  for (Reduction op : {Reduction::max, Reduction::min}) {
    CAPTURE(name(op));
    const auto inner = run_reduce(x, op, {1}, false).to_vector<double>();
    CHECK(std::isnan(inner[0]));
    CHECK(inner[1] == (op == Reduction::max ? 6 : 4));
    const auto outer = run_reduce(x, op, {0}, false).to_vector<double>();
    CHECK(std::isnan(outer[1]));
    CHECK(outer[0] == (op == Reduction::max ? 4 : 1));
  }
}

TEST_CASE("reductions a dtype cannot do are DTypeErrors that say why", "[lower_cpu][reduce]") {
  struct Row {
    DType dtype;
    Reduction op;
    const char* message;
  };
  const std::vector<Row> rows = {
      {DType::boolean, Reduction::sum, "'sum' is not defined on bool"},
      {DType::f32, Reduction::any, "'any' needs bool, not f32"},
      {DType::i64, Reduction::mean, "'mean' is not defined on i64"},
  };
  for (const Row& r : rows) {
    CAPTURE(name(r.dtype), name(r.op));
    PlanBuilder pb(r.dtype);
    const int in = pb.input(Tensor::zeros({2, 3}, r.dtype));
    const Plan plan = pb.finish(pb.reduce(in, r.op, {1}, make_layout({2})));
    CHECK_THROWS_AS(lower_cpu(plan), DTypeError);
    CHECK_THROWS_WITH(lower_cpu(plan), Catch::Contains(r.message));
  }
}
