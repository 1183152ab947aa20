// The normalizations' row kernels (codegen/lower/cpu/vec_math_rows.hpp) of every table this
// CPU runs (scalar, AVX2, AVX-512), f32 and f64, against an f64 (long double for f64)
// reference: every length around the vector widths, in place and streamed into a buffer one
// element off its alignment, rows far from 0 and rows with -inf.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "lower/cpu/vec_math.hpp"

namespace vec = einexpr::cpu::vec;
using LD = long double;

namespace {

enum class Kind { softmax, log_softmax, layer_norm, rms_norm };
const char* name(Kind k) {
  const char* names[] = {"softmax", "log_softmax", "layer_norm", "rms_norm"};
  return names[static_cast<int>(k)];
}

std::vector<LD> reference(Kind kind, const std::vector<LD>& x, LD eps) {
  const auto n = static_cast<LD>(x.size());
  LD m = -std::numeric_limits<LD>::infinity(), s = 0, mean = 0, m2 = 0;
  for (LD v : x) m = std::max(m, v);
  for (LD v : x) s += std::exp(v - m);
  for (LD v : x) mean += v / n;
  for (LD v : x) m2 += kind == Kind::rms_norm ? v * v / n : (v - mean) * (v - mean) / n;
  std::vector<LD> y;
  for (LD v : x) {
    switch (kind) {
      case Kind::softmax: y.push_back(std::exp(v - m) / s); break;
      case Kind::log_softmax: y.push_back(v - m - std::log(s)); break;
      case Kind::layer_norm: y.push_back((v - mean) / std::sqrt(m2 + eps)); break;
      case Kind::rms_norm: y.push_back(v / std::sqrt(m2 + eps)); break;
    }
  }
  return y;
}

template <class T>
vec::RowKernel<T> kernel(const vec::RowKernels<T>& k, Kind kind) {
  switch (kind) {
    case Kind::softmax: return k.softmax;
    case Kind::log_softmax: return k.log_softmax;
    case Kind::layer_norm: return k.layer_norm;
    case Kind::rms_norm: return k.rms_norm;
  }
  return nullptr;
}

template <class T>
void check_rows(const vec::RowKernels<T>& kernels, double tol) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  for (Kind kind : {Kind::softmax, Kind::log_softmax, Kind::layer_norm, Kind::rms_norm})
    for (std::int64_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 1024})
      for (int shape = 0; shape < 3; ++shape) {  // plain, far from 0, with -inf (softmax kinds)
        if (shape == 2 && (kind == Kind::layer_norm || kind == Kind::rms_norm)) continue;
        CAPTURE(name(kind), n, shape);
        std::vector<T> x(static_cast<std::size_t>(n));
        for (T& v : x) v = static_cast<T>(shape == 1 ? 1000 + normal(rng) : 3 * normal(rng));
        if (shape == 2 && n > 1) x[0] = -std::numeric_limits<T>::infinity();
        const std::vector<LD> want = reference(kind, std::vector<LD>(x.begin(), x.end()), LD(1e-5));
        std::vector<T> buffer(static_cast<std::size_t>(n) + 64), scratch(static_cast<std::size_t>(n));
        for (bool stream : {false, true}) {
          CAPTURE(stream);
          std::vector<T> in_place = x;
          T* out = stream ? buffer.data() + 1 : in_place.data();  // streamed: off its alignment
          kernel(kernels, kind)(in_place.data(), out, n, T(1e-5), stream, scratch.data());
          if (stream) kernels.fence();
          for (std::int64_t i = 0; i < n; ++i) {
            const LD w = want[static_cast<std::size_t>(i)];
            CAPTURE(i, out[i], static_cast<double>(w));
            const LD scale = kind == Kind::softmax ? std::fabs(w) : std::max<LD>(1, std::fabs(w));
            if (std::isinf(w)) CHECK(static_cast<LD>(out[i]) == w);
            else CHECK(std::fabs(out[i] - w) <= tol * scale);
          }
        }
      }
}

}  // namespace

TEST_CASE("every table's normalization rows match the reference", "[lower_cpu][vec_math]") {
  const vec::Tables tables = vec::runnable_tables();
  for (int t = 0; t < tables.count; ++t) {
    CAPTURE(tables.list[t]->isa);
    check_rows<float>(tables.list[t]->rows_f32, 2e-6);
    check_rows<double>(tables.list[t]->rows_f64, 1e-13);
  }
}

