// Sums as accurate as numpy's: every case of reduce_accuracy.inc (f32 sums, means, variances
// and logsumexps of 4 Mi values: one flat run, 1024 rows of 4096, 1024 columns 1024 apart;
// five distributions; dot products; normalizations along rows of 65536) is made here from
// the same counter-based generator as reduce_accuracy.py, and einexpr's largest relative error
// must be at most twice numpy 1.24's on the same values (committed by the script). Beside
// it: bf16 sums against the exact sum rounded to bf16, and f64 sums of a long run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"
#include "reduce_accuracy_data.hpp"

using namespace einexpr;

namespace {

using namespace accuracy;

/// einexpr's largest relative error on a reduction case.
double reduce_error(const Case& c) {
  const std::string shape = c.shape, op = c.op;
  const std::vector<float> v = make(c.dist, N, c.seed);
  const Shape dims = shape == "flat" ? Shape{N} : shape == "rows" ? Shape{1024, 4096} : Shape{4096, 1024};
  const Tensor x = Tensor::from_vector(v, dims);
  const char* pattern = shape == "flat" ? "n ->" : shape == "rows" ? "r n -> r" : "n r -> r";
  const std::vector<float> got = reduce(x, pattern, op).contiguous().to_vector<float>();
  const std::int64_t outputs = static_cast<std::int64_t>(got.size());
  const std::int64_t count = N / outputs;
  double worst = 0;
  for (std::int64_t o = 0; o < outputs; ++o) {
    const float* p = v.data() + (shape == "strided" ? o : o * count);
    worst = std::max(worst, relative(got[static_cast<std::size_t>(o)], exact(op, p, count, shape == "strided" ? outputs : 1)));
  }
  return worst;
}

double dot_error(const Case& c) {
  const std::vector<float> a = make(c.dist, N, c.seed), b = make(c.dist, N, c.seed + 1);
  const float got = einsum(Tensor::from_vector(a, {N}), Tensor::from_vector(b, {N}), "i, i ->").to_vector<float>().at(0);
  ExactSum s;
  for (std::size_t i = 0; i < a.size(); ++i) s.add(static_cast<long double>(a[i]) * b[i]);
  return relative(got, s.value());
}

/// max |got - exact| / max |exact| over 16 rows of 65536 (the script's normwise error).
double norm_error(const Case& c) {
  constexpr std::int64_t rows = 16, n = 65536;
  const std::string kind = c.op;
  const std::vector<float> v = make(c.dist, rows * n, c.seed);
  const Tensor x = Tensor::from_vector(v, {rows, n});
  const Tensor y = kind == "softmax"       ? softmax(x, "r [n]")
                   : kind == "log_softmax" ? log_softmax(x, "r [n]")
                   : kind == "layer_norm"  ? layer_norm(x, "r [n]", 1e-5)
                                           : rms_norm(x, "r [n]", 1e-6);
  const std::vector<float> got = y.contiguous().to_vector<float>();
  long double worst = 0, top = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* p = v.data() + r * n;
    long double m = -INFINITY, scale = 0, shift = 0;
    ExactSum s;
    if (kind == "softmax" || kind == "log_softmax") {
      for (std::int64_t i = 0; i < n; ++i) m = std::max<long double>(m, p[i]);
      for (std::int64_t i = 0; i < n; ++i) s.add(std::exp(p[i] - m));
    } else if (kind == "layer_norm") {
      ExactSum mean, d;
      for (std::int64_t i = 0; i < n; ++i) mean.add(p[i]);
      shift = mean.value() / n;
      for (std::int64_t i = 0; i < n; ++i) d.add((p[i] - shift) * (p[i] - shift));
      scale = 1 / std::sqrt(d.value() / n + 1e-5L);
    } else {
      ExactSum sq;
      for (std::int64_t i = 0; i < n; ++i) sq.add(static_cast<long double>(p[i]) * p[i]);
      scale = 1 / std::sqrt(sq.value() / n + 1e-6L);
    }
    for (std::int64_t i = 0; i < n; ++i) {
      long double want = 0;
      if (kind == "softmax") want = std::exp(p[i] - m) / s.value();
      else if (kind == "log_softmax") want = (p[i] - m) - std::log(s.value());
      else want = (p[i] - shift) * scale;
      worst = std::max(worst, std::fabs(got[static_cast<std::size_t>(r * n + i)] - want));
      top = std::max(top, std::fabs(want));
    }
  }
  return static_cast<double>(worst / top);
}

}  // namespace

TEST_CASE("f32 sums, means, variances, logsumexps, dots and normalizations: at most twice numpy's error",
          "[reduce][accuracy]") {
  REQUIRE(std::size(cases) == 67);  // 54 reductions, 5 dots, 8 normalizations
  for (const Case& c : cases) {
    const std::string shape = c.shape;
    const double error = shape == "norm" ? norm_error(c) : std::string(c.op) == "dot" ? dot_error(c) : reduce_error(c);
    CAPTURE(c.name, error, c.numpy_error);
    CHECK(error <= 2 * c.numpy_error);
  }
}

TEST_CASE("bf16 and f16 sums are the exact sum rounded once", "[reduce][accuracy]") {
  // 65536 values in [0, 1): a float accumulator would lose ~8 bits; the double one rounds once.
  const std::vector<float> v = make("uniform", 65536, 77);
  for (DType dtype : {DType::bf16, DType::f16}) {
    CAPTURE(name(dtype));
    const Tensor x = Tensor::from_vector(v, {65536}).to(dtype);
    const std::vector<float> values = x.to(DType::f32).to_vector<float>();
    ExactSum s;
    for (float f : values) s.add(f);
    const float want = Tensor::from_vector(std::vector<double>{static_cast<double>(s.value())}, {1}).to(dtype).to(DType::f32).to_vector<float>().at(0);
    CHECK(reduce(x, "n ->", "sum").to(DType::f32).to_vector<float>().at(0) == want);
    const float mean = Tensor::from_vector(std::vector<double>{static_cast<double>(s.value() / 65536)}, {1}).to(dtype).to(DType::f32).to_vector<float>().at(0);
    CHECK(reduce(x, "n ->", "mean").to(DType::f32).to_vector<float>().at(0) == mean);
  }
}

TEST_CASE("f64 sums of a long run stay within a few units of the last place", "[reduce][accuracy]") {
  const std::vector<float> v = make("symmetric", N, 99);
  std::vector<double> d(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) d[i] = static_cast<double>(v[i]) * (1 + 0x1p-30 * i);  // not floats
  ExactSum s;
  for (double x : d) s.add(x);
  const double got = reduce(Tensor::from_vector(d, {N}), "n ->", "sum").to_vector<double>().at(0);
  CAPTURE(got, static_cast<double>(s.value()));
  // Compensated blocks: each block's lanes add a few dozen values, so the error is near
  // eps·sqrt(sum x²) (a random walk over blocks); lanes running over the whole run (the sum
  // before) are near 500 times that.
  long double squares = 0;
  for (double x : d) squares += static_cast<long double>(x) * x;
  CHECK(std::fabs(got - s.value()) <= 16 * 0x1p-53 * std::sqrt(squares));
}
