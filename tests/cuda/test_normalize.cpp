// softmax, log_softmax, layer_norm and rms_norm on the GPU (norm_cuda.cu): torch 1.13's
// values and autograd gradients (tests/lib/data/norm_torch_values.hpp, the CPU's test data),
// the f64 reference on every float dtype and layout with the GPU's allocations poisoned,
// rows short (a warp each) and long (a block each), many rows and one; and the gradients run
// on the GPU against the CPU's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "data/norm_torch_values.hpp"
#include "einexpr/einexpr.hpp"
#include "gpu_check.hpp"
#include "reference.hpp"

using namespace einexpr;
using test::cuda0;

namespace {

const Normalization kinds[] = {Normalization::softmax, Normalization::log_softmax, Normalization::layer_norm,
                               Normalization::rms_norm};

double eps_of(Normalization kind) {
  return kind == Normalization::layer_norm ? 1e-5 : kind == Normalization::rms_norm ? 1e-6 : 0.0;
}

/// Values against expected ones: NaN where NaN, inf exactly, else within tol relative to
/// max(|expected|, floor).
void check_values(const Tensor& t, const std::vector<double>& want, double tol, double floor) {
  const std::vector<double> got = test::download(t).to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i, got[i], want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else if (std::isinf(want[i])) CHECK(got[i] == want[i]);
    else CHECK(std::fabs(got[i] - want[i]) <= tol * std::max(std::fabs(want[i]), floor));
  }
}

}  // namespace

TEST_CASE("normalizations on the GPU match torch: values, edge cases and autograd's gradients", "[cuda][normalize]") {
  for (const torch_values::NormCase& c : torch_values::norm_cases) {
    CAPTURE(c.what, c.pattern, name(c.normalization), c.eps);
    const Tensor x = Tensor::from_doubles(c.input, c.shape, c.dtype).to(cuda0);
    const Tensor y = normalize(x, c.pattern, c.normalization, c.eps, c.lengths);
    synchronize(cuda0);
    CHECK(y.device() == cuda0);
    REQUIRE(y.shape() == x.shape());
    const bool f64 = c.dtype == DType::f64;
    const double floor = c.normalization == Normalization::softmax ? 0.0 : 1.0;
    check_values(y, c.expected, f64 ? 1e-12 : 2e-6, floor);
    if (c.dy.empty()) continue;
    const Compiled compiled(OpSpec::normalize(c.normalization, c.eps, c.lengths), c.pattern);
    const std::vector<Tensor> in = {x};
    const Tensor dy = Tensor::from_doubles(c.dy, c.shape, c.dtype).to(cuda0);
    const std::vector<Tensor> dx = test::gpu_gradients(compiled.plan(in), in, y, dy);
    synchronize(cuda0);
    REQUIRE(dx.size() == 1);
    double largest = 0;
    for (double v : c.dx) largest = std::max(largest, std::fabs(v));
    check_values(dx[0], c.dx, f64 ? 1e-10 : 2e-5, largest);
  }
}

TEST_CASE("normalizations on the GPU match the f64 reference on every float dtype and layout", "[cuda][normalize]") {
  struct Row {
    const char* pattern;
    const char* dims;  // reference::normalize's: every dim, then the kept ones
    const char* kept;
    Shape shape;
    std::int64_t n;  // elements per row
  };
  const Row rows[] = {
      {"b h q [k]", "b h q k", "b h q", {2, 3, 4, 33}, 33},  // short rows: a warp each
      {"b [h] w", "b h w", "b w", {3, 5, 4}, 5},             // a strided row
      {"[b] h [w]", "b h w", "h", {3, 4, 5}, 15},            // a row over two dims apart
      {"r [k]", "r k", "r", {3, 3000}, 3000},                // long rows: a block each
      {"[n]", "n", "", {5000}, 5000},                        // one row
      {"r [k]", "r k", "r", {4100, 7}, 7},                   // many rows, more than one block of warps
  };
  std::uint64_t seed = 1;
  for (const Row& row : rows)
    for (Normalization kind : kinds)
      for (DType dtype : {DType::f32, DType::f64, DType::bf16, DType::f16})
        for (reference::Layout layout : {reference::Layout::contiguous, reference::Layout::transposed,
                                         reference::Layout::sliced}) {
          CAPTURE(row.pattern, shape_str(row.shape), name(kind), name(dtype), reference::name(layout));
          Strides strides = contiguous_strides(row.shape);
          std::int64_t offset = 0;
          if (layout == reference::Layout::transposed) {
            const Shape rev(row.shape.rbegin(), row.shape.rend());
            const Strides r = contiguous_strides(rev);
            strides = Strides(r.rbegin(), r.rend());
          } else if (layout == reference::Layout::sliced) {
            for (auto& s : strides) s *= 2;
            offset = 1;
          }
          const test::Input in = test::make_input(row.shape, strides, dtype, seed++, offset);
          const reference::Result want = reference::normalize(in.cpu, row.dims, row.kept, kind, eps_of(kind));
          for (int poison : {0xFF, 0x5A}) {
            CAPTURE(poison);
            gpu::testing::poison_allocations(poison);
            Tensor out;
            try {
              out = normalize(in.gpu, row.pattern, kind, eps_of(kind));
              synchronize(cuda0);
            } catch (...) {
              gpu::testing::poison_allocations(-1);
              throw;
            }
            gpu::testing::poison_allocations(-1);
            REQUIRE(out.shape() == want.shape);
            test::check_close(out, want.values, test::tolerance(dtype, row.n));
          }
        }
}

TEST_CASE("normalization gradients on the GPU equal the CPU's", "[cuda][normalize]") {
  struct Row {
    const char* pattern;
    Shape shape;
  };
  const Row rows[] = {{"b h [k]", {3, 4, 50}}, {"[b] h [w]", {3, 4, 5}}, {"r [k]", {2, 2500}}};
  std::uint64_t seed = 100;
  for (const Row& row : rows)
    for (Normalization kind : kinds)
      for (DType dtype : {DType::f32, DType::f64}) {
        CAPTURE(row.pattern, name(kind), name(dtype));
        const test::Input x = test::make_input(row.shape, dtype, seed++);
        const test::Input dy = test::make_input(row.shape, dtype, seed++);
        const Compiled f(OpSpec::normalize(kind, eps_of(kind)), row.pattern);
        const std::vector<Tensor> cpu_in = {x.cpu}, gpu_in = {x.gpu};
        const Tensor y_cpu = f.run(cpu_in), y_gpu = f.run(gpu_in);
        const std::vector<Tensor> want = run_gradients(f.plan(cpu_in), cpu_in, y_cpu, dy.cpu);
        const std::vector<Tensor> got = test::gpu_gradients(f.plan(gpu_in), gpu_in, y_gpu, dy.gpu);
        synchronize(cuda0);
        REQUIRE(got.size() == 1);
        REQUIRE(want.size() == 1);
        test::check_close(got[0], want[0].to_vector<double>(), dtype == DType::f64 ? 1e-11 : 1e-5);
      }
}