namespace {

// cross_entropy's rows: logsumexp (one pass, each later block's exps against the running max)
// and scaled_exp (scale · exp(x - shift) with shift the row's log-sum-exp), against long
// double. Rows of every length around a vector and a block (2048), with the max rising by 20
// a block (summed again and rescaled), by 4 a block (terms up to e^4 summed as read), spread
// over [-300, 0] (below exp_near_max's -86), far from 0, and with -inf, NaN or +inf in a
// later block.
template <class T>
void check_entropy_rows(const vec::RowKernels<T>& k, double tol_lse, double tol_exp) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  double worst_lse = 0, worst_exp = 0;
  for (std::int64_t n : {1, 7, 8, 9, 16, 17, 100, 2047, 2048, 2049, 4113, 6200})
    for (int shape = 0; shape < 8; ++shape) {
      CAPTURE(n, shape);
      std::vector<T> x(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        const double g = normal(rng), v = static_cast<double>(i);
        const double values[] = {3 * g, 0.01 * v + g, 0.002 * v + 0.1 * g, -300 * std::fabs(std::sin(v)) + g,
                                 1000 + g, g, g, g};
        x[static_cast<std::size_t>(i)] = static_cast<T>(values[shape]);
      }
      const auto late = static_cast<std::size_t>(n - 1 - n / 7);  // in the last block
      if (shape == 5) x[late] = -std::numeric_limits<T>::infinity();
      if (shape == 6) x[late] = std::numeric_limits<T>::quiet_NaN();
      if (shape == 7) x[late] = std::numeric_limits<T>::infinity();
      LD m = -std::numeric_limits<LD>::infinity(), s = 0;
      for (T v : x) m = std::max<LD>(m, v);
      for (T v : x) s += std::exp(static_cast<LD>(v) - m);
      const LD want = std::isinf(m) && m < 0 ? m : m + std::log(s);  // a row of -inf: -inf
      const T got = k.logsumexp(x.data(), n, n % 2 == 1);  // rows from memory (x fetched ahead) or not
      CAPTURE(static_cast<double>(got), static_cast<double>(want));
      const T other = k.logsumexp(x.data(), n, n % 2 == 0);  // the same bits either way
      CHECK(std::memcmp(&got, &other, sizeof(T)) == 0);
      if (shape >= 6) {  // NaN, and +inf: exp(inf - inf), as the reference
        CHECK(std::isnan(got));
        continue;
      }
      if (std::isinf(want)) {
        CHECK(static_cast<LD>(got) == want);
        continue;
      }
      const double err = static_cast<double>(std::fabs(static_cast<LD>(got) - want) / std::max<LD>(1, std::fabs(want)));
      worst_lse = std::max(worst_lse, err);
      CHECK(err <= tol_lse);
      const T scale = T(-1.25);
      std::vector<T> y(static_cast<std::size_t>(n) + 1);
      for (bool stream : {false, true}) {
        T* out = y.data() + (stream ? 1 : 0);  // streamed: off its alignment
        k.scaled_exp(x.data(), out, n, got, scale, stream);
        if (stream) k.fence();
        for (std::int64_t i = 0; i < n; ++i) {
          const LD w = static_cast<LD>(scale) * std::exp(static_cast<LD>(x[static_cast<std::size_t>(i)]) - static_cast<LD>(got));
          CAPTURE(i, out[i], static_cast<double>(w));
          if (w == 0) {
            CHECK(out[i] == 0);
            continue;
          }
          // beside the exp's error, x - shift rounded to T: half an ULP of it, e^d's relative error
          const double d = static_cast<double>(std::fabs(static_cast<LD>(x[static_cast<std::size_t>(i)]) - static_cast<LD>(got)));
          const double e = static_cast<double>(std::fabs(out[i] - w) / std::fabs(w)) - d * std::numeric_limits<T>::epsilon() / 2;
          if (std::fabs(w) >= std::numeric_limits<T>::min()) {
            worst_exp = std::max(worst_exp, e);
            CHECK(e <= tol_exp);
          } else {
            // a subnormal result: within the smallest normal number (the scalar table flushes them)
            CHECK(std::fabs(out[i] - w) <= std::numeric_limits<T>::min());
          }
        }
      }
    }
  WARN("largest relative error: logsumexp " << worst_lse << ", scaled_exp " << worst_exp);
}

}  // namespace

TEST_CASE("every table's cross_entropy rows (logsumexp, scaled_exp) match the reference", "[lower_cpu][vec_math]") {
  const vec::Tables tables = vec::runnable_tables();
  for (int t = 0; t < tables.count; ++t) {
    CAPTURE(tables.list[t]->isa);
    check_entropy_rows<float>(tables.list[t]->rows_f32, 3e-7, 4e-7);
    check_entropy_rows<double>(tables.list[t]->rows_f64, 1e-15, 1e-15);
  }
}
