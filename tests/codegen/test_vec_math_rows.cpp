// The normalizations' row kernels (codegen/lower/cpu/vec_math_rows.hpp) of every table this
// CPU runs (scalar, AVX2, AVX-512), f32 and f64, against an f64 (long double for f64)
// reference: every length around the vector widths, in place and streamed into a buffer one
// element off its alignment, rows far from 0 and rows with -inf.
#include <catch2/catch.hpp>

#include <cmath>
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
