#include "checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "einexpr/runtime/error.hpp"
#include "einexpr/runtime/storage.hpp"

namespace einexpr::bench {

HostCopy::HostCopy(const Tensor& t) : numel_(t.numel()), dtype_(t.dtype()), shape_(t.shape()) {
  if (!t.is_contiguous()) throw ShapeError("HostCopy: the tensor is not contiguous");
  const std::size_t bytes = t.nbytes();
  bytes_.reset(new std::byte[std::max<std::size_t>(bytes, 1)]);              // uninitialized: GBs
  copy_bytes(bytes_.get(), Device::cpu(), t.data_ptr(), t.device(), bytes);  // waits for the GPU
}

double HostCopy::operator[](std::int64_t i) const {
  const std::byte* p = bytes_.get() + static_cast<std::size_t>(i) * element_size(dtype_);
  switch (dtype_) {
    case DType::f32: {
      float v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case DType::bf16: {
      std::uint16_t h;
      std::memcpy(&h, p, sizeof h);
      const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
      float v;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }
    default: {
      double v;
      convert(p, dtype_, &v, DType::f64, 1);
      return v;
    }
  }
}

std::string Check::str() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %.3g (tolerance %.3g) %s", what.c_str(), error, tolerance, ok() ? "ok" : "FAIL");
  return buf;
}

double tolerance(DType dtype, std::int64_t terms, bool tf32) {
  const double k = std::sqrt(static_cast<double>(std::max<std::int64_t>(terms, 1)));
  switch (dtype) {
    case DType::f64:
      return 1e-12 * k;
    case DType::f32:
      return tf32 ? 2e-3 : 1e-6 * k + 1e-6;
    case DType::f16:
      return 2e-3;
    case DType::bf16:
      return 1e-2;
    default:
      return 0;
  }
}

namespace {

/// Accumulates ||got - want||^2 and ||want||^2; a non-finite got poisons the result.
struct ErrorSum {
  double num = 0, den = 0;
  bool finite = true;
  void add(double got, double want) {
    if (!std::isfinite(got)) finite = false;
    num += (got - want) * (got - want);
    den += want * want;
  }
  double result() const {
    if (!finite) return std::nan("");
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  }
};

}  // namespace

double relative_error(const HostCopy& got, const HostCopy& want) {
  if (got.numel() != want.numel()) return std::nan("");
  ErrorSum e;
  for (std::int64_t i = 0; i < got.numel(); ++i) e.add(got[i], want[i]);
  return e.result();
}

double relative_error(const HostCopy& got, const std::vector<double>& want) {
  if (got.numel() != static_cast<std::int64_t>(want.size())) return std::nan("");
  ErrorSum e;
  for (std::int64_t i = 0; i < got.numel(); ++i) e.add(got[i], want[static_cast<std::size_t>(i)]);
  return e.result();
}

Samples reference_samples(std::int64_t numel, std::int64_t count, std::uint64_t seed,
                          const std::function<double(std::int64_t)>& reference) {
  Samples s;
  if (count >= numel) {
    for (std::int64_t i = 0; i < numel; ++i) s.index.push_back(i);
  } else {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, numel - 1);
    for (std::int64_t k = 0; k < count; ++k) s.index.push_back(pick(rng));
  }
  for (std::int64_t i : s.index) s.value.push_back(reference(i));
  return s;
}

double sampled_error(const HostCopy& got, const Samples& samples) {
  ErrorSum e;
  for (std::size_t k = 0; k < samples.index.size(); ++k) {
    const std::int64_t i = samples.index[k];
    if (i < 0 || i >= got.numel()) return std::nan("");
    e.add(got[i], samples.value[k]);
  }
  return e.result();
}

std::int64_t differing_elements(const HostCopy& got, const Tensor& want) {
  if (!want.device().is_cpu() || !want.is_contiguous() || want.dtype() != got.dtype() || want.numel() != got.numel())
    return got.numel() + 1;
  const std::size_t es = element_size(got.dtype());
  const auto* a = got.data();
  const auto* b = static_cast<const std::byte*>(want.data_ptr());
  constexpr std::size_t chunk = std::size_t{1} << 20;  // elements compared with one memcmp
  std::int64_t differing = 0;
  for (std::size_t begin = 0; begin < static_cast<std::size_t>(got.numel()); begin += chunk) {
    const std::size_t n = std::min(chunk, static_cast<std::size_t>(got.numel()) - begin);
    if (std::memcmp(a + begin * es, b + begin * es, n * es) == 0) continue;
    for (std::size_t i = begin; i < begin + n; ++i)
      if (std::memcmp(a + i * es, b + i * es, es) != 0) ++differing;
  }
  return differing;
}

std::string check_standard_normal(const Tensor& t) {
  const std::int64_t n = std::min<std::int64_t>(t.numel(), std::int64_t{1} << 20);
  if (n == 0) return "";
  const HostCopy h(t.reshape({-1}).slice(0, 0, n));
  double sum = 0, sum2 = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = h[i];
    if (!std::isfinite(v)) return "element " + std::to_string(i) + " is not finite";
    sum += v;
    sum2 += v * v;
  }
  const double mean = sum / static_cast<double>(n), var = sum2 / static_cast<double>(n) - mean * mean;
  const double se = 1 / std::sqrt(static_cast<double>(n));
  char buf[160];
  std::snprintf(buf, sizeof buf, "mean %.4f, variance %.4f over %lld elements: not N(0, 1)", mean, var,
                static_cast<long long>(n));
  if (std::abs(mean) > 6 * se || std::abs(var - 1) > 0.05 + 6 * std::sqrt(2.0) * se) return buf;
  return "";
}

}  // namespace einexpr::bench
