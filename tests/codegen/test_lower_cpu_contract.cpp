// lower_cpu's ContractStep: GEMMs (OpenBLAS or Eigen) on row- and column-major, padded, strided
// and broadcast operands, batched with odd strides, non-contiguous outputs, degenerate
// shapes, and the generic strided loop; each checked against an f64 (or int64) loop.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "cpu_reference.hpp"
#include "einexpr/runtime/threads.hpp"
#include "plan_builder.hpp"

using namespace einexpr;
using namespace einexpr::test;
using Kind = ContractStep::Kind;

namespace {

/// How an operand [batch.., rows, cols] is laid out.
/// batch_odd: batch dims reversed and matrices one row apart more than they need (odd
/// batch strides, unit-stride matrices); batch_permuted: batch dims innermost (the matrix
/// has no unit stride); broadcast: the first batch dim has stride 0.
enum class Mode { row, col, padded, strided, batch_odd, batch_permuted, broadcast };
/// How the output [batch.., m, n] is laid out.
enum class Out { row, col, padded, strided, batch_inner };

const char* mode_name(Mode m) {
  const char* names[] = {"row", "col", "padded", "strided", "batch_odd", "batch_permuted", "broadcast"};
  return names[static_cast<int>(m)];
}
const char* out_name(Out o) {
  const char* names[] = {"row", "col", "padded", "strided", "batch_inner"};
  return names[static_cast<int>(o)];
}

Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Tensor operand(const Shape& batch, std::int64_t rows, std::int64_t cols, Mode mode, DType dtype, std::uint64_t seed) {
  const int nb = static_cast<int>(batch.size());
  switch (mode) {
    case Mode::row: return Tensor::randn(concat(batch, {rows, cols}), dtype, seed);
    case Mode::col: return Tensor::randn(concat(batch, {cols, rows}), dtype, seed).transpose(nb, nb + 1);
    case Mode::padded: return Tensor::randn(concat(batch, {rows, cols + 3}), dtype, seed).slice(nb + 1, 0, cols);
    case Mode::strided:
      return Tensor::randn(concat(batch, {rows, 2 * cols}), dtype, seed).slice(nb + 1, 0, 2 * cols, 2);
    case Mode::batch_odd: {
      std::vector<int> perm;
      for (int i = nb; i-- > 0;) perm.push_back(i);
      perm.push_back(nb);
      perm.push_back(nb + 1);
      const Shape reversed(batch.rbegin(), batch.rend());
      return Tensor::randn(concat(reversed, {rows + 1, cols}), dtype, seed).permute(perm).slice(nb, 0, rows);
    }
    case Mode::batch_permuted: {
      std::vector<int> perm;
      for (int i = 0; i < nb; ++i) perm.push_back(2 + i);
      perm.push_back(0);
      perm.push_back(1);
      return Tensor::randn(concat({rows, cols}, batch), dtype, seed).permute(perm);
    }
    case Mode::broadcast: {  // the first batch dim has stride 0
      const Tensor base = Tensor::randn(concat(Shape(batch.begin() + 1, batch.end()), {rows, cols}), dtype, seed);
      Strides strides = base.strides();
      strides.insert(strides.begin(), 0);
      return base.as_strided(concat(batch, {rows, cols}), strides, 0);
    }
  }
  return {};
}

Layout out_layout(const Shape& shape, int nb, Out mode) {
  std::vector<int> order(shape.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  switch (mode) {
    case Out::row: return make_layout(shape);
    case Out::col: std::swap(order[nb], order[nb + 1]); return make_layout(shape, order);
    case Out::padded: return make_layout(shape, {}, 1, 2);
    case Out::strided: return make_layout(shape, {}, 2);
    case Out::batch_inner:
      order.clear();
      order.push_back(nb);
      order.push_back(nb + 1);
      for (int i = 0; i < nb; ++i) order.push_back(i);
      return make_layout(shape, order);
  }
  return {};
}

struct Dims {
  std::int64_t batches, m, k, n;
};
Dims dims_of(const Tensor& a, const Tensor& b, int nb) {
  std::int64_t batches = 1;
  for (int d = 0; d < nb; ++d) batches *= a.shape()[static_cast<std::size_t>(d)];
  const auto u = static_cast<std::size_t>(nb);
  return {batches, a.shape()[u], a.shape()[u + 1], b.shape()[u + 1]};
}

Expected reference(const Tensor& a, const Tensor& b, int nb) {
  const Dims s = dims_of(a, b, nb);
  const auto x = a.to_vector<double>(), y = b.to_vector<double>();
  Expected e{std::vector<double>(static_cast<std::size_t>(s.batches * s.m * s.n)), {}};
  e.magnitude.resize(e.value.size());
  for (std::int64_t p = 0; p < s.batches; ++p)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double sum = 0, mag = 0;
        for (std::int64_t q = 0; q < s.k; ++q) {
          const double t = x[static_cast<std::size_t>((p * s.m + i) * s.k + q)] *
                           y[static_cast<std::size_t>((p * s.k + q) * s.n + j)];
          sum += t;
          mag += std::abs(t);
        }
        const auto o = static_cast<std::size_t>((p * s.m + i) * s.n + j);
        e.value[o] = sum;
        e.magnitude[o] = mag;
      }
  return e;
}

std::vector<std::int64_t> reference_int(const Tensor& a, const Tensor& b, int nb) {
  const Dims s = dims_of(a, b, nb);
  const auto x = a.to_vector<std::int64_t>(), y = b.to_vector<std::int64_t>();
  std::vector<std::int64_t> out(static_cast<std::size_t>(s.batches * s.m * s.n));
  for (std::int64_t p = 0; p < s.batches; ++p)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        std::int64_t sum = 0;
        for (std::int64_t q = 0; q < s.k; ++q)
          sum = wrap_add(sum, wrap_mul(x[static_cast<std::size_t>((p * s.m + i) * s.k + q)],
                                       y[static_cast<std::size_t>((p * s.k + q) * s.n + j)]));
        out[static_cast<std::size_t>((p * s.m + i) * s.n + j)] = as_dtype(sum, a.dtype());
      }
  return out;
}

