#pragma once
// Correctness checks run once per workload before anything is timed (METHOD.md: correct
// first). Results are downloaded byte for byte (no einexpr kernel on the way) and compared
// on the CPU: floats by relative Frobenius error ||got - ref|| / ||ref|| against a float64
// reference, where any non-finite element fails (outputs are poisoned with 0xFF bytes, NaN
// in every float dtype, before the checked run); copies and repeats exactly, byte for byte.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "einexpr/runtime/tensor.hpp"

namespace einexpr::bench {

/// A contiguous tensor's bytes on the host (downloaded once), read element by element.
class HostCopy {
 public:
  explicit HostCopy(const Tensor& t);
  std::int64_t numel() const noexcept { return numel_; }
  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  const std::byte* data() const noexcept { return bytes_.get(); }
  /// Element i in row-major order, as a double (f32, bf16, f16).
  double operator[](std::int64_t i) const;

 private:
  std::unique_ptr<std::byte[]> bytes_;
  std::int64_t numel_ = 0;
  DType dtype_ = DType::f32;
  Shape shape_;
};

/// One comparison's outcome.
struct Check {
  std::string what;  // "einexpr into vs f64 (1024 samples)", ...
  double error = 0;  // relative Frobenius error, or the count of differing elements
  double tolerance = 0;
  bool ok() const noexcept { return error == error && error <= tolerance; }  // NaN fails
  std::string str() const;
};

/// METHOD.md's bounds on the relative error of a result of `dtype` summing `terms`
/// products: f32 1e-6 * sqrt(terms) + 1e-6 (2e-3 when f32 GEMMs run as TF32); f16 2e-3;
/// bf16 1e-2. The same as tests/cuda's, where they overlap.
double tolerance(DType dtype, std::int64_t terms, bool tf32 = false);

/// ||got - want|| / ||want|| over every element (same numel); NaN when an element of got
/// is not finite.
double relative_error(const HostCopy& got, const HostCopy& want);
double relative_error(const HostCopy& got, const std::vector<double>& want);
/// Reference values at some output indices: `count` drawn with `seed` (every index, in
/// order, when count >= numel), each computed once by reference(index) in float64.
struct Samples {
  std::vector<std::int64_t> index;
  std::vector<double> value;
};
Samples reference_samples(std::int64_t numel, std::int64_t count, std::uint64_t seed,
                          const std::function<double(std::int64_t)>& reference);
/// ||got - want|| / ||want|| over the sampled indices; NaN when one of got's is not finite.
double sampled_error(const HostCopy& got, const Samples& samples);
/// How many elements' bytes differ between got and the contiguous CPU tensor `want`
/// (numel() + 1 when their sizes differ).
std::int64_t differing_elements(const HostCopy& got, const Tensor& want);

/// "" when the first elements of `t` (up to 2^20) look like N(0, 1) samples: finite, mean
/// within 6 standard errors of 0, variance within 0.05 + 6 standard errors of 1 (bf16
/// rounding moves it by ~1e-5). Else what is wrong.
std::string check_standard_normal(const Tensor& t);

}  // namespace einexpr::bench
