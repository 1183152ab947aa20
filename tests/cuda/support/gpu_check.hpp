#pragma once
// Helpers of the GPU tests: strided random inputs living on the GPU with their CPU twin,
// a raw download that does not use the GPU's own strided kernels, and the comparison of
// a result with an f64 reference (relative Frobenius error by dtype, NaN never passes,
// integers and bool exactly). run_poisoned() runs a Program twice, with every GPU block
// poisoned first with 0xFF bytes (NaN in every float dtype) and then with 0x5A, so an
// element a kernel never writes cannot match the reference in both runs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "allocator_cuda.hpp"
#include "einexpr/codegen/backward.hpp"
#include "einexpr/codegen/lower.hpp"
#include "einexpr/runtime/program.hpp"
#include "einexpr/runtime/storage.hpp"
#include "einexpr/runtime/tensor.hpp"

namespace einexpr::test {

inline const Device cuda0 = Device::cuda(0);

/// A strided view on the GPU and the same view of the same values on the CPU.
struct Input {
  Tensor gpu;
  Tensor cpu;
  Shape shape;
  Strides strides;
};

/// Random values (randn; integers in [-100, 100]; bool a coin) in a buffer of the view's
/// extent plus `offset`, viewed with `strides` at `offset`. `transform`, if given, maps
/// each value first (e.g. to keep logs positive); it is applied before rounding to dtype.
inline Input make_input(const Shape& shape, const Strides& strides, DType dtype, std::uint64_t seed,
                        std::int64_t offset = 0, const std::function<double(double)>& transform = {}) {
  const std::int64_t extent = Layout{shape, strides, offset}.extent();
  Tensor base = Tensor::randn({std::max<std::int64_t>(extent, 1)}, transform ? DType::f64 : dtype, seed);
  if (transform) {
    std::vector<double> v = base.to_vector<double>();
    for (double& x : v) x = transform(x);
    base = Tensor::from_doubles(v, {static_cast<std::int64_t>(v.size())}, dtype);
  }
  Input in;
  in.cpu = base.as_strided(shape, strides, offset);
  in.gpu = base.to(cuda0).as_strided(shape, strides, offset);
  in.shape = shape;
  in.strides = strides;
  return in;
}
inline Input make_input(const Shape& shape, DType dtype, std::uint64_t seed) {
  return make_input(shape, contiguous_strides(shape), dtype, seed);
}

/// The tensor's whole storage copied to the CPU, viewed with the same layout.
inline Tensor download(const Tensor& t) {
  auto host = Storage::allocate(t.storage()->nbytes(), Device::cpu());
  copy_bytes(host->data(), Device::cpu(), t.storage()->data(), t.device(), t.storage()->nbytes());
  return Tensor(host, t.layout(), t.dtype());
}

/// Index helpers for references: row-major odometer over a shape.
inline bool next_index(std::vector<std::int64_t>& index, const Shape& shape) {
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}
inline std::int64_t linear(const std::vector<std::int64_t>& index, const Shape& shape) {
  std::int64_t i = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + index[d];
  return i;
}

/// Relative Frobenius tolerance of a result of `dtype` whose elements sum `terms` products.
inline double tolerance(DType dtype, std::int64_t terms = 1) {
  const double k = std::sqrt(static_cast<double>(std::max<std::int64_t>(terms, 1)));
  switch (dtype) {
    case DType::f64: return 1e-12 * k;
    case DType::f32: return 1e-6 * k + 1e-6;
    case DType::f16: return 2e-3;
    case DType::bf16: return 1e-2;
    case DType::f8_e4m3: return 0.07;
    case DType::f8_e5m2: return 0.13;
    default: return 0;  // integers and bool: exact
  }
}

/// Checks `out` (any device) against `ref` in logical order.
inline void check_close(const Tensor& out, const std::vector<double>& ref, double tol) {
  const Tensor host = out.device().is_cpu() ? out : download(out);
  const std::vector<double> got = host.to_vector<double>();
  REQUIRE(got.size() == ref.size());
  const bool exact = !is_floating(out.dtype());
  double num = 0, den = 0;
  std::int64_t bad = 0, first_bad = -1;
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (std::isnan(ref[i])) {
      ok = std::isnan(got[i]);
    } else if (exact || !std::isfinite(ref[i])) {
      ok = got[i] == ref[i];
    } else {
      ok = std::isfinite(got[i]);
      num += (got[i] - ref[i]) * (got[i] - ref[i]);
      den += ref[i] * ref[i];
    }
    if (!ok && bad++ == 0) first_bad = static_cast<std::int64_t>(i);
  }
  const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  const double first_got = first_bad >= 0 ? got[static_cast<std::size_t>(first_bad)] : 0;
  const double first_ref = first_bad >= 0 ? ref[static_cast<std::size_t>(first_bad)] : 0;
  CAPTURE(name(out.dtype()), got.size(), bad, first_bad, first_got, first_ref, rel, tol);
  CHECK(bad == 0);
  CHECK(rel <= tol);
}

/// Lowers `plan` for the GPU and runs it twice on `inputs`, poisoning every GPU block with
/// 0xFF and then 0x5A bytes first; both results are checked against `ref`.
inline void run_poisoned(const Plan& plan, const std::vector<Tensor>& inputs, const std::vector<double>& ref, double tol) {
  const Program program = lower_cuda(plan, cuda0);
  INFO(program.str());
  for (int poison : {0xFF, 0x5A}) {
    CAPTURE(poison);
    gpu::testing::poison_allocations(poison);
    Tensor out;
    try {
      out = program.run(inputs);
      synchronize(cuda0);
    } catch (...) {
      gpu::testing::poison_allocations(-1);
      throw;
    }
    gpu::testing::poison_allocations(-1);
    CHECK(out.shape() == plan.output_value().layout.shape);
    check_close(out, ref, tol);
  }
}

/// Logical values of a CPU input.
inline std::vector<double> values(const Input& in) { return in.cpu.to_vector<double>(); }

/// The gradients of `forward` (planned for the GPU inputs `xs`), each lowered for cuda:0
/// and run there: run_gradients (backward.hpp) on the GPU.
inline std::vector<Tensor> gpu_gradients(const Plan& forward, const std::vector<Tensor>& xs, const Tensor& y,
                                         const Tensor& dy) {
  std::vector<Tensor> out;
  for (const Gradient& g : gradients(forward)) {
    std::vector<Tensor> sources;
    for (const GradientSource& s : g.sources) {
      switch (s.kind) {
        case GradientSource::Kind::output_gradient: sources.push_back(dy.contiguous()); break;
        case GradientSource::Kind::output: sources.push_back(y.contiguous()); break;
        case GradientSource::Kind::input: sources.push_back(xs.at(static_cast<std::size_t>(s.input))); break;
      }
    }
    out.push_back(lower_cuda(g.plan, cuda0).run(sources));
  }
  return out;
}

}  // namespace einexpr::test