struct Case {
  const char* what;
  Shape batch;
  std::int64_t m, k, n;
  Mode a, b;
  Out out;
  Kind kind;
};

/// Plans a @ b into the case's output layout, runs it and checks it; returns the program's
/// number of staging temporaries (those beyond the plan's).
std::size_t check_case(const Case& c, DType dtype, std::uint64_t seed = 1) {
  CAPTURE(c.what, name(dtype), c.batch, c.m, c.k, c.n, mode_name(c.a), mode_name(c.b), out_name(c.out));
  const int nb = static_cast<int>(c.batch.size());
  const Tensor a = operand(c.batch, c.m, c.k, c.a, dtype, seed);
  const Tensor b = operand(c.batch, c.k, c.n, c.b, dtype, seed + 7);
  PlanBuilder pb(dtype);
  const int ia = pb.input(a), ib = pb.input(b);
  const Shape out = concat(c.batch, {c.m, c.n});
  const Plan plan = pb.finish(pb.contract(ia, ib, out_layout(out, nb, c.out), nb, c.kind));
  const Program program = lower_cpu(plan);
  const Tensor got = program.run(std::vector<Tensor>{a, b});
  CHECK(got.shape() == out);
  if (is_integer(dtype)) check_exact(got, reference_int(a, b, nb));
  else check_close(got, reference(a, b, nb), std::sqrt(static_cast<double>(std::max<std::int64_t>(c.k, 1))));
  return program.temp_bytes.size() - (plan.buffers.size() - static_cast<std::size_t>(plan.num_inputs));
}

const Kind G = Kind::gemm, B = Kind::batched_gemm, X = Kind::generic;
using M = Mode;

}  // namespace

TEST_CASE("GEMMs match an f64 loop for every operand layout and dtype", "[lower_cpu][contract]") {
  const std::vector<Case> cases = {
      {"row x row", {}, 5, 7, 3, M::row, M::row, Out::row, G},
      {"col x row", {}, 5, 7, 3, M::col, M::row, Out::row, G},
      {"row x col into col", {}, 5, 7, 3, M::row, M::col, Out::col, G},
      {"col x col into padded", {}, 5, 7, 3, M::col, M::col, Out::padded, G},
      {"padded x padded", {}, 6, 9, 4, M::padded, M::padded, Out::row, G},
      {"strided a is staged", {}, 5, 7, 3, M::strided, M::row, Out::row, G},
      {"strided b and output are staged", {}, 5, 7, 3, M::row, M::strided, Out::strided, G},
      {"m = 1", {}, 1, 7, 3, M::row, M::col, Out::row, G},
      {"n = 1", {}, 5, 7, 1, M::col, M::row, Out::col, G},
      {"k = 1 outer product", {}, 5, 1, 3, M::row, M::row, Out::row, G},
      {"m = n = 1 dot product", {}, 1, 9, 1, M::row, M::row, Out::row, G},
      {"m = 0", {}, 0, 7, 3, M::row, M::row, Out::row, G},
      {"k = 0 gives zeros", {}, 5, 0, 3, M::row, M::row, Out::row, G},
      {"n = 0", {}, 5, 7, 0, M::row, M::col, Out::row, G},
      {"larger than a cache block", {}, 70, 90, 80, M::col, M::row, Out::row, G},
  };
  for (DType dtype : numeric_dtypes())
    for (const Case& c : cases) check_case(c, dtype);
}

TEST_CASE("batched GEMMs handle odd batch strides, broadcast batches and odd outputs", "[lower_cpu][contract]") {
  const std::vector<Case> cases = {
      {"one batch dim", {4}, 5, 7, 3, M::row, M::row, Out::row, B},
      {"two batch dims", {2, 3}, 5, 7, 3, M::row, M::col, Out::row, B},
      {"batch dims permuted in a", {2, 3}, 5, 7, 3, M::batch_permuted, M::row, Out::col, B},
      {"odd batch strides", {2, 3}, 5, 7, 3, M::batch_odd, M::batch_odd, Out::padded, B},
      {"odd batch strides, col b", {4}, 5, 7, 3, M::batch_odd, M::col, Out::batch_inner, B},
      {"batch dims permuted in both", {3, 2}, 4, 6, 5, M::batch_permuted, M::batch_permuted, Out::padded, B},
      {"a broadcast over the first batch dim", {3, 2}, 5, 7, 3, M::broadcast, M::row, Out::row, B},
      {"b broadcast, output batch innermost", {4, 2}, 5, 7, 3, M::col, M::broadcast, Out::batch_inner, B},
      {"strided operands", {3}, 5, 7, 3, M::strided, M::strided, Out::strided, B},
      {"k = 1 per batch", {6}, 4, 1, 5, M::row, M::col, Out::row, B},
      {"empty batch", {0, 3}, 4, 5, 6, M::row, M::row, Out::row, B},
      {"larger matrices", {3}, 40, 50, 60, M::row, M::col, Out::row, B},
  };
  for (DType dtype : numeric_dtypes())
    for (const Case& c : cases) check_case(c, dtype);
}

TEST_CASE("generic contractions run a strided loop", "[lower_cpu][contract]") {
  const std::vector<Case> cases = {
      {"hadamard", {1000}, 1, 1, 1, M::row, M::row, Out::row, X},
      {"hadamard with two batch dims", {30, 20}, 1, 1, 1, M::batch_permuted, M::broadcast, Out::batch_inner, X},
      {"small m k n", {5, 2}, 3, 2, 4, M::col, M::broadcast, Out::col, X},
      {"outer products", {300}, 1, 1, 7, M::row, M::row, Out::row, X},
      {"k = 0", {5}, 2, 0, 3, M::row, M::row, Out::row, X},
      {"without batch dims", {}, 4, 3, 5, M::padded, M::strided, Out::strided, X},
      {"large enough to go parallel", {70000}, 1, 1, 1, M::row, M::row, Out::row, X},
  };
  for (DType dtype : numeric_dtypes())
    for (const Case& c : cases) check_case(c, dtype);
}

TEST_CASE("an operand whose layout fits is mapped in place, one that does not is staged", "[lower_cpu][contract]") {
  struct Row {
    Case c;
    DType dtype;
    std::size_t staged;
  };
  const std::vector<Row> rows = {
      {{"f32 row x row", {}, 5, 7, 3, M::row, M::row, Out::row, G}, DType::f32, 0},
      {{"f32 col x col into col", {}, 5, 7, 3, M::col, M::col, Out::col, G}, DType::f32, 0},
      {{"f32 padded", {}, 5, 7, 3, M::padded, M::padded, Out::padded, G}, DType::f32, 0},
      {{"f32 odd batch strides", {2, 3}, 5, 7, 3, M::batch_odd, M::broadcast, Out::row, B}, DType::f32, 0},
      {{"f32 batch dims innermost", {2, 3}, 5, 7, 3, M::batch_permuted, M::row, Out::row, B}, DType::f32, 1},
      {{"f64 col x row", {}, 5, 7, 3, M::col, M::row, Out::row, G}, DType::f64, 0},
      {{"i64 row x col", {2}, 5, 7, 3, M::row, M::col, Out::row, B}, DType::i64, 0},
      {{"f32 strided a", {}, 5, 7, 3, M::strided, M::row, Out::row, G}, DType::f32, 1},
      {{"f32 strided b and output", {}, 5, 7, 3, M::row, M::strided, Out::strided, G}, DType::f32, 2},
      {{"f32 output batch innermost", {3}, 5, 7, 3, M::row, M::row, Out::batch_inner, B}, DType::f32, 1},
      {{"bf16 converts to f32", {}, 5, 7, 3, M::row, M::row, Out::row, G}, DType::bf16, 3},
      {{"i32 converts to i64", {}, 5, 7, 3, M::row, M::row, Out::row, G}, DType::i32, 3},
  };
  for (const Row& r : rows) {
    CAPTURE(r.c.what);
    CHECK(check_case(r.c, r.dtype) == r.staged);
  }
}

TEST_CASE("GEMMs are correct on 2, 3 and 4 threads, over the batch and split into blocks", "[lower_cpu][contract]") {
  const int before = num_threads();
  const std::vector<Case> cases = {
      {"many small matrices", {64}, 8, 9, 10, M::row, M::col, Out::row, B},
      {"few large matrices", {2}, 130, 150, 140, M::col, M::row, Out::col, B},
      {"one large matrix", {}, 150, 140, 130, M::row, M::row, Out::row, G},
      // items that do not share out evenly: each GEMM cut into blocks of rows, or of
      // columns when the output is wider than tall, edges not multiples of the alignment
      {"odd batch, tall outputs split by rows", {3}, 150, 70, 40, M::col, M::row, Out::row, B},
      {"odd batch, wide outputs split by columns", {3}, 40, 70, 150, M::row, M::col, Out::col, B},
      {"one wide padded matrix", {}, 33, 90, 270, M::padded, M::strided, Out::padded, G},
  };
  for (int threads : {4, 2, 3})
    for (DType dtype : {DType::f32, DType::f64, DType::i64})
      for (const Case& c : cases) {
        CAPTURE(threads);
        set_num_threads(threads);
        check_case(c, dtype);
      }
  set_num_threads(before);
}

TEST_CASE("contractions reject bool", "[lower_cpu][contract]") {
  const Tensor a = Tensor::randn({2, 3}, DType::boolean), b = Tensor::randn({3, 4}, DType::boolean);
  PlanBuilder pb(DType::boolean);
  const int ia = pb.input(a), ib = pb.input(b);
  const Plan plan = pb.finish(pb.contract(ia, ib, make_layout({2, 4}), 0));
  CHECK_THROWS_AS(lower_cpu(plan), DTypeError);
  CHECK_THROWS_WITH(lower_cpu(plan), Catch::Contains("not defined on bool"));
}
